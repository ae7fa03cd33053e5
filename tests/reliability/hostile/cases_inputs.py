"""Hostile inputs to valid programs: dtypes, sizes, shapes, views, Python containers,
DeviceArrays (other device, closed device, aliased) and grid overrides.

The right answer is the reference's on the clean equivalent of the input; a hostile value
that has no clean equivalent must be refused with a typed error."""
from __future__ import annotations


import numpy as np

from vyre_vk.ir import BufferDecl, Expr, Node

from .common import Wrong, add, compare, default_device, is_typed, parity, slug
from .progs import BOOL, I32, U32, axpy_u32, guarded, i_, map1, prog, scale_f32, u32s

C = "inputs"
A8 = u32s(8, 42, 1000)
F8 = np.linspace(-3, 3, 8).astype(np.float32)


def P_U():
    return axpy_u32(8, count_in=8)


def P_U0():
    return axpy_u32(8, count_in=0)


def P_F():
    return scale_f32(8)


def P_I():
    return map1(8, lambda x: Expr.sub(x, Expr.i32(5)), I32, I32)


def P_B():
    return map1(8, lambda x: Expr.select(x, Expr.u32(1), Expr.u32(2)), BOOL, U32)


def check(p, hostile, clean, grid=None, **kw):
    """Vulkan gets ``hostile``; the reference gets ``clean`` (what it should mean)."""
    return parity(p, hostile, ref_inputs=clean, grid=grid, **kw)


def byte_order(fn):
    """A byte-swapped array: the right answer, or a typed error that names the byte order."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001
        if is_typed(e) and not any(w in str(e).lower() for w in ("byte order", "endian", "byteorder", "byte-order")):
            raise Wrong(f"typed error does not name the byte order: {str(e)[:200]}") from None
        raise


# ----------------------------------------------------------------------------- dtypes
_DTYPES = {  # name: (program, hostile array, clean array, expect)
    "u32-given-float64": (P_U, A8.astype(np.float64), A8, "typed"),
    "u32-given-int64": (P_U, A8.astype(np.int64), A8, "typed"),
    "u32-given-int32": (P_U, A8.astype(np.int32), A8, "typed"),
    "u32-given-bool": (P_U, (A8 % 2).astype(bool), A8 % 2, "typed"),
    "u32-given-structured": (P_U, np.zeros(8, dtype=[("x", "<u4")]), A8, "typed"),
    "u32-given-explicit-little": (P_U, A8.astype("<u4"), A8, "ok"),
    "f32-given-float64": (P_F, F8.astype(np.float64), F8, "typed"),
    "i32-given-uint32": (P_I, np.arange(8, dtype=np.uint32), np.arange(8, dtype=np.int32), "typed"),
    "bool-given-numpy-bool": (P_B, (A8 % 2).astype(bool), (A8 % 2).astype(np.uint32), "ok"),
}
for _n, (_p, _h, _c, _e) in _DTYPES.items():
    add(f"{C}/dtype/{_n}", lambda p=_p, h=_h, c=_c: check(p(), {"a": h}, {"a": c}), _e)
for _n, (_p, _dt, _clean) in {"u32-big-endian": (P_U, ">u4", A8), "f32-big-endian": (P_F, ">f4", F8),
                              "i32-big-endian": (P_I, ">i4", np.arange(-4, 4, dtype=np.int32))}.items():
    add(f"{C}/dtype/{_n}", lambda p=_p, dt=_dt, c=_clean: byte_order(
        lambda: check(p(), {"a": c.astype(dt)}, {"a": c})), "either",
        note="right values in the other byte order: the answer, or a typed error naming the byte order")
add(f"{C}/dtype/u32-big-endian-in-list-form", lambda: byte_order(lambda: check(P_U(), [A8.astype(">u4")], {"a": A8})), "either")


# ----------------------------------------------------------------------------- sizes and shapes
_SIZES = {  # name: (program, hostile, clean, expect)
    "short-by-one": (P_U, A8[:7], A8, "typed"),
    "longer-than-declared": (P_U, u32s(13, 5, 1000), u32s(13, 5, 1000), "ok"),
    "empty": (P_U, A8[:0], A8, "typed"),
    "one-element-data-sized": (P_U0, A8[:1], A8[:1], "ok"),
    "100000-elements-data-sized": (P_U0, u32s(100_000, 6, 1000), u32s(100_000, 6, 1000), "ok"),
    "0d-array-for-8": (P_U, np.array(5, np.uint32), A8, "typed"),
    "0d-array-data-sized": (P_U0, np.array(5, np.uint32), np.array([5], np.uint32), "either"),
    "2d-2x4": (P_U, A8.reshape(2, 4), A8, "either"),
    "2d-transposed": (P_U, A8.reshape(4, 2).T, A8.reshape(4, 2).T.reshape(-1), "either"),
}
for _n, (_p, _h, _c, _e) in _SIZES.items():
    add(f"{C}/size/{_n}", lambda p=_p, h=_h, c=_c: check(p(), {"a": h}, {"a": c}), _e)


def _unaligned():
    raw = np.zeros(8 * 4 + 1, np.uint8)
    raw[1:] = A8.view(np.uint8)
    v = np.frombuffer(raw.data, dtype=np.uint32, offset=1, count=8)
    return v


def _readonly():
    v = A8.copy()
    v.setflags(write=False)
    return v


_VIEWS = {
    "reversed": lambda: A8[::-1].copy()[::-1],
    "column-of-2d": lambda: np.stack([A8, A8 + 1], axis=1)[:, 0],
    "broadcast-zero-stride": lambda: np.broadcast_to(A8[:1], (8,)),
    "read-only": _readonly,
    "unaligned": _unaligned,
    "bytes-little-endian": lambda: A8.tobytes(),
}
for _n, _mk in _VIEWS.items():
    _clean = np.full(8, A8[0], np.uint32) if _n == "broadcast-zero-stride" else A8
    add(f"{C}/view/{_n}", lambda mk=_mk, c=_clean: check(P_U(), {"a": mk()}, {"a": c}))


# ----------------------------------------------------------------------------- Python values
_PY = {  # name: (program, hostile, clean, expect)
    "list-of-ints": (P_U, A8.tolist(), A8, "ok"),
    "range": (P_U, range(8), np.arange(8, dtype=np.uint32), "ok"),
    "list-of-bools": (P_U, [bool(x % 2) for x in A8], (A8 % 2).astype(np.uint32), "ok"),
    "list-exact-floats-for-f32": (P_F, [0.5, -1.0, 2.0, 0.0, 1.5, 3.0, -0.25, 8.0],
                                  np.array([0.5, -1.0, 2.0, 0.0, 1.5, 3.0, -0.25, 8.0], np.float32), "ok"),
    "list-inexact-floats-for-f32": (P_F, [0.1] * 8, np.full(8, 0.1, np.float32), "typed"),
    "list-halves-for-u32": (P_U, [0.5] * 8, A8, "typed"),
    "list-negative-for-u32": (P_U, [-1] * 8, A8, "typed"),
    "list-nan-for-u32": (P_U, [float("nan")] * 8, A8, "typed"),
    "list-of-strings": (P_U, ["1"] * 8, A8, "typed"),
    "generator": (P_U, (int(x) for x in A8), A8, "typed"),
    "none-value": (P_U, None, A8, "typed"),
}
for _n, (_p, _h, _c, _e) in _PY.items():
    add(f"{C}/python/{_n}", lambda p=_p, h=_h, c=_c: check(p(), {"a": h}, {"a": c}), _e)

_TOP = {  # the whole `inputs` argument: (hostile, expect)
    "int-5": (5, "typed"),
    "string-a": ("a", "typed"),
    "bytes": (A8.tobytes(), "typed"),
    "whole-array": (A8, "typed"),
    "empty-dict": ({}, "typed"),
    "none": (None, "typed"),
    "int-key": ({"a": A8, 5: A8}, "typed"),
    "unknown-name": ({"a": A8, "zz": A8}, "typed"),
    "output-given": ({"a": A8, "out": np.zeros(8, np.uint32)}, "typed"),
    "legacy-list-with-output-placeholder": ([A8, np.zeros(8, np.uint32)], "ok"),
    "list": ([A8], "ok"),
    "iterator": (iter([A8]), "either"),
}
for _n, (_h, _e) in _TOP.items():
    add(f"{C}/toplevel/{_n}", lambda h=_h: check(P_U(), h, {"a": A8}), _e)


# ----------------------------------------------------------------------------- DeviceArrays
def _dev():
    import vyre_vk
    return default_device()


def _other_device():
    from vyre_vk.runtime import Device
    with Device() as other:
        check(P_U(), {"a": other.array(A8)}, {"a": A8})


def _alias_prog(n=16):
    """One invocation: rw[j] = ro[j-1] + rw[j] in order (aliasing ro and rw turns it into a prefix sum)."""
    j = Expr.var("j")
    body = [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [Node.loop_for("j", Expr.u32(1), Expr.u32(n), [
        Node.store("rw", j, Expr.add(Expr.load("ro", Expr.sub(j, Expr.u32(1))), Expr.load("rw", j)))])])]
    return prog([BufferDecl.read("ro", 0, U32).with_count(n), BufferDecl.read_write("rw", 1, U32).with_count(n)], body,
                wg=(1, 1, 1))


def _alias(kind):
    import vyre_vk
    a = u32s(16, 9, 100)
    dev = _dev()
    if kind == "device-array-ro-and-rw":
        da = dev.array(a)
        ins = {"ro": da, "rw": da}
    elif kind == "numpy-array-ro-and-rw":
        ins = {"ro": a, "rw": a}
    elif kind == "device-array-rw-in-place":  # README: a DeviceArray bound to read_write is updated in place
        from vyre_vk import reference
        da, p = dev.array(a), _alias_prog()
        want1 = reference.run(p, {"ro": a, "rw": a})
        compare(vyre_vk.run(p, {"ro": a, "rw": da}), want1, what="run 1")
        compare({"rw": da.numpy()}, want1, what="the DeviceArray after run 1")
        want2 = reference.run(p, {"ro": a, "rw": want1["rw"]})
        compare(vyre_vk.run(p, {"ro": a, "rw": da}), want2, what="run 2 (chained on the updated array)")
        return
    else:  # "device-array-two-read-only"
        da = dev.array(a)
        p = prog([BufferDecl.read("x", 0, U32).with_count(16), BufferDecl.read("y", 1, U32).with_count(16),
                  BufferDecl.output("out", 2, U32).with_count(16)],
                 guarded(16, [Node.store("out", i_, Expr.sub(Expr.load("x", i_), Expr.load("y", i_)))]))
        return check(p, {"x": da, "y": da}, {"x": a, "y": a}, runs=2)
    return check(_alias_prog(), ins, {"ro": a, "rw": a}, runs=2)


for _k, _e in [("device-array-ro-and-rw", "either"), ("numpy-array-ro-and-rw", "ok"),
               ("device-array-rw-in-place", "ok"), ("device-array-two-read-only", "ok")]:
    add(f"{C}/device-array/alias-{_k}", lambda k=_k: _alias(k), _e,
        note="each input is its own value (reference) unless documented otherwise (in-place read_write)")
add(f"{C}/device-array/from-another-device", _other_device, "either")
_DA = {  # dev.array(value): (value, program, clean, expect)
    "float64": (F8.astype(np.float64), P_F, F8, "typed"),
    "empty": (A8[:0], P_U0, A8, "typed"),
    "none": (None, P_U, A8, "typed"),
    "bool-for-bool-buffer": ((A8 % 2).astype(bool), P_B, (A8 % 2).astype(np.uint32), "ok"),
    "big-endian-f32": (F8.astype(">f4"), P_F, F8, "either"),
    "f32-for-u32-buffer": (A8.astype(np.float32), P_U, A8, "typed"),
    "short-for-declared-count": (A8[:4], P_U, A8, "typed"),
}
for _n, (_v, _p, _c, _e) in _DA.items():
    _fn = (lambda v=_v, p=_p, c=_c: check(p(), {"a": _dev().array(v)}, {"a": c}))
    add(f"{C}/device-array/{_n}", (lambda f=_fn: byte_order(f)) if "endian" in _n else _fn, _e)


def _closed(kind):
    from vyre_vk.runtime import Device
    dev = Device()
    k = dev.compile(P_U())
    da = dev.array(A8)
    assert k.run({"a": da})["out"].size == 8
    dev.close()
    return {"kernel-run": lambda: k.run({"a": A8}),
            "kernel-run-with-its-device-array": lambda: k.run({"a": da}),
            "device-array-on-default-device": lambda: check(P_U(), {"a": da}, {"a": A8}),
            "dev-array": lambda: dev.array(A8)}[kind]()


for _k in ["kernel-run", "kernel-run-with-its-device-array", "device-array-on-default-device", "dev-array"]:
    add(f"{C}/closed-device/{_k}", lambda k=_k: _closed(k), "typed")


# ----------------------------------------------------------------------------- grid overrides
def _run_grid(g):
    import vyre_vk
    return vyre_vk.run(P_U(), {"a": A8}, grid=g)


for _g in [("a", 1, 1), 5, (0, 1, 1), (2**40, 1, 1), (1, 1), (-1, 1, 1), (65536, 1, 1), (None, 1, 1)]:
    add(f"{C}/grid/{slug(repr(_g))}", lambda g=_g: _run_grid(g), "typed")
# A valid grid runs like the reference given the same grid.
for _g, _e in [((1.5, 1, 1), "either"), ((2, 1, 1), "ok"), (np.array([1, 1, 1]), "either")]:
    add(f"{C}/grid/valid-{slug(repr(_g))}", lambda g=_g: check(P_U(), {"a": A8}, {"a": A8}, grid=g), _e)
add(f"{C}/grid/too-small-for-data", lambda: check(axpy_u32(200, count_in=200), {"a": u32s(200, 3)}, {"a": u32s(200, 3)},
                                                 grid=(1, 1, 1)))
