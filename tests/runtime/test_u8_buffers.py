"""U8 / I8 buffers (IR-SPEC 10.2) through the whole pipeline: validation, the reference, the lowering,
the runtime's packing, the optimiser, emit/aot.

Every program runs on the reference and on Vulkan (as written and optimised) and both are compared
with a NumPy oracle written from the semantics: a byte buffer is indexed by byte, a load gives the
byte zero-extended (I8: sign-extended) and 0 past the bound length (the padding bytes of the last
word included), a store past it is dropped, BufLen is the byte count, narrowing casts keep the low
byte. Byte stores from many invocations into shared words must all land (vyre's own GPU store is a
plain read-modify-write of the word, which loses bytes there). The tests of loads and stores run on
both store paths (``byte_device``): ``uint8_t`` arrays where the device has 8-bit storage (lavapipe and
the H200 do) and compare-and-swap on words (``VYRE_VK_8BIT=off``, and every device without it).
"""
from __future__ import annotations

import json
import os
from dataclasses import replace

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.compile import DeviceLimits
from vyre_vk.errors import InputError
from vyre_vk.ir import (BufferDecl, DataType, Expr, Node, Program, ValidationError, validate, wrap_anonymous)
from vyre_vk.ir.validate import TypeMismatch
from vyre_vk.runtime import Device, kp_bridge

from tests.fakes import ManagerWith

U8, I8, U32, I32, F32, BOOL = DataType.U8, DataType.I8, DataType.U32, DataType.I32, DataType.F32, DataType.Bool
v, u = Expr.var, Expr.u32
MODES = (False, True)  # Device.compile(optimize=...)


@pytest.fixture(scope="module", params=["8bit", "cas"])
def byte_device(request, vk_device):
    """vk_device (byte stores as single uint8_t stores where it has 8-bit storage), then a device on
    the same index whose byte stores are compare-and-swap loops on words (VYRE_VK_8BIT=off)."""
    if request.param == "8bit":
        if not vk_device.limits.storage_8bit:
            pytest.skip(f"{vk_device.name} has no storageBuffer8BitAccess")
        yield vk_device
        return
    old = os.environ.get("VYRE_VK_8BIT")
    os.environ["VYRE_VK_8BIT"] = "off"
    try:
        dev = Device(vk_device.index)
    finally:
        os.environ.pop("VYRE_VK_8BIT") if old is None else os.environ.__setitem__("VYRE_VK_8BIT", old)
    assert not dev.limits.storage_8bit
    yield dev
    dev.close()


def _same(got: dict, want: dict) -> None:
    assert set(got) == set(want)
    for name, w in want.items():
        assert got[name].dtype == w.dtype and got[name].tolist() == w.tolist(), name


def run_all(device, program: Program, inputs: dict, oracle: dict) -> None:
    """The reference and Vulkan (as written, optimised) all equal the oracle, exactly."""
    want = reference.run(program, inputs)
    _same(want, oracle)
    for opt in MODES:
        _same(device.compile(program, optimize=opt).run(inputs), oracle)


def _prog(buffers, body, wg=(64, 1, 1)) -> Program:
    return Program.wrapped(buffers, wg, [wrap_anonymous("test::u8", body)])


def _ext(a: np.ndarray, i: int) -> int:
    """Byte i of `a` widened, 0 past its end (the load rule)."""
    return int(a[i]) if i < a.size else 0


# ----------------------------------------------------------------------------- loads, stores, BufLen
COPY = _prog(
    [BufferDecl.read("a", 0, U8), BufferDecl.read_write("o", 1, U8), BufferDecl.read_write("wide", 2, U32),
     BufferDecl.read_write("swide", 3, I32), BufferDecl.output("lens", 4, U32).with_count(3)],
    [Node.let_bind("i", Expr.gid_x()),
     Node.if_then(Expr.eq(v("i"), u(0)), [Node.store("lens", u(0), Expr.buf_len("a")),
                                          Node.store("lens", u(1), Expr.buf_len("o")),
                                          Node.store("lens", u(2), Expr.buf_len("wide"))]),
     Node.let_bind("x", Expr.load("a", v("i"))),  # a U8 variable
     Node.if_then(Expr.lt(v("i"), Expr.buf_len("o")), [
         Node.store("o", v("i"), Expr.cast(U8, Expr.add(Expr.cast(U32, v("x")), Expr.mul(v("i"), u(37)))))]),
     Node.if_then(Expr.lt(v("i"), Expr.buf_len("wide")), [
         Node.store("wide", v("i"), Expr.cast(U32, v("x"))),
         Node.store("swide", v("i"), Expr.cast(I32, Expr.cast(I8, v("x"))))])])


@pytest.mark.parametrize("n_a,n_o,n_w", [(1, 1, 4), (5, 7, 9), (13, 6, 17), (8, 8, 8), (3, 1030, 12), (6, 2, 8)])
def test_loads_stores_buflen_at_odd_lengths(byte_device, n_a, n_o, n_w):
    rng = np.random.default_rng(n_a * 1000 + n_o)
    a = rng.integers(0, 256, n_a).astype(np.uint8)
    o = rng.integers(0, 256, n_o).astype(np.uint8)
    wide, swide = np.zeros(n_w, np.uint32), np.zeros(n_w, np.int32)
    want_o = np.array([(_ext(a, i) + 37 * i) & 0xFF for i in range(n_o)], np.uint8)
    want_w = np.array([_ext(a, i) for i in range(n_w)], np.uint32)
    want_s = np.array([_ext(a, i) - 256 * (_ext(a, i) >= 128) for i in range(n_w)], np.int32)
    run_all(byte_device, COPY, {"a": a, "o": o, "wide": wide, "swide": swide},
            {"o": want_o, "wide": want_w, "swide": want_s, "lens": np.array([n_a, n_o, n_w], np.uint32)})


SCATTER = _prog(
    [BufferDecl.read("k", 0, U32).with_count(1), BufferDecl.read_write("o", 1, U8)],
    [Node.let_bind("i", Expr.gid_x()), Node.let_bind("n", Expr.buf_len("o")),
     Node.if_then(Expr.lt(v("i"), v("n")), [
         Node.store("o", Expr.rem(Expr.mul(v("i"), Expr.load("k", u(0))), v("n")), Expr.cast(U8, v("i")))])])


@pytest.mark.parametrize("n,k", [(4099, 1), (4099, 1031), (1030, 7), (3, 2)])
def test_byte_stores_from_many_invocations_into_shared_words_are_exact(byte_device, n, k):
    # invocation i writes byte (i*k) % n (a permutation: gcd(k, n) = 1): with k = 1 four neighbours
    # share each word, with k = 1031 a word's bytes come from four different workgroups
    o = np.full(n, 0xA5, np.uint8)
    want = np.zeros(n, np.uint8)
    want[(np.arange(n) * k) % n] = np.arange(n) & 0xFF
    for _ in range(2):  # a lost byte shows up as 0xA5
        run_all(byte_device, SCATTER, {"k": np.array([k], np.uint32), "o": o}, {"o": want})


def test_stores_keep_the_other_bytes_of_a_word(byte_device):
    # only even bytes are stored: the odd ones (same words) keep the uploaded values exactly
    p = _prog([BufferDecl.read_write("o", 0, U8)],
              [Node.let_bind("i", Expr.mul(Expr.gid_x(), u(2))),
               Node.if_then(Expr.lt(v("i"), Expr.buf_len("o")), [Node.store("o", v("i"), Expr.cast(U8, u(0x1FF)))])])
    o = np.arange(11, dtype=np.uint8) + 100
    want = o.copy()
    want[::2] = 0xFF
    run_all(byte_device, p, {"o": o}, {"o": want})


OOB = _prog(
    [BufferDecl.read("idx", 0, U32), BufferDecl.read_write("o", 1, U8), BufferDecl.read_write("back", 2, U32)],
    [Node.if_then(Expr.eq(Expr.gid_x(), u(0)), [
        Node.loop_for("j", u(0), Expr.buf_len("idx"), [
            Node.store("o", Expr.load("idx", v("j")), Expr.cast(U8, Expr.add(v("j"), u(0xF1))))]),
        Node.loop_for("j", u(0), Expr.buf_len("idx"), [
            Node.store("back", v("j"), Expr.cast(U32, Expr.load("o", Expr.load("idx", v("j")))))])])],
    wg=(1, 1, 1))


@pytest.mark.parametrize("n", [1, 5, 6, 7, 8])
def test_out_of_bounds_bytes_read_zero_and_stores_there_are_dropped(byte_device, n):
    # the padding bytes of the last word (n..) are out of bounds too: a store there is dropped and
    # a later load of it (same invocation) still reads 0
    idx = np.array([0, n - 1, n, n + 1, n + 2, n + 3, 0xFFFFFFFF, 0x7FFFFFFF, n - 1], np.uint32)
    o = np.full(n, 9, np.uint8)
    want_o = o.copy()
    for j, i in enumerate(idx):
        if i < n:
            want_o[i] = (j + 0xF1) & 0xFF
    back = np.array([_ext(want_o, int(i)) for i in idx], np.uint32)
    run_all(byte_device, OOB, {"idx": idx, "o": o, "back": np.zeros(idx.size, np.uint32)}, {"o": want_o, "back": back})


# ----------------------------------------------------------------------------- I8, casts
def _wrap8(x: int) -> int:
    x &= 0xFF
    return x - 256 if x >= 128 else x


CAST_TARGETS = {U8: (U8, I8, U32, I32, BOOL), I8: (U8, I8, U32, I32, BOOL)}


def _casts_program() -> Program:
    bufs = [BufferDecl.read("a", 0, U8), BufferDecl.read("b", 1, I8)]
    body = [Node.let_bind("i", Expr.gid_x())]
    for src, name in ((U8, "a"), (I8, "b")):
        for dst in CAST_TARGETS[src]:
            out = f"{name}_to_{dst.value}"
            bufs.append(BufferDecl.read_write(out, len(bufs), dst))
            body.append(Node.if_then(Expr.lt(v("i"), Expr.buf_len(out)), [
                Node.store(out, v("i"), Expr.cast(dst, Expr.load(name, v("i"))))]))
    # into byte buffers from the 32-bit types: the low byte (I8: read signed)
    for src, lit in ((U32, u(0x1234_5680)), (I32, Expr.i32(-129)), (BOOL, Expr.bool(True))):
        for dst in (U8, I8):
            out = f"{src.value}_to_{dst.value}"
            bufs.append(BufferDecl.read_write(out, len(bufs), dst))
            val = Expr.cast(dst, Expr.add(lit, Expr.cast(src, v("i"))) if src is not BOOL else lit)
            body.append(Node.if_then(Expr.lt(v("i"), Expr.buf_len(out)), [Node.store(out, v("i"), val)]))
    # a select of I8 values, a let of one, and i8 -> u32 (the sign-extended word)
    bufs.append(BufferDecl.read_write("sel", len(bufs), U32))
    body += [Node.let_bind("y", Expr.select(Expr.eq(Expr.bitand(v("i"), u(1)), u(1)), Expr.load("b", v("i")),
                                            Expr.cast(I8, u(200)))),
             Node.if_then(Expr.lt(v("i"), Expr.buf_len("sel")), [Node.store("sel", v("i"), Expr.cast(U32, v("y")))])]
    return _prog(bufs, body)


CASTS = _casts_program()


def test_i8_loads_sign_extend_and_every_byte_cast_matches_the_oracle(byte_device):
    n = 7
    a = np.array([0, 1, 127, 128, 200, 255, 77], np.uint8)
    b = a.view(np.int8).copy()
    inputs = {"a": a, "b": b}
    want = {}
    for src, name, vals in ((U8, "a", [int(x) for x in a]), (I8, "b", [int(x) for x in b])):
        for dst in CAST_TARGETS[src]:
            out = f"{name}_to_{dst.value}"
            inputs[out] = np.zeros(n, dst.numpy)
            conv = {U8: lambda x: x & 0xFF, I8: _wrap8, U32: lambda x: x & 0xFFFFFFFF, I32: lambda x: x,
                    BOOL: lambda x: int(x != 0)}[dst]
            want[out] = np.array([conv(x) for x in vals], dst.numpy)
    for src, base in ((U32, 0x1234_5680), (I32, -129), (BOOL, None)):
        for dst in (U8, I8):
            out = f"{src.value}_to_{dst.value}"
            inputs[out] = np.zeros(n, dst.numpy)
            vals = [1 if base is None else base + i for i in range(n)]
            want[out] = np.array([(x & 0xFF) if dst is U8 else _wrap8(x) for x in vals], dst.numpy)
    inputs["sel"] = np.zeros(n, np.uint32)
    want["sel"] = np.array([(int(b[i]) if i % 2 else _wrap8(200)) & 0xFFFFFFFF for i in range(n)], np.uint32)
    run_all(byte_device, CASTS, inputs, want)


# ----------------------------------------------------------------------------- workgroup memory
def test_workgroup_byte_buffer_shared_words_and_length(vk_device):
    # 61 bytes (16 words) of shared memory: each lane stores its byte, then reads its neighbour's;
    # lanes 61..63 read past the end (0); BufLen is the declared 61
    p = _prog([BufferDecl.workgroup("sh", 61, U8), BufferDecl.output("out", 0, U32).with_count(128)],
              [Node.let_bind("l", Expr.local_x()),
               Node.if_then(Expr.lt(v("l"), u(61)), [
                   Node.store("sh", v("l"), Expr.cast(U8, Expr.add(Expr.mul(v("l"), u(3)), Expr.workgroup_x())))]),
               Node.barrier(),
               Node.store("out", Expr.gid_x(), Expr.add(Expr.cast(U32, Expr.load("sh", Expr.rem(Expr.add(v("l"), u(1)),
                                                                                                  u(64)))),
                                                       Expr.shl(Expr.buf_len("sh"), u(8))))])
    want = np.zeros(128, np.uint32)
    for g in range(128):
        w, l = divmod(g, 64)
        m = (l + 1) % 64
        want[g] = (((m * 3 + w) & 0xFF) if m < 61 else 0) + (61 << 8)
    run_all(vk_device, p, {}, {"out": want})


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize("body,message", [
    ([Node.store("o", u(0), u(1))], "storing a u32 value into `o` of u8"),
    ([Node.let_bind("x", Expr.add(Expr.load("a", u(0)), Expr.load("a", u(1))))], "Add does not accept a u8"),
    ([Node.let_bind("x", Expr.eq(Expr.load("a", u(0)), Expr.cast(U8, u(1))))], "Eq does not accept a u8"),
    ([Node.let_bind("x", Expr.cast(F32, Expr.load("a", u(0))))], "cannot cast u8 to f32 (V012)"),
    ([Node.let_bind("x", Expr.cast(I8, Expr.f32(1.0)))], "cannot cast f32 to i8 (V012)"),
    ([Node.let_bind("x", Expr.atomic_add("o", u(0), u(1)))], "atomics are u32 only (V014)"),
    ([Node.let_bind("x", Expr.load("a", Expr.cast(U8, u(0))))], "load index into `a` has type u8"),
    ([Node.if_then(Expr.load("a", u(0)), [])], "if condition has type u8"),
    ([Node.let_bind("x", Expr.load("a", u(0))), Node.assign("x", u(3))], "assigning a u32 value to `x`"),
])
def test_validation_of_byte_values(body, message):
    p = _prog([BufferDecl.read("a", 0, U8), BufferDecl.read_write("o", 1, U8).with_count(4)], body)
    with pytest.raises(ValidationError) as info:
        validate(p)
    assert message in str(info.value) and "Fix:" in str(info.value)
    assert isinstance(info.value, TypeMismatch)


def test_byte_values_validate_through_lets_selects_and_stores():
    p = _prog([BufferDecl.read("a", 0, U8), BufferDecl.read_write("o", 1, U8).with_count(4),
               BufferDecl.read_write("s", 2, I8).with_count(4)],
              [Node.let_bind("x", Expr.load("a", u(0))), Node.assign("x", Expr.cast(U8, u(300))),
               Node.store("o", u(1), Expr.select(Expr.bool(True), v("x"), Expr.load("a", u(2)))),
               Node.store("s", u(0), Expr.cast(I8, v("x")))])
    validate(p)
    out = reference.run(p, {"a": np.array([1, 2, 3], np.uint8), "o": np.zeros(4, np.uint8), "s": np.zeros(4, np.int8)})
    assert out["o"].tolist() == [0, 44, 0, 0] and out["s"].tolist() == [44, 0, 0, 0]


# ----------------------------------------------------------------------------- host side
ECHO = _prog([BufferDecl.read("a", 0, U8), BufferDecl.read_write("o", 1, I8),
              BufferDecl.output("r", 2, U8).with_count(6).with_output_byte_range(1, 4)],
             [Node.let_bind("i", Expr.gid_x()),
              Node.if_then(Expr.lt(v("i"), Expr.buf_len("o")), [Node.store("o", v("i"), Expr.cast(I8, Expr.load("a", v("i"))))]),
              Node.if_then(Expr.lt(v("i"), u(6)), [Node.store("r", v("i"), Expr.cast(U8, Expr.add(v("i"), u(250))))])])


def test_host_arrays_bytes_lists_device_arrays_and_byte_ranges(vk_device):
    want = {"o": np.array([104, 105, -1, 0, 0], np.int8), "r": np.array([251, 252, 253], np.uint8)}
    kernel = vk_device.compile(ECHO)
    for a in (b"hi\xff", [104, 105, 255], np.array([104, 105, 255], np.uint8), vk_device.array(np.frombuffer(b"hi\xff", np.uint8))):
        o = np.zeros(5, np.int8)
        _same(kernel.run({"a": a, "o": o}), want)
        if not hasattr(a, "numpy"):
            _same(reference.run(ECHO, {"a": a, "o": o}), want)
    dev_o = vk_device.array(np.full(5, -3, np.int8))
    assert dev_o.numpy().tolist() == [-3] * 5 and dev_o.numpy().dtype == np.int8 and dev_o.size == 5
    with pytest.raises(InputError, match="expected dtype uint8, got uint32"):
        kernel.run({"a": np.array([1, 2], np.uint32), "o": np.zeros(5, np.int8)})
    with pytest.raises(InputError, match="expected dtype int8"):
        reference.run(ECHO, {"a": b"x", "o": np.zeros(5, np.uint8)})
    with pytest.raises(InputError, match="do not convert exactly to uint8"):
        kernel.run({"a": [1, 256], "o": np.zeros(5, np.int8)})


def test_packed_words_are_the_byte_array_padded():
    b = np.arange(1, 8, dtype=np.uint8)
    w = kp_bridge.packed_words(b)
    assert w.dtype == np.uint32 and w.tolist() == [0x04030201, 0x00070605]
    assert kp_bridge.byte_view(w, 7, np.dtype(np.int8)).tolist() == list(range(1, 8))
    assert kp_bridge.packed_words(np.array([-1], np.int8)).tolist() == [0xFF]


def test_lowering_passes_byte_counts_as_spec_constants_in_binding_order():
    from vyre_vk.lower import lower
    low = lower(CASTS)
    assert low.byte_lengths == tuple(b.name for b in sorted(CASTS.buffers, key=lambda b: b.binding)
                                     if b.element in (U8, I8))
    assert "layout(constant_id = 0) const uint vk_nb_a = 4294967295u;" in low.glsl
    assert "atomicCompSwap" in low.glsl and "byte_buffers" in low.features


def test_emit_manifest_and_aot_run_a_byte_program(vk_device, tmp_path):
    from vyre_vk import aot
    from vyre_vk.compile import Options
    from vyre_vk.emit import emit_program

    out = emit_program(COPY, "copy", tmp_path, options=Options(passes=False))
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert [(b["name"], b["dtype"], b["storage"]) for b in m["buffers"]][:2] == [("a", "u8", "uint8"), ("o", "u8", "uint8")]
    assert m["stages"][0]["spec_constants"] == [{"constant_id": 0, "buffer": "a", "value": "count"},
                                                {"constant_id": 1, "buffer": "o", "value": "count"}]
    assert out.manifest == m
    a, o = np.array([7, 250, 3, 1, 9], np.uint8), np.zeros(6, np.uint8)
    inputs = {"a": a, "o": o, "wide": np.zeros(7, np.uint32), "swide": np.zeros(7, np.int32)}
    with aot.load(tmp_path, manager=vk_device.manager) as mod:
        _same(mod.run(inputs), reference.run(COPY, inputs))
    # stores a byte at a time: the manifest says so, and a device without 8-bit storage is refused
    limits = replace(DeviceLimits(), storage_8bit=True)
    emit_program(COPY, "copy8", tmp_path / "b8", options=Options(passes=False, limits=limits))
    m = json.loads((tmp_path / "b8" / "manifest.json").read_text())
    assert m["options"]["limits"]["storage_8bit"] is True
    assert "uint8_t b_o[]" in (tmp_path / "b8" / m["stages"][0]["comp"]).read_text()
    if vk_device.limits.storage_8bit:
        with aot.load(tmp_path / "b8", manager=vk_device.manager) as mod:
            _same(mod.run(inputs), reference.run(COPY, inputs))
    mod = aot.load(tmp_path / "b8", manager=ManagerWith(vk_device.manager, storage_buffer_8bit=False))
    with pytest.raises(aot.ManifestError, match="8-bit storage.*Fix: emit again with --storage-8bit off"):
        mod.run(inputs)


@pytest.mark.parametrize("obj", ["vyre_vk.lower.bytes", "vyre_vk.runtime.kp_bridge.packed_words",
                                 "vyre_vk.ops.hash.fnv1a32.fnv1a32_program_u8", "vyre_vk.ops.hash.fnv1a64.fnv1a64_program_u8"])
def test_docstring_examples(obj):
    import doctest
    import importlib
    mod_name, _, attr = obj.rpartition(".")
    try:
        mod, target = importlib.import_module(obj), None
    except ImportError:
        mod = importlib.import_module(mod_name)
        target = getattr(mod, attr)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = doctest.DocTestFinder(recurse=target is None).find(target or mod, globs=vars(mod))
    assert sum(len(t.examples) for t in tests) >= 1
    for t in tests:
        runner.run(t)
    assert runner.failures == 0


def test_fixpoint_loops_bind_byte_buffers_exactly(vk_device):
    # one round: next = min(cur + 1, buf_len(log)); log[cur] = cur + 10. With 6 bytes bound (not a
    # whole word) the loop must stop at 6, not at the padded 8.
    from vyre_vk.reference.convergence import converge as ref_converge
    from vyre_vk.runtime.convergence import converge as vk_converge
    p = _prog([BufferDecl.read_write("cur", 0, U32).with_count(1), BufferDecl.read_write("nxt", 1, U32).with_count(1),
               BufferDecl.read_write("log", 2, U8)],
              [Node.if_then(Expr.eq(Expr.gid_x(), u(0)), [
                  Node.let_bind("r", Expr.load("cur", u(0))),
                  Node.store("nxt", u(0), Expr.min(Expr.add(v("r"), u(1)), Expr.buf_len("log"))),
                  Node.store("log", v("r"), Expr.cast(U8, Expr.add(v("r"), u(10))))])], wg=(1, 1, 1))
    inputs = {"cur": np.zeros(1, np.uint32), "nxt": np.zeros(1, np.uint32), "log": np.zeros(6, np.uint8)}
    want = {"cur": [6], "nxt": [6], "log": [10, 11, 12, 13, 14, 15]}
    for res in (ref_converge(p, inputs, 32, current="cur", next="nxt"),
                vk_converge(vk_device, p, inputs, 32, current="cur", next="nxt")):
        assert {k: a.tolist() for k, a in res.outputs.items()} == want
        assert res.outputs["log"].dtype == np.uint8


def test_optimiser_splits_per_workgroup_byte_buffers(vk_device):
    p = _prog([BufferDecl.workgroup("sh", 64, U8), BufferDecl.output("out", 0, U32).with_count(128)],
              [Node.if_then(Expr.lt(Expr.workgroup_x(), u(2)), [
                  Node.let_bind("l", Expr.local_x()),
                  Node.store("sh", v("l"), Expr.cast(U8, Expr.add(v("l"), Expr.workgroup_x()))),
                  Node.barrier(),
                  Node.store("out", Expr.gid_x(), Expr.cast(U32, Expr.load("sh", Expr.rem(Expr.add(v("l"), u(1)),
                                                                                         u(64)))))])])
    want = np.array([((g % 64 + 1) % 64 + g // 64) & 0xFF for g in range(128)], np.uint32)
    run_all(vk_device, p, {}, {"out": want})


def test_byte_programs_round_trip_through_json():
    for p in (COPY, CASTS, ECHO):
        q = Program.from_json(p.to_json())
        assert q == p and q.content_hash() == p.content_hash()
        assert [b.element for b in q.buffers] == [b.element for b in p.buffers]


def test_loads_proven_in_bounds_skip_the_clamp_for_bytes_too(byte_device):
    # j < 5 = the declared count: the lowering reads through vk_ldn_* (no clamp, no length)
    p = _prog([BufferDecl.read("b", 0, I8).with_count(5), BufferDecl.read("a", 1, U8).with_count(6),
               BufferDecl.output("out", 2, I32).with_count(5)],
              [Node.if_then(Expr.eq(Expr.gid_x(), u(0)), [Node.loop_for("j", u(0), u(5), [
                  Node.store("out", v("j"), Expr.add(Expr.cast(I32, Expr.load("b", v("j"))),
                                                     Expr.cast(I32, Expr.load("a", Expr.add(v("j"), u(1))))))])])],
              wg=(1, 1, 1))
    from vyre_vk.lower import lower
    glsl = lower(p).glsl
    assert "vk_ldn_b(" in glsl and "vk_ldn_a(" in glsl
    b = np.array([-128, -1, 0, 1, 127, 99], np.int8)  # one more than declared: ignored
    a = np.array([0, 255, 128, 7, 1, 200], np.uint8)
    run_all(byte_device, p, {"b": b, "a": a}, {"out": np.array([int(b[j]) + int(a[j + 1]) for j in range(5)], np.int32)})


def test_each_store_path_is_the_one_lowered(byte_device):
    glsl = byte_device.compile(SCATTER, optimize=False).compiled.stages[0].glsl
    native = byte_device.limits.storage_8bit
    assert ("uint8_t b_o[]" in glsl) is native and ("atomicCompSwap" in glsl) is not native
    assert ("#extension GL_EXT_shader_8bit_storage : require" in glsl) is native


def test_8bit_storage_follows_what_kp_enabled(vk_device, monkeypatch):
    assert vk_device.limits.storage_8bit is bool(vk_device.properties.get("storage_buffer_8bit"))
    monkeypatch.setenv("VYRE_VK_8BIT", "sometimes")
    with pytest.raises(Exception, match="VYRE_VK_8BIT='sometimes' is not 'on' or 'off'. Fix:"):
        Device(vk_device.index)
