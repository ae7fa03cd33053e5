"""Hostile programs: odd shapes, workgroup memory, names, depth, unbounded loops, traps,
out-of-bounds accesses and NaN/inf/subnormal inputs. The reference is the oracle."""
from __future__ import annotations

import numpy as np

from vyre_vk.ir import BinOp, BufferDecl, Expr, Node, Program, UnOp, wrap_anonymous
from vyre_vk.ir.optable import TRANSCENDENTAL_UNOPS

from .common import add, default_device, parity, slug
from .progs import (BOOL, F32, I32, SPECIALS, U32, guarded, i_, map1, map2, prog, specials_pairs,
                    u32s)

C = "programs"


def _run(p: Program, inputs=None, **kw):
    import vyre_vk
    return vyre_vk.run(p, inputs or {}, **kw)


# ----------------------------------------------------------------------------- shapes
def _wg_prog(wg):
    return Program.wrapped([BufferDecl.read("a", 0, U32).with_count(64), BufferDecl.output("out", 1, U32).with_count(64)],
                           wg, [wrap_anonymous("hostile::wg", guarded(64, [Node.store("out", i_, Expr.load("a", i_))]))])


for _wg in [(1025, 1, 1), (0, 1, 1), (2**31, 1, 1), (1, 1, 1025), (32, 32, 2), (64, 1)]:
    add(f"{C}/workgroup/bad-{slug(_wg)}", lambda wg=_wg: _run(_wg_prog(wg), {"a": u32s(64)}), "typed")
for _wg in [(1024, 1, 1), (1, 1, 64), (4, 4, 4)]:
    add(f"{C}/workgroup/edge-{slug(_wg)}", lambda wg=_wg: parity(_wg_prog(wg), {"a": u32s(64, 1)}))


def _only_workgroup():
    body = [Node.let_bind("l", Expr.local_x()), Node.store("tmp", Expr.var("l"), Expr.var("l")), Node.barrier(),
            Node.let_bind("x", Expr.load("tmp", Expr.rem(Expr.add(Expr.var("l"), Expr.u32(1)), Expr.u32(64))))]
    return prog([BufferDecl.workgroup("tmp", 64, U32)], body)


def _copy8(byte_range=None):
    out = BufferDecl.output("out", 1, U32).with_count(8)
    if byte_range is not None:
        out = out.with_output_byte_range(*byte_range)
    return prog([BufferDecl.read("a", 0, U32).with_count(8), out], guarded(8, [Node.store("out", i_, Expr.load("a", i_))]))


def _no_bound_buffers():
    j, x = Expr.var("j"), Expr.var("x")
    return prog([], [Node.let_bind("x", Expr.gid_x()),
                     Node.loop_for("j", Expr.u32(0), Expr.u32(4), [Node.let_bind("y", Expr.add(x, j))])])


_EMPTY = {  # name: (program, inputs, expect)
    "program-empty": (Program.empty, lambda: {}, "either"),
    "only-workgroup-buffers": (_only_workgroup, lambda: {}, "either"),
    "no-bound-buffers": (_no_bound_buffers, lambda: {}, "either"),
    "input-only-no-result": (lambda: prog([BufferDecl.read("a", 0, U32).with_count(8)],
                                          [Node.let_bind("x", Expr.load("a", Expr.gid_x()))]),
                             lambda: {"a": u32s(8)}, "either"),
    "region-with-empty-body": (lambda: prog([BufferDecl.output("out", 0, U32).with_count(4)], []), lambda: {}, "either"),
    "output-byte-range-unaligned": (lambda: _copy8((1, 7)), lambda: {"a": u32s(8, 3)}, "ok"),
    "output-byte-range-empty": (lambda: _copy8((4, 4)), lambda: {"a": u32s(8, 3)}, "either"),
}
for _n, (_p, _i, _e) in _EMPTY.items():
    add(f"{C}/empty/{_n}", lambda p=_p, i=_i: parity(p(), i()), _e)


# ----------------------------------------------------------------------------- workgroup memory
def _shared_prog(counts, dtype=U32, subgroup=False):
    bufs = [BufferDecl.read("a", 0, dtype).with_count(64), BufferDecl.output("out", 1, dtype).with_count(64)]
    bufs += [BufferDecl.workgroup(f"tmp{k}", c, dtype) for k, c in enumerate(counts)]
    lx = Expr.local_x()
    body = [Node.store(f"tmp{k}", lx, Expr.load("a", Expr.gid_x())) for k in range(len(counts))]
    body.append(Node.barrier())
    val = Expr.load("tmp0", Expr.rem(Expr.add(lx, Expr.u32(1)), Expr.u32(64)))
    if subgroup:
        val = Expr.add(val, Expr.subgroup_add(Expr.cast(U32, Expr.u32(0)) if dtype is U32 else Expr.f32(0.0)))
    body.append(Node.store("out", Expr.gid_x(), val))
    return prog(bufs, body)


for _name, _counts in [("36KiB", [9216]), ("40MB", [10_000_000]), ("count-2^32-1", [2**32 - 1]),
                       ("two-20KiB", [5120, 5120]), ("33-buffers-of-1KiB", [256] * 33)]:
    add(f"{C}/shared/over-{_name}", lambda c=_counts: _run(_shared_prog(c), {"a": u32s(64)}), "typed")
add(f"{C}/shared/over-36KiB-f32", lambda: _run(_shared_prog([9216], F32), {"a": np.ones(64, np.float32)}), "typed")
add(f"{C}/shared/exactly-32KiB", lambda: parity(_shared_prog([8192]), {"a": u32s(64, 2)}))
add(f"{C}/shared/32KiB-plus-subgroup-exchange", lambda: parity(_shared_prog([8192], subgroup=True), {"a": u32s(64, 2)}),
    "either", note="valid IR; the lowering's own subgroup scratch may not fit next to 32 KiB")


# ----------------------------------------------------------------------------- names
_BUF_NAMES = ["float", "main", "gl_GlobalInvocationID", "vk_trap", "v_a", "input", "a b", "\u03c0", "0abc", "_",
              "x" * 300]


def _named(a: str, out: str = "out"):
    return map1(16, lambda x: Expr.add(x, Expr.u32(7)), a=a, out=out, op="hostile::names")


def _label(n: str) -> str:
    """A readable, unique id part for an odd name."""
    return {"_": "underscore", "x" * 300: "300-chars", "": "empty"}.get(n) or slug(ascii(n)[1:-1].replace("\\", ""))


for _n in _BUF_NAMES:
    add(f"{C}/names/buffer-{_label(_n)}", lambda n=_n: parity(_named(n), {n: u32s(16, 4)}))
for _n in ["main", "vk_trap"]:
    add(f"{C}/names/output-{_label(_n)}", lambda n=_n: parity(_named("a", n), {"a": u32s(16, 5)}))


def _let_prog(names, loop_var="j"):
    """Lets named `names` in a chain, a loop with `loop_var`, out[i] = last."""
    pre, prev = [], Expr.load("a", i_)
    for k, n in enumerate(names):
        pre.append(Node.let_bind(n, Expr.add(prev, Expr.u32(k + 1))))
        prev = Expr.var(n)
    pre.append(Node.let_bind("acc", prev))
    acc = Expr.var("acc")
    pre.append(Node.loop_for(loop_var, Expr.u32(0), Expr.u32(3), [Node.assign("acc", Expr.add(acc, Expr.var(loop_var)))]))
    return prog([BufferDecl.read("a", 0, U32).with_count(16), BufferDecl.output("out", 1, U32).with_count(16)],
                guarded(16, pre + [Node.store("out", i_, Expr.var("acc"))]))


for _n in ["float", "gl_LocalInvocationID", "v_x", "\u03c0"]:
    add(f"{C}/names/let-{_label(_n)}", lambda n=_n: parity(_let_prog([n]), {"a": u32s(16, 6)}))
for _n in ["for", "vk_sg"]:
    add(f"{C}/names/loop-var-{_label(_n)}", lambda n=_n: parity(_let_prog(["t"], n), {"a": u32s(16, 7)}))
# Names whose sanitised spellings collide (v_a_b, v_x, v_x_1 ...): the lowering must keep them apart.
add(f"{C}/names/mangled-clash-lets", lambda: parity(_let_prog(["a b", "a-b", "a_b", "v_a_b", "x-", "v_x", "v_x_1"]),
                                                    {"a": u32s(16, 8)}))
add(f"{C}/names/mangled-clash-buffers", lambda: parity(prog(
    [BufferDecl.read("a b", 0, U32).with_count(8), BufferDecl.read("a-b", 1, U32).with_count(8),
     BufferDecl.output("v_a_b", 2, U32).with_count(8)],
    guarded(8, [Node.store("v_a_b", i_, Expr.sub(Expr.load("a b", i_), Expr.load("a-b", i_)))])),
    {"a b": u32s(8, 1), "a-b": u32s(8, 2)}))
# A let spelled like a buffer: separate namespaces in vyre, one in GLSL.
add(f"{C}/names/let-equals-input-buffer", lambda: parity(_let_prog(["a"]), {"a": u32s(16, 9)}), "either")
add(f"{C}/names/let-equals-output-buffer", lambda: parity(_let_prog(["out"]), {"a": u32s(16, 9)}), "either")
add(f"{C}/names/loop-var-equals-buffer", lambda: parity(_let_prog(["t"], "a"), {"a": u32s(16, 9)}), "either")
add(f"{C}/names/empty-buffer-name", lambda: _run(_named(""), {"": u32s(16)}), "typed")
add(f"{C}/names/empty-let-name", lambda: _run(_let_prog([""]), {"a": u32s(16)}), "typed")


# ----------------------------------------------------------------------------- depth and size
def _chain(depth, step):
    e = Expr.var("i")
    for _ in range(depth):
        e = step(e)
    return e


def _expr_prog(e):
    return prog([BufferDecl.output("out", 0, U32).with_count(4)], guarded(4, [Node.store("out", i_, e)]))


_one = Expr.u32(1)
for _d in [129, 10_000]:
    add(f"{C}/deep/add-chain-{_d}", lambda d=_d: _run(_expr_prog(_chain(d, lambda e: Expr.add(e, _one)))), "typed")
add(f"{C}/deep/select-chain-10000", lambda: _run(_expr_prog(_chain(
    10_000, lambda e: Expr.select(Expr.bool(True), e, _one)))), "typed")
add(f"{C}/deep/bitnot-chain-10000", lambda: _run(_expr_prog(_chain(10_000, Expr.bitnot))), "typed")
add(f"{C}/deep/load-index-chain-1000", lambda: _run(prog(
    [BufferDecl.read("a", 0, U32).with_count(4), BufferDecl.output("out", 1, U32).with_count(4)],
    guarded(4, [Node.store("out", i_, _chain(1_000, lambda e: Expr.load("a", Expr.rem(e, Expr.u32(4)))))])),
    {"a": u32s(4)}), "typed")


def _nest(depth, wrap, inner):
    body = inner
    for k in range(depth):
        body = [wrap(k, body)]
    return body


_store1 = [Node.store("out", Expr.u32(0), Expr.u32(1))]
_NESTERS = {
    "ifs": lambda k, b: Node.if_then(Expr.bool(True), b),
    "ifs-divergent": lambda k, b: Node.if_then(Expr.lt(Expr.gid_x(), Expr.u32(1000 - k)), b),
    "loops": lambda k, b: Node.loop_for(f"j{k}", Expr.u32(0), Expr.u32(1), b),
    "blocks": lambda k, b: Node.block(b),
}
for _kind, _w in _NESTERS.items():
    add(f"{C}/deep/nested-{_kind}-1000", lambda w=_w: _run(prog([BufferDecl.output("out", 0, U32).with_count(1)],
                                                                _nest(1000, w, _store1))), "typed")
add(f"{C}/deep/nested-ifs-65", lambda: _run(prog([BufferDecl.output("out", 0, U32).with_count(1)],
                                                 _nest(65, _NESTERS["ifs"], _store1))), "typed")
add(f"{C}/deep/nested-ifs-20", lambda: parity(prog([BufferDecl.output("out", 0, U32).with_count(1)],
                                                   _nest(20, _NESTERS["ifs-divergent"], _store1)), {}))
add(f"{C}/deep/100001-statements", lambda: _run(prog([BufferDecl.output("out", 0, U32).with_count(1)],
    [Node.let_bind(f"x{k}", Expr.u32(k)) for k in range(100_001)])), "typed")


def _let_chain(n):
    body = [Node.let_bind("x0", Expr.load("a", i_))]
    body += [Node.let_bind(f"x{k}", Expr.add(Expr.var(f"x{k - 1}"), Expr.u32(k))) for k in range(1, n)]
    return prog([BufferDecl.read("a", 0, U32).with_count(4), BufferDecl.output("out", 1, U32).with_count(4)],
                guarded(4, body + [Node.store("out", i_, Expr.var(f"x{n - 1}"))]))


# ~11 s alone (shaderc on 10,000 statements): a timeout with room for a loaded 2-core machine
add(f"{C}/deep/let-chain-10000", lambda: parity(_let_chain(10_000), {"a": u32s(4)}), timeout=60.0)
add(f"{C}/deep/500-sibling-stores", lambda: parity(prog([BufferDecl.output("out", 0, U32).with_count(500)],
    [Node.store("out", Expr.u32(k), Expr.u32(k * 7)) for k in range(500)], wg=(1, 1, 1)), {}))


# ----------------------------------------------------------------------------- data-driven loops
def _loop_prog(body_kind):
    bound = Expr.load("bound", Expr.u32(0))
    acc = Expr.var("acc")
    if body_kind == "accumulate":
        inner = [Node.loop_for("j", Expr.u32(0), bound, [Node.assign("acc", Expr.add(acc, Expr.u32(1)))])]
    elif body_kind == "store":
        inner = [Node.loop_for("j", Expr.u32(0), bound, [Node.store("out", i_, Expr.var("j"))])]
    elif body_kind == "nested":
        inner = [Node.loop_for("j", Expr.u32(0), bound, [Node.loop_for("k", Expr.u32(0), bound, [
            Node.assign("acc", Expr.bitxor(acc, Expr.var("k")))])])]
    elif body_kind == "per-lane":
        inner = [Node.loop_for("j", Expr.u32(0), Expr.load("bound", i_), [Node.assign("acc", Expr.add(acc, Expr.var("j")))])]
    elif body_kind == "forever":
        inner = [Node.forever([Node.assign("acc", Expr.add(acc, Expr.u32(1)))])]
    elif body_kind == "early-return":
        inner = [Node.loop_for("j", Expr.u32(0), bound, [
            Node.if_then(Expr.ge(Expr.var("j"), Expr.u32(10)), [Node.store("out", i_, acc), Node.return_()]),
            Node.assign("acc", Expr.add(acc, Expr.var("j")))])]
    elif body_kind == "top-of-range":
        inner = [Node.loop_for("j", Expr.u32(0xFFFFFFFE), bound, [Node.assign("acc", Expr.add(acc, Expr.var("j")))])]
    else:  # "inactive": the loop sits in a branch no lane takes
        inner = [Node.if_then(Expr.gt(i_, Expr.u32(1000)), [
            Node.loop_for("j", Expr.u32(0), bound, [Node.assign("acc", Expr.add(acc, Expr.u32(1)))])])]
    body = [Node.let_bind("acc", Expr.u32(0)), *inner]
    if body_kind not in ("store", "early-return"):
        body.append(Node.store("out", i_, acc))
    return prog([BufferDecl.read("bound", 0, U32).with_count(8), BufferDecl.output("out", 1, U32).with_count(8)],
                guarded(8, body))


_HUGE = np.full(8, 0xFFFFFFFF, np.uint32)
for _k in ["accumulate", "store", "nested", "per-lane", "forever"]:
    # The reference's budget must stop these with a typed error well inside the timeout;
    # the GPU is only run when the reference finishes.
    add(f"{C}/loops/bound-0xFFFFFFFF-{_k}",
        lambda k=_k: parity(_loop_prog(k), {"bound": _HUGE}, gpu_when_ref_fails=False), "typed")
for _k in ["early-return", "top-of-range", "inactive"]:
    add(f"{C}/loops/bound-0xFFFFFFFF-{_k}", lambda k=_k: parity(_loop_prog(k), {"bound": _HUGE}))


# ----------------------------------------------------------------------------- traps and division
def _div(op, t, guard=None, via_select=False):
    def value(a, b):
        q = Expr.binop(op, a, b)
        if via_select:  # both arms of a Select are always evaluated
            return Expr.select(Expr.ne(b, Expr.cast(t, Expr.u32(0)) if t is not F32 else Expr.f32(0.0)), q, a)
        return q
    p = map2(64, value, t, t, t, op="hostile::div")
    if guard:
        body = guarded(64, [Node.if_then(Expr.ne(Expr.load("b", i_), Expr.cast(t, Expr.u32(0))),
                                         [Node.store("out", i_, Expr.binop(op, Expr.load("a", i_), Expr.load("b", i_)))])])
        p = prog(p.buffers, body)
    return p


_I32MIN = np.int32(-2**31)
_N = np.arange(64)
_AI = _N.astype(np.int32)
_DIV_CASES = {  # name: (op, dtype, a, b, guarded, inside a Select arm, expect)
    "i32-div-by-zero": (BinOp.Div, I32, _AI, np.zeros(64, np.int32), False, False, "typed"),
    "i32-mod-by-zero": (BinOp.Mod, I32, _AI, np.zeros(64, np.int32), False, False, "typed"),
    "i32-min-div-minus-one": (BinOp.Div, I32, np.full(64, _I32MIN), np.full(64, -1, np.int32), False, False, "typed"),
    "i32-min-mod-minus-one": (BinOp.Mod, I32, np.full(64, _I32MIN), np.full(64, -1, np.int32), False, False, "typed"),
    "i32-div-zero-one-lane": (BinOp.Div, I32, _AI, np.where(_N == 37, 0, 3).astype(np.int32), False, False, "typed"),
    "i32-div-zero-in-select-arm": (BinOp.Div, I32, _AI, np.where(_N % 2, 0, 3).astype(np.int32), False, True, "typed"),
    "i32-div-zero-guarded": (BinOp.Div, I32, _AI, np.where(_N % 2, 0, 3).astype(np.int32), True, False, "ok"),
    "u32-div-by-zero": (BinOp.Div, U32, u32s(64, 1), np.zeros(64, np.uint32), False, False, "ok"),
    "u32-mod-by-zero": (BinOp.Mod, U32, u32s(64, 1), np.zeros(64, np.uint32), False, False, "ok"),
    "f32-div-by-zero": (BinOp.Div, F32, np.linspace(-2, 2, 64).astype(np.float32), np.zeros(64, np.float32),
                        False, False, "ok"),
    "f32-div-by-neg-zero": (BinOp.Div, F32, np.linspace(-2, 2, 64).astype(np.float32), np.full(64, -0.0, np.float32),
                            False, False, "ok"),
}
for _name, (_op, _t, _a, _b, _g, _sel, _exp) in _DIV_CASES.items():
    add(f"{C}/traps/{_name}",
        lambda op=_op, t=_t, a=_a, b=_b, g=_g, s=_sel: parity(_div(op, t, g, s), {"a": a, "b": b}), _exp)


def _trap_prog(reached: bool):
    cond = Expr.eq(i_, Expr.u32(5)) if reached else Expr.gt(i_, Expr.u32(10_000))
    return prog([BufferDecl.read("a", 0, U32).with_count(16), BufferDecl.output("out", 1, U32).with_count(16)],
                guarded(16, [Node.if_then(cond, [Node.trap(Expr.load("a", i_), "hostile-tag")]),
                             Node.store("out", i_, Expr.load("a", i_))]))


add(f"{C}/traps/trap-node-reached", lambda: parity(_trap_prog(True), {"a": u32s(16)}), "typed")
add(f"{C}/traps/trap-node-unreached", lambda: parity(_trap_prog(False), {"a": u32s(16)}))
add(f"{C}/traps/i32-div-zero-in-loop", lambda: parity(prog(
    [BufferDecl.read("a", 0, I32).with_count(8), BufferDecl.output("out", 1, I32).with_count(8)],
    guarded(8, [Node.let_bind("acc", Expr.i32(100)), Node.loop_for("j", Expr.u32(0), Expr.u32(8), [
        Node.assign("acc", Expr.div(Expr.var("acc"), Expr.load("a", Expr.var("j"))))]), Node.store("out", i_, Expr.var("acc"))])),
    {"a": np.array([1, 2, 1, 1, 1, 0, 1, 1], np.int32)}), "typed")
add(f"{C}/traps/i32-div-by-computed-zero", lambda: parity(map1(
    64, lambda x: Expr.div(x, Expr.sub(x, x)), I32, I32), {"a": np.arange(64, dtype=np.int32)}), "typed")


# ----------------------------------------------------------------------------- out of bounds
def _oob(kind):
    a = BufferDecl.read("a", 0, U32).with_count(16)
    out = BufferDecl.output("out", 1, U32).with_count(16)
    big = Expr.load("idx", Expr.u32(0))
    idx = BufferDecl.read("idx", 2, U32).with_count(1)
    body = {
        "load-one-past": [Node.store("out", i_, Expr.load("a", Expr.add(i_, Expr.u32(1))))],
        "load-0xFFFFFFFF": [Node.store("out", i_, Expr.load("a", big))],
        "load-2^31-offset": [Node.store("out", i_, Expr.load("a", Expr.add(i_, Expr.u32(2**31))))],
        "load-negative-i32-index": [Node.store("out", i_, Expr.load("a", Expr.cast(U32, Expr.sub(Expr.cast(I32, i_), Expr.i32(8)))))],
        "store-shifted-past-end": [Node.store("out", Expr.add(i_, Expr.u32(8)), Expr.load("a", i_))],
        "store-0xFFFFFFFF": [Node.store("out", i_, Expr.u32(1)), Node.store("out", big, Expr.u32(99))],
        "load-buf-len": [Node.store("out", i_, Expr.load("a", Expr.add(Expr.buf_len("a"), i_)))],
    }.get(kind)
    if body is not None:
        return prog([a, out, idx], guarded(16, body))
    if kind in ("workgroup-load", "workgroup-store"):
        tmp = BufferDecl.workgroup("tmp", 16, U32)
        lx = Expr.local_x()
        wb = [Node.store("tmp", lx, Expr.load("a", Expr.gid_x())), Node.barrier()]
        if kind == "workgroup-load":
            wb.append(Node.store("out", Expr.gid_x(), Expr.load("tmp", Expr.add(lx, Expr.u32(8)))))
        else:
            wb += [Node.store("tmp", Expr.add(lx, Expr.u32(16)), Expr.u32(7)), Node.barrier(),
                   Node.store("out", Expr.gid_x(), Expr.load("tmp", lx))]
        return prog([a, out, tmp], wb, wg=(16, 1, 1))
    if kind == "atomic-0xFFFFFFFF":
        st = BufferDecl.read_write("state", 0, U32).with_count(4)
        return prog([st, BufferDecl.output("out", 1, U32).with_count(16), idx],
                    guarded(16, [Node.store("out", i_, Expr.atomic_add("state", big, Expr.u32(1)))]))
    if kind == "f32-load-past-end":
        return map1(16, lambda x: Expr.load("a", Expr.add(i_, Expr.u32(3))), F32, F32, count_in=16)
    raise KeyError(kind)


for _k in ["load-one-past", "load-0xFFFFFFFF", "load-2^31-offset", "load-negative-i32-index", "store-shifted-past-end",
           "store-0xFFFFFFFF", "load-buf-len", "workgroup-load", "workgroup-store", "atomic-0xFFFFFFFF", "f32-load-past-end"]:
    def _oob_case(k=_k):
        p = _oob(k)
        ins = {"a": u32s(16, 11) if k != "f32-load-past-end" else np.arange(16, dtype=np.float32)}
        if p.buffer("idx") is not None:
            ins["idx"] = np.array([0xFFFFFFFF], np.uint32)
        if p.buffer("state") is not None:
            ins = {"state": np.arange(4, dtype=np.uint32), "idx": ins["idx"]}
        parity(p, ins)
    add(f"{C}/oob/{slug(_k)}", _oob_case)


# ----------------------------------------------------------------------------- NaN, inf, subnormal
_UN = ["Abs", "Negate", "Floor", "Round", "Sign", "Sqrt", "InverseSqrt", "Reciprocal", "IsNan", "Exp", "Log", "Sin",
       "Tanh"]
for _u in _UN:
    _op = UnOp[_u]
    _res = BOOL if _u in ("IsNan", "IsInf", "IsFinite") else F32
    _ulp = 128 if _op in TRANSCENDENTAL_UNOPS or _u in ("Exp2", "Log2", "Atan", "Tan") else 0
    add(f"{C}/f32-specials/unop-{_u.lower()}",
        lambda op=_op, r=_res, ulp=_ulp: parity(map1(SPECIALS.size, lambda x: Expr.unop(op, x), F32, r),
                                                {"a": SPECIALS.copy()}, ulp=ulp),
        note="ULP window 128 (the project's transcendental window)" if _ulp else "")
for _b in ["Add", "Mul", "Div", "Min", "Max", "Lt", "Ne"]:
    _op = BinOp[_b]
    _res = BOOL if _b in ("Lt", "Le", "Eq", "Ne", "Gt") else F32
    _pa, _pb = specials_pairs()
    add(f"{C}/f32-specials/binop-{_b.lower()}",
        lambda op=_op, r=_res, a=_pa, b=_pb: parity(map2(a.size, lambda x, y: Expr.binop(op, x, y), F32, F32, r),
                                                    {"a": a, "b": b}))
for _t in [U32, I32, BOOL]:
    add(f"{C}/f32-specials/cast-to-{_t.value}",
        lambda t=_t: parity(map1(SPECIALS.size, lambda x: Expr.cast(t, x), F32, t), {"a": SPECIALS.copy()}))
add(f"{C}/f32-specials/fma", lambda: parity(map2(
    specials_pairs()[0].size, lambda x, y: Expr.fma(x, y, Expr.f32(-1.0)), F32, F32, F32), dict(zip("ab", specials_pairs()))))
add(f"{C}/f32-specials/select-on-nan-truthiness", lambda: parity(map1(
    SPECIALS.size, lambda x: Expr.select(Expr.cast(BOOL, x), Expr.f32(1.0), x), F32, F32), {"a": SPECIALS.copy()}))
add(f"{C}/f32-specials/read-write-left-alone", lambda: parity(prog(
    [BufferDecl.read_write("rw", 0, F32).with_count(SPECIALS.size), BufferDecl.output("out", 1, U32).with_count(1)],
    [Node.store("out", Expr.u32(0), Expr.u32(1))], wg=(1, 1, 1)), {"rw": SPECIALS.copy()}))
add(f"{C}/f32-specials/subnormal-running-sum", lambda: parity(prog(
    [BufferDecl.read("a", 0, F32).with_count(64), BufferDecl.output("out", 1, F32).with_count(1)],
    [Node.let_bind("acc", Expr.f32(0.0)), Node.loop_for("j", Expr.u32(0), Expr.u32(64), [
        Node.assign("acc", Expr.add(Expr.var("acc"), Expr.load("a", Expr.var("j"))))]),
     Node.store("out", Expr.u32(0), Expr.var("acc"))], wg=(1, 1, 1)),
    {"a": np.array([1e-39, -1e-39, 3e-39, 1.0, -1.0] * 12 + [1e-45] * 4, np.float32)}))


def _device_array_specials():
    import vyre_vk
    dev = default_device()
    a, b = specials_pairs()
    p = map2(a.size, Expr.add, F32, F32, F32)
    parity(p, {"a": dev.array(a), "b": b}, ref_inputs={"a": a, "b": b})


add(f"{C}/f32-specials/device-array-upload", _device_array_specials)
add(f"{C}/names/buffer-with-nul", lambda: parity(_named("out\0"), {"out\0": u32s(16, 4)}), "either")
