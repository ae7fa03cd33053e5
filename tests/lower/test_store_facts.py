"""What the lowerer proves about stores and barriers (the stream pass's tile copies depend on it):
a store whose index is provably inside the buffer skips its check, a store of a value that is
already canonical skips vyre_canon, and a barrier fences storage buffers (and marks them
``coherent``) only when the stage both writes and reads one. Each fact is checked in the GLSL and,
on Vulkan, against the reference with the inputs that would expose a wrong one (NaN payloads,
subnormals, a value exchanged through a storage buffer across the barrier)."""
from __future__ import annotations

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.ir.expr import LitF32
from vyre_vk.lower import bounds
from vyre_vk.lower.base import canonical_expr, canonical_vars, exchanged_buffers
from vyre_vk.lower.glsl import lower

F32, U32 = DataType.F32, DataType.U32
WG = 8


def lid():
    return Expr.local_x()


def tile_program(value_of_load: bool = True) -> Program:
    """Each lane copies a[lane] (or a[lane] * 0.5, not canonical) into workgroup memory at a
    proven index, a barrier, then writes the neighbour's copy to out."""
    lane = Expr.var("lane")
    v = Expr.load("a", lane) if value_of_load else Expr.mul(Expr.load("a", lane), Expr.f32(0.5))
    body = [Node.let_bind("lane", lid()),
            Node.let_bind("v", v),
            Node.store("t", Expr.bitxor(lane, Expr.u32(1)), Expr.var("v")),
            Node.barrier(),
            Node.store("out", Expr.add(Expr.mul(Expr.workgroup_x(), Expr.u32(WG)), lane), Expr.load("t", lane))]
    bufs = [BufferDecl.read("a", 0, F32).with_count(WG), BufferDecl.output("out", 1, F32).with_count(WG),
            BufferDecl.workgroup("t", WG, F32)]
    return Program.wrapped(bufs, (WG, 1, 1), [wrap_anonymous("t", body)])


def test_local_ids_and_xor_have_ranges():
    env = {bounds.lid_key(0): (0, 7)}.get
    assert bounds.interval(lid(), env) == (0, 7)
    assert bounds.interval(lid(), {}.get) is None
    x = Expr.bitxor(Expr.var("i"), Expr.u32(1))
    assert bounds.interval(x, {"i": (0, 5)}.get) == (0, 7)  # 5 ^ 1 = 4, 6 ^ 1 = 7: at most 2^3 - 1
    assert bounds.interval(Expr.bitor(Expr.var("i"), Expr.u32(8)), {"i": (0, 3)}.get) == (0, 15)


def test_canonical_values():
    a = Expr.load("a", Expr.u32(0))
    body = [Node.let_bind("x", a), Node.let_bind("y", Expr.var("x")), Node.let_bind("z", a),
            Node.assign("z", Expr.mul(a, a)),  # one definition is arithmetic: not trusted
            Node.let_bind("s", Expr.f32(1.5)), Node.let_bind("d", LitF32(0x00000001))]  # d: a subnormal
    p = Program.wrapped([BufferDecl.read("a", 0, F32).with_count(1)], (1, 1, 1), [wrap_anonymous("t", body)])
    canon = canonical_vars(p)
    assert {"x", "y", "s"} <= canon and not {"z", "d"} & canon
    assert not canonical_expr(LitF32(0x7FC00001), canon) and canonical_expr(LitF32(0x7FC00000), canon)
    assert canonical_expr(LitF32(0x80000000), canon) and not canonical_expr(Expr.mul(a, a), canon)


def test_tile_copies_are_unchecked_and_not_recanonicalised():
    src = lower(tile_program()).glsl
    assert "vk_stnc_t(" in src and "vk_st_t(" not in src  # lane ^ 1 <= 7 < 8; a load's value
    assert "vk_stc_out(" in src  # wg.x * 8 + lane: not proven in range; a workgroup load: canonical
    src2 = lower(tile_program(value_of_load=False)).glsl
    assert "vk_stn_t(" in src2 and "vk_stnc_t(" not in src2  # a product is canonicalised


def test_barrier_fences_storage_only_when_exchanged():
    src = lower(tile_program()).glsl
    assert "memoryBarrierBuffer" not in src and "coherent" not in src
    assert exchanged_buffers(tile_program()) == frozenset()
    lane = Expr.var("lane")
    body = [Node.let_bind("lane", lid()), Node.store("out", lane, Expr.load("a", lane)), Node.barrier(),
            Node.store("res", lane, Expr.load("out", Expr.bitxor(lane, Expr.u32(1))))]
    bufs = [BufferDecl.read("a", 0, F32).with_count(WG), BufferDecl.read_write("out", 1, F32).with_count(WG),
            BufferDecl.output("res", 2, F32).with_count(WG)]
    p = Program.wrapped(bufs, (WG, 1, 1), [wrap_anonymous("t", body)])
    assert exchanged_buffers(p) == {"out"}
    src = lower(p).glsl
    assert "memoryBarrierBuffer(); barrier();" in src
    assert "coherent buffer vk_buf_out" in src and "coherent buffer vk_buf_res" not in src


@pytest.mark.parametrize("value_of_load", [True, False])
def test_vulkan_matches_reference_with_nan_payloads_and_subnormals(vk_device, value_of_load):
    p = tile_program(value_of_load)
    bits = np.array([0x7FC00123, 0x00000003, 0x80000005, 0x3F800000, 0xFF800000, 0x7F800001, 0x00800000, 0x80000000],
                    dtype=np.uint32)
    a = bits.view(np.float32)
    want = reference.run(p, {"a": a})["out"]
    got = vk_device.compile(p, optimize=False).run({"a": a})["out"]
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    # lane 0 reads lane 1's copy of a subnormal (+0), lane 1 lane 0's NaN payload (the canonical NaN)
    assert want.view(np.uint32)[:2].tolist() == [0, 0x7FC00000]
