"""The shared visual helpers (vyre_vk/ops/visual/pixels.py): the wide 16.16 multiply against
Python ints on edge operands, the vyre-primitives packed_rgba_map identity program, and the
host-side Rust f32 conversions (round ties away, saturating casts, f32 products)."""
import numpy as np
import pytest

from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.visual import pixels as px

from ..harness import run_equal
from ..oracles.u32_edges import EDGES, edgy_u32


@pytest.mark.parametrize("shift", [1, 8, 16, 31])
def test_wide_mul_shr_keeps_the_high_half(shift, vk_device):
    rng = np.random.default_rng(shift)
    a = np.concatenate([np.repeat(EDGES, EDGES.size), edgy_u32(rng, 200)])
    b = np.concatenate([np.tile(EDGES, EDGES.size), edgy_u32(rng, 200)])
    i = Expr.gid_x()
    body = [Node.if_then(Expr.lt(i, Expr.u32(a.size)), [
        Node.store("o", i, px.wide_mul_shr_u32(Expr.load("a", i), Expr.load("b", i), shift))])]
    p = Program.wrapped([BufferDecl.read("a", 0, DataType.U32).with_count(a.size),
                         BufferDecl.read("b", 1, DataType.U32).with_count(a.size),
                         BufferDecl.output("o", 2, DataType.U32).with_count(a.size)], (256, 1, 1),
                        [wrap_anonymous("test::wide_mul", body)])
    _, ref = run_equal(p, vk_device, {"a": a, "b": b})
    assert ref["o"].tolist() == [((x * y) >> shift) & 0xFFFFFFFF for x, y in zip(a.tolist(), b.tolist())]


def test_wide_mul_rejects_a_shift_outside_1_31():
    with pytest.raises(OpParamError, match="Fix: "):
        px.wide_mul_shr_u32(Expr.u32(1), Expr.u32(1), 32)


def test_packed_rgba_map_is_the_identity(vk_device):
    p = px.packed_rgba_map("in", "out", 300)
    assert p.workgroup_size == (256, 1, 1) and p.entry[0].generator == px.PACKED_RGBA_MAP_OP_ID
    words = edgy_u32(np.random.default_rng(0), 300)
    _, ref = run_equal(p, vk_device, {"in": words, "out": np.zeros(300, np.uint32)})
    np.testing.assert_array_equal(ref["out"], words)
    with pytest.raises(OpParamError, match="used twice. Fix: "):
        px.packed_rgba_map("a", "a", 4)


def test_rust_float_conversions():
    assert [px.round_half_away(x) for x in (0.5, -0.5, 1.5, 2.5, 0.49999999999999994)] == [1.0, -1.0, 2.0, 3.0, 0.0]
    assert px.f32_round_to_u32(float("nan")) == 0 and px.f32_round_to_u32(1e20) == 2**32 - 1
    assert px.f32_round_to_i32(-1e20) == -(2**31) and px.f32_round_to_i32(2.5) == 3
    assert px.f32_to_fixed_16_16(0.1) == 6554                  # f32(0.1) * 65536 = 6553.6001
    assert px.f32_to_fixed_16_16(1e38) == 2**32 - 1            # the f32 product overflows to inf
    assert px.f32_to_fixed_16_16(float(np.float32(1.00001))) == 65537


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, "4", True])
def test_check_u32_refuses_non_u32(bad):
    with pytest.raises(OpParamError, match="Fix: "):
        px.check_u32("demo", "n", bad)


def test_module_doctests():
    import doctest
    import importlib
    for name in ("pixels", "blur", "box_shadow", "composite", "downsample", "filter_chain", "glass", "gradient",
                 "upsample"):
        module = importlib.import_module(f"vyre_vk.ops.visual.{name}")
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, name
