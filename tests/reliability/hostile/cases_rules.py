"""Every IR rule of vyre_vk/ir/validate.py broken at least once: the reference and Vulkan
must both refuse with a typed error (ValidationError subclasses carry a Fix hint)."""
from __future__ import annotations

import dataclasses

import numpy as np

from vyre_vk.ir import (AsyncLoad, AtomicOp, BinOp, BufferAccess, BufferDecl, DataType, Expr,
                        IndirectDispatch, Node, Program, wrap_anonymous)
from vyre_vk.ir import expr as E
from vyre_vk.ir import node as N
from vyre_vk.ir.types import MemoryOrdering

from .common import Wrong, add, is_typed
from .progs import F32, I32, U32, u32s

C = "programs/rules"
BUFS = [BufferDecl.read("a", 0, U32).with_count(16), BufferDecl.read("f", 1, F32).with_count(16),
        BufferDecl.read_write("rw", 2, U32).with_count(16), BufferDecl.uniform("u", 3, U32).with_count(16),
        BufferDecl.output("out", 4, U32).with_count(16), BufferDecl.read_write("rwf", 5, F32).with_count(16)]
WG = BufferDecl.workgroup("tmp", 16, U32)
INPUTS = {"a": u32s(16, 1, 16), "f": np.ones(16, np.float32), "rw": u32s(16, 2, 16), "u": u32s(16, 3, 16),
          "rwf": np.ones(16, np.float32)}
g, lx = Expr.gid_x(), Expr.local_x()
one, zero = Expr.u32(1), Expr.u32(0)


def body(*nodes, bufs=None, wg=(16, 1, 1)) -> Program:
    return Program.wrapped(list(bufs if bufs is not None else BUFS), wg, [wrap_anonymous("hostile::rule", list(nodes))])


def with_buf(extra) -> Program:
    return body(Node.store("out", g, one), bufs=BUFS + [extra])


def invalid(p, inputs=None) -> None:
    """Both the reference and Vulkan must refuse ``p``; the last (typed) error is raised."""
    import vyre_vk
    from vyre_vk import reference
    inputs = dict(INPUTS) if inputs is None else inputs
    last = None
    for who, fn in (("the reference", lambda: reference.run(p, inputs)), ("Vulkan", lambda: vyre_vk.run(p, inputs))):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - classified by the worker
            if not is_typed(e):
                raise
            last = e
        else:
            raise Wrong(f"{who} ran a program that breaks an IR rule")
    raise last


RULES: dict[str, object] = {}


def rule(name: str, p) -> None:
    RULES[name] = p


# ---- ProgramShapeError
rule("shape/not-a-program-dict", lambda: {"buffers": [], "entry": []})
rule("shape/workgroup-float", lambda: body(Node.store("out", g, one), wg=(1.5, 1, 1)))
rule("shape/workgroup-bool", lambda: body(Node.store("out", g, one), wg=(True, 1, 1)))
rule("shape/empty-entry", lambda: Program(tuple(BUFS), (16, 1, 1), ()))
rule("shape/entry-not-region", lambda: Program.new(BUFS, (16, 1, 1), [Node.store("out", g, one)]))
rule("shape/statement-list-none", lambda: body(N.Block(None)))
rule("shape/region-generator-int", lambda: body(Node.region(5, [Node.store("out", g, one)])))
rule("shape/trap-tag-int", lambda: body(Node.trap(one, 5)))
rule("shape/statement-is-string", lambda: body("store out"))
# ---- BufferDeclError
rule("decl/not-a-bufferdecl", lambda: with_buf(("x", 9)))
rule("decl/name-int", lambda: with_buf(BufferDecl(5, 9, BufferAccess.ReadOnly, U32, 4)))
rule("decl/access-string", lambda: with_buf(BufferDecl("x", 9, "ReadOnly", U32, 4)))
rule("decl/duplicate-name", lambda: with_buf(BufferDecl.read("a", 9, U32).with_count(4)))
for _t in (DataType.U16, DataType.F64):
    rule(f"decl/unsupported-element-{_t.name}", lambda t=_t: with_buf(BufferDecl.read("x", 9, t).with_count(4)))
for _c in (-1,):
    rule(f"decl/count-{_c}", lambda c=_c: with_buf(dataclasses.replace(BufferDecl.read("x", 9, U32), count=c)))
rule("decl/workgroup-count-0", lambda: with_buf(BufferDecl.workgroup("x", 0, U32)))
for _b in (-1,):
    rule(f"decl/binding-{_b}", lambda b=_b: with_buf(dataclasses.replace(BufferDecl.read("x", 0, U32).with_count(4), binding=b)))
rule("decl/duplicate-binding", lambda: with_buf(BufferDecl.read("x", 0, U32).with_count(4)))
rule("decl/output-count-0", lambda: body(Node.store("o2", g, one), bufs=BUFS[:4] + [BufferDecl.output("o2", 4, U32)]))
for _r in ((8, 4),):
    rule(f"decl/output-byte-range-{_r[0]}-{_r[1]}", lambda r=_r: body(Node.store("out", g, one), bufs=BUFS[:4] + [
        dataclasses.replace(BufferDecl.output("out", 4, U32).with_count(16), output_byte_range=r)]))
rule("decl/two-outputs", lambda: with_buf(BufferDecl.output("o2", 9, U32).with_count(4)))
# ---- UnsupportedFeature
rule("unsupported/binop-shuffle", lambda: body(Node.store("out", g, Expr.binop(BinOp.Shuffle, one, one))))
rule("unsupported/unop-not-enum", lambda: body(Node.store("out", g, E.UnOpExpr("Popcount", one))))
rule("unsupported/cast-to-f64", lambda: body(Node.let_bind("x", Expr.cast(DataType.F64, one))))
rule("unsupported/atomic-fetch-nand", lambda: body(Node.let_bind("x", Expr.atomic(AtomicOp.FetchNand, "rw", zero, one))))
rule("unsupported/call", lambda: body(Node.let_bind("x", Expr.call("vyre-libs::nn::relu", [one]))))
for _n in (IndirectDispatch("a", 0), AsyncLoad("a", "tmp", zero, one, "t")):
    rule(f"unsupported/node-{type(_n).__name__}", lambda n=_n: body(n, bufs=BUFS + [WG]))
rule("unsupported/subgroup-reduce-op", lambda: body(Node.let_bind("x", E.SubgroupReduce("Nand", one)), wg=(32, 1, 1)))
rule("unsupported/subgroup-and-atomic-in-one-statement", lambda: body(Node.let_bind(
    "x", Expr.add(Expr.subgroup_add(one), Expr.atomic_add("rw", zero, one))), wg=(32, 1, 1)))
# ---- UndeclaredName
rule("undeclared/assign", lambda: body(Node.assign("nope", one)))
rule("undeclared/var", lambda: body(Node.store("out", g, Expr.var("nope"))))
rule("undeclared/load", lambda: body(Node.store("out", g, Expr.load("nobuf", zero))))
rule("undeclared/var-after-its-scope", lambda: body(Node.if_then(Expr.bool(True), [Node.let_bind("x", one)]),
                                                    Node.store("out", g, Expr.var("x"))))
# ---- ScopeError
rule("scope/duplicate-let", lambda: body(Node.let_bind("x", one), Node.let_bind("x", one)))
rule("scope/shadowing", lambda: body(Node.let_bind("x", one), Node.block([Node.let_bind("x", zero)])))
rule("scope/assign-loop-var", lambda: body(Node.loop_for("j", zero, one, [Node.assign("j", zero)])))
rule("scope/loop-var-shadows-let", lambda: body(Node.let_bind("j", one), Node.loop_for("j", zero, one, [])))
# ---- TypeMismatch
rule("type/assign-f32-to-u32", lambda: body(Node.let_bind("x", one), Node.assign("x", Expr.f32(1.0))))
rule("type/store-index-f32", lambda: body(Node.store("out", Expr.f32(0.0), one)))
rule("type/store-f32-into-u32", lambda: body(Node.store("out", g, Expr.f32(1.0))))
rule("type/if-cond-f32", lambda: body(Node.if_then(Expr.f32(1.0), [])))
rule("type/loop-from-i32", lambda: body(Node.loop_for("j", Expr.i32(0), one, [])))
for _name, _lit in (("u32-negative", E.LitU32(-1)), ("i32-2^31", E.LitI32(2**31)), ("f32-bits-2^32", E.LitF32(2**32)),
                    ("bool-int", E.LitBool(1)), ("u32-float", E.LitU32(1.5))):
    rule(f"type/literal-{_name}", lambda lit=_lit: body(Node.let_bind("x", lit)))
rule("type/load-index-i32", lambda: body(Node.store("out", g, Expr.load("a", Expr.i32(0)))))
rule("type/axis-3", lambda: body(Node.store("out", g, E.InvocationId(3))))
rule("type/add-u32-i32", lambda: body(Node.let_bind("x", Expr.add(one, Expr.i32(1)))))
rule("type/div-by-literal-zero-i32", lambda: body(Node.let_bind("x", Expr.div(Expr.cast(I32, g), Expr.i32(0)))))
rule("type/negate-i32", lambda: body(Node.let_bind("x", Expr.negate(Expr.i32(1)))))
rule("type/select-branches-differ", lambda: body(Node.let_bind("x", Expr.select(Expr.bool(True), one, Expr.i32(0)))))
rule("type/fma-u32", lambda: body(Node.let_bind("x", Expr.fma(one, Expr.f32(1.0), Expr.f32(1.0)))))
rule("type/atomic-on-f32-buffer", lambda: body(Node.let_bind("x", Expr.atomic_add("rwf", zero, one))))
rule("type/atomic-index-i32", lambda: body(Node.let_bind("x", Expr.atomic_add("rw", Expr.i32(0), one))))
rule("type/add-with-expected", lambda: body(Node.let_bind("x", Expr.atomic(AtomicOp.Add, "rw", zero, one, expected=zero))))
rule("type/cas-expected-f32", lambda: body(Node.let_bind("x", Expr.atomic_compare_exchange("rw", zero, Expr.f32(0.0), one))))
rule("type/store-value-python-int", lambda: body(Node.store("out", g, 5)))
# ---- BufferAccessError
rule("access/store-read-only", lambda: body(Node.store("a", g, one)))
rule("access/store-uniform", lambda: body(Node.store("u", g, one)))
rule("access/constant-index-out-of-range", lambda: body(Node.store("out", Expr.u32(16), one)))
rule("access/atomic-workgroup", lambda: body(Node.let_bind("x", Expr.atomic_add("tmp", zero, one)), bufs=BUFS + [WG]))
# ---- ControlFlowError
rule("flow/unreachable-after-return", lambda: body(Node.return_(), Node.store("out", g, one)))
rule("flow/fusion-hazard", lambda: body(Node.store("out", g, Expr.load("rw", g)), Node.let_bind("x", Expr.atomic_add("rw", zero, one))))
rule("flow/barrier-relaxed", lambda: body(Node.barrier_with_ordering(MemoryOrdering.Relaxed)))
rule("flow/barrier-in-divergent-if", lambda: body(Node.if_then(Expr.lt(g, Expr.u32(3)), [Node.barrier()])))
rule("flow/barrier-in-data-dependent-loop", lambda: body(Node.loop_for("j", zero, Expr.load("a", g), [Node.barrier()])))
rule("flow/atomic-gridsync", lambda: body(Node.let_bind("x", Expr.atomic_add_ordered("rw", zero, one, MemoryOrdering.GridSync))))
rule("flow/subgroup-in-divergent-if", lambda: body(Node.if_then(Expr.lt(lx, Expr.u32(5)), [
    Node.store("out", g, Expr.subgroup_add(one))]), wg=(32, 1, 1)))
rule("flow/subgroup-in-non-uniform-loop", lambda: body(Node.loop_for("j", zero, Expr.rem(lx, Expr.u32(3)), [
    Node.store("out", g, Expr.subgroup_add(one))]), wg=(32, 1, 1)))
rule("flow/subgroup-after-divergent-return", lambda: body(Node.if_then(Expr.lt(lx, Expr.u32(5)), [Node.return_()]),
                                                          Node.store("out", g, Expr.subgroup_add(one)), wg=(32, 1, 1)))

for _name, _mk in RULES.items():
    add(f"{C}/{_name}", lambda mk=_mk: invalid(mk()), "typed")
