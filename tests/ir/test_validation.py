"""Every validation rule: one rejected program each, with the message asserted."""
import dataclasses

import pytest

from vyre_vk.ir import (AtomicOp, BinOp, BufferAccess, BufferDecl, DataType, Expr, MemoryOrdering, Node,
                        Program, UnOp, ValidationError, validate, wrap_anonymous)
import importlib
from vyre_vk.ir.node import AsyncLoad, AsyncWait, IndirectDispatch, Resume
from vyre_vk.ir.validate import (BufferAccessError, BufferDeclError, ControlFlowError, ProgramShapeError,
                                 ScopeError, TypeMismatch, UndeclaredName, UnsupportedFeature)

V = importlib.import_module("vyre_vk.ir.validate")  # the module (vyre_vk.ir.validate is the function)
U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool
u, i_, f, b = Expr.u32, Expr.i32, Expr.f32, Expr.bool
v = Expr.var

BUFS = [BufferDecl.read("a", 0, U32).with_count(4), BufferDecl.read("fa", 1, F32).with_count(4),
        BufferDecl.output("out", 2, U32).with_count(4), BufferDecl.read_write("rw", 3, U32).with_count(4),
        BufferDecl.read_write("frw", 4, F32).with_count(4), BufferDecl.workgroup("tile", 4, U32)]


def P(*body, buffers=BUFS, wg=(64, 1, 1)):
    return Program.wrapped(buffers, wg, [wrap_anonymous("test::v", list(body))])


def guarded(*body):
    return Node.if_then(Expr.lt(Expr.gid_x(), u(4)), list(body))


CASES = {
    # program level
    "empty entry": (Program.new([], (1, 1, 1), []), ProgramShapeError, "no top-level Region"),
    "non-region entry": (Program.new(BUFS, (1, 1, 1), [Node.store("out", u(0), u(1))]), ProgramShapeError,
                         "entry node 0 is `Store` instead of a Region"),
    "zero workgroup dim": (P(wg=(64, 0, 1)), ProgramShapeError, "zero or negative dimension"),
    "workgroup too large": (P(wg=(64, 32, 1)), ProgramShapeError, "more than 1024"),
    "duplicate buffer name": (P(buffers=[BufferDecl.read("a", 0, U32), BufferDecl.read("a", 1, U32)]),
                              BufferDeclError, "duplicate buffer name `a`"),
    "duplicate binding": (P(buffers=[BufferDecl.read("a", 0, U32), BufferDecl.read("c", 0, U32)]),
                          BufferDeclError, "binding 0 of `c` is already used by `a`"),
    "workgroup count 0": (P(buffers=[BufferDecl.workgroup("t", 0, U32)]), BufferDeclError,
                          "workgroup buffer `t` has count 0"),
    "two outputs": (P(buffers=[BufferDecl.output("o1", 0, U32).with_count(1),
                               BufferDecl.output("o2", 1, U32).with_count(1)]), BufferDeclError,
                    "declares 2 output buffers"),
    "output count 0": (P(buffers=[BufferDecl.output("o", 0, U32)]), BufferDeclError, "has count 0"),
    "bad byte range": (P(buffers=[BufferDecl.output("o", 0, U32).with_count(2).with_output_byte_range(0, 12)]),
                       BufferDeclError, "output byte range 0..12 is invalid"),
    "u16 buffer": (P(buffers=[BufferDecl.read("t", 0, DataType.U16)]), UnsupportedFeature,
                   "u16 is not supported by the Vulkan backend yet"),
    "f16 buffer": (P(buffers=[BufferDecl.read("t", 0, DataType.F16)]), UnsupportedFeature,
                   "f16 is not supported by the Vulkan backend yet"),
    "bf16 buffer": (P(buffers=[BufferDecl.read("t", 0, DataType.BF16)]), UnsupportedFeature,
                    "bf16 is not supported by the Vulkan backend yet"),
    "u64 buffer": (P(buffers=[BufferDecl.read("t", 0, DataType.U64)]), UnsupportedFeature,
                   "u64 is not supported by the Vulkan backend yet"),
    "f64 buffer": (P(buffers=[BufferDecl.read("t", 0, DataType.F64)]), UnsupportedFeature,
                   "f64 is not supported by the Vulkan backend yet"),
    # names and scopes
    "undeclared var": (P(Node.let_bind("x", v("nope"))), UndeclaredName, "undeclared variable `nope`"),
    "var out of scope": (P(Node.block([Node.let_bind("t", u(1))]), Node.let_bind("x", v("t"))), UndeclaredName,
                         "undeclared variable `t`"),
    "shadowing": (P(Node.let_bind("x", u(1)), Node.block([Node.let_bind("x", u(2))])), ScopeError,
                  "`x` shadows a binding"),
    "duplicate sibling let": (P(Node.let_bind("x", u(1)), Node.let_bind("x", u(2))), ScopeError,
                              "duplicate `let x`"),
    "loop var shadows": (P(Node.let_bind("j", u(1)), Node.loop_for("j", u(0), u(2), [])), ScopeError,
                         "loop variable `j` shadows"),
    "assign undeclared": (P(Node.assign("x", u(1))), UndeclaredName, "assignment to undeclared variable `x`"),
    "assign loop var": (P(Node.loop_for("j", u(0), u(2), [Node.assign("j", u(1))])), ScopeError,
                        "assignment to loop variable `j`"),
    "assign type mismatch": (P(Node.let_bind("x", u(0)), Node.assign("x", f(1.0))), TypeMismatch,
                             "assigning a f32 value to `x`, which is u32"),
    "empty let name": (P(Node.let_bind("", u(0))), ScopeError, "name '' is empty"),
    # buffers and access
    "load unknown buffer": (P(Node.let_bind("x", Expr.load("zz", u(0)))), UndeclaredName,
                            "load from unknown buffer `zz`"),
    "store unknown buffer": (P(Node.store("zz", u(0), u(0))), UndeclaredName, "store to unknown buffer `zz`"),
    "buf_len unknown buffer": (P(Node.let_bind("x", Expr.buf_len("zz"))), UndeclaredName,
                               "buf_len of unknown buffer `zz`"),
    "store to read-only": (P(Node.store("a", u(0), u(1))), BufferAccessError, "store to `a`, which is ReadOnly"),
    "store index not u32": (P(Node.store("out", i_(0), u(1))), TypeMismatch, "store index has type i32"),
    "store value type": (P(Node.store("out", u(0), f(1.0))), TypeMismatch,
                         "storing a f32 value into `out` of u32"),
    "constant index out of range": (P(Node.store("out", u(4), u(1))), BufferAccessError,
                                    "constant index 4 is out of range"),
    "load index not u32": (P(Node.let_bind("x", Expr.load("a", f(0.0)))), TypeMismatch,
                           "load index into `a` has type f32"),
    # operator types
    "binop mismatched": (P(Node.let_bind("x", Expr.add(u(1), i_(1)))), TypeMismatch,
                         "Add operands have different types (u32 and i32)"),
    "binop bool arithmetic": (P(Node.let_bind("x", Expr.add(b(True), b(False)))), TypeMismatch,
                              "Add does not accept a bool left operand"),
    "shift needs u32": (P(Node.let_bind("x", Expr.shl(i_(1), i_(2)))), TypeMismatch,
                        "Shl does not accept a i32 left operand"),
    "saturating needs u32": (P(Node.let_bind("x", Expr.saturating_add(i_(1), i_(2)))), TypeMismatch,
                             "SaturatingAdd does not accept a i32"),
    "absdiff i32": (P(Node.let_bind("x", Expr.abs_diff(i_(1), i_(2)))), TypeMismatch, "AbsDiff does not accept"),
    "mod f32": (P(Node.let_bind("x", Expr.rem(f(1.0), f(2.0)))), TypeMismatch, "Mod does not accept a f32"),
    "lt on bool": (P(Node.let_bind("x", Expr.lt(b(True), b(False)))), TypeMismatch, "Lt does not accept a bool"),
    "static zero divisor": (P(Node.let_bind("x", Expr.div(u(1), u(0)))), TypeMismatch, "Div by a constant zero"),
    "static zero via cast": (P(Node.let_bind("x", Expr.rem(u(1), Expr.cast(U32, i_(0))))), TypeMismatch,
                             "Mod by a constant zero"),
    "subgroup binop": (P(Node.let_bind("x", Expr.binop(BinOp.Shuffle, u(1), u(2)))), UnsupportedFeature,
                       "binary op Shuffle is not supported by the Vulkan backend yet"),
    "unop wrong type": (P(Node.let_bind("x", Expr.sqrt(u(4)))), TypeMismatch, "Sqrt does not accept a u32"),
    "i32 negate": (P(Node.let_bind("x", Expr.negate(i_(4)))), TypeMismatch, "Negate does not accept a i32 operand"),
    "if cond f32": (P(Node.if_then(f(1.0), [])), TypeMismatch, "if condition has type f32"),
    "loop bound i32": (P(Node.loop_for("j", u(0), i_(3), [])), TypeMismatch, "loop `j` bound `to` has type i32"),
    "cast to u16": (P(Node.let_bind("x", Expr.cast(DataType.U16, u(1)))), UnsupportedFeature,
                    "cast to u16 is not supported by the Vulkan backend yet"),
    "fma not f32": (P(Node.let_bind("x", Expr.fma(f(1.0), u(1), f(1.0)))), TypeMismatch,
                    "fma operand b has type u32"),
    "select mismatch": (P(Node.let_bind("x", Expr.select(b(True), u(1), f(1.0)))), TypeMismatch,
                        "select branches have different types"),
    "select cond f32": (P(Node.let_bind("x", Expr.select(f(1.0), u(1), u(2)))), TypeMismatch,
                        "select condition has type f32"),
    "axis 3": (P(Node.let_bind("x", Expr.InvocationId(3))), TypeMismatch, "InvocationId axis 3"),
    "u32 literal range": (P(Node.let_bind("x", Expr.LitU32(-1))), TypeMismatch, "u32 literal -1 is out of range"),
    "not an expr": (P(Node.let_bind("x", 5)), TypeMismatch, "int 5 is not an Expr"),
    # atomics
    "atomic on read-only": (P(Node.let_bind("x", Expr.atomic_add("a", u(0), u(1)))), BufferAccessError,
                            "atomic on `a`, which is ReadOnly"),
    "atomic on workgroup": (P(Node.let_bind("x", Expr.atomic_add("tile", u(0), u(1)))), BufferAccessError,
                            "atomic on workgroup buffer `tile`"),
    "atomic on f32": (P(Node.let_bind("x", Expr.atomic_add("frw", u(0), u(1)))), TypeMismatch,
                      "atomics are u32 only"),
    "atomic value type": (P(Node.let_bind("x", Expr.atomic_add("rw", u(0), i_(1)))), TypeMismatch,
                          "atomic value has type i32"),
    "atomic cas without expected": (P(Node.let_bind("x", Expr.atomic(AtomicOp.CompareExchange, "rw", u(0), u(1)))),
                                    TypeMismatch, "needs an `expected` value"),
    "atomic add with expected": (P(Node.let_bind("x", Expr.atomic(AtomicOp.Add, "rw", u(0), u(1), u(0)))),
                                 TypeMismatch, "must not have an `expected` value"),
    "atomic ordering": (P(Node.let_bind("x", Expr.atomic(AtomicOp.Add, "rw", u(0), u(1),
                                                         ordering=MemoryOrdering.GridSync))),
                        ControlFlowError, "atomic ordering GridSync is not allowed"),
    "atomic fetch nand": (P(Node.let_bind("x", Expr.atomic(AtomicOp.FetchNand, "rw", u(0), u(1)))),
                          UnsupportedFeature, "atomic op FetchNand is not supported"),
    # control flow
    "barrier divergent": (P(guarded(Node.barrier())), ControlFlowError, "barrier inside divergent control flow"),
    "barrier divergent via var": (P(Node.let_bind("l", Expr.load("a", u(0))),
                                    Node.loop_for("j", u(0), v("l"), [Node.barrier()])), ControlFlowError,
                                  "barrier inside divergent control flow"),
    "barrier ordering": (P(Node.barrier_with_ordering(MemoryOrdering.Relaxed)), ControlFlowError,
                         "barrier ordering Relaxed is not allowed"),
    "unreachable after return": (P(Node.return_(), Node.let_bind("x", u(1))), ControlFlowError,
                                 "unreachable statement after `return`"),
    "fusion hazard": (P(Node.let_bind("x", Expr.load("rw", u(0))), Node.let_bind("y", Expr.atomic_add("rw", u(0), u(1)))),
                      ControlFlowError, "fusion hazard on buffer `rw`"),
    # unsupported kinds
    "indirect dispatch": (P(IndirectDispatch("a", 0)), UnsupportedFeature,
                          "IndirectDispatch is not supported by the Vulkan backend yet"),
    "async load": (P(AsyncLoad("a", "out", u(0), u(4), "t")), UnsupportedFeature, "AsyncLoad is not supported"),
    "async wait": (P(AsyncWait("t")), UnsupportedFeature, "AsyncWait is not supported"),
    "resume": (P(Resume("t")), UnsupportedFeature, "Resume is not supported"),
    # subgroup collectives (types as vyre's expr_rules.rs; placement: the barrier emulation's rule)
    "subgroup i32 value": (P(Node.let_bind("x", Expr.subgroup_shuffle(i_(1), u(0)))), TypeMismatch,
                           "SubgroupShuffle of a i32 value"),
    "subgroup lane i32": (P(Node.let_bind("x", Expr.subgroup_shuffle(u(1), i_(0)))), TypeMismatch,
                          "shuffle lane has type i32"),
    "subgroup f32 bitwise": (P(Node.let_bind("x", Expr.subgroup_xor(f(1.0)))), TypeMismatch, "V047"),
    "subgroup bad op": (P(Node.let_bind("x", Expr.subgroup_reduce("Nand", u(1)))), UnsupportedFeature,
                        "'Nand' is not a SubgroupReduceOp"),
    "subgroup in lane branch": (P(guarded(Node.let_bind("x", Expr.subgroup_add(u(1))))), ControlFlowError,
                                "differs between the lanes of one subgroup"),
    "subgroup x/16 branch": (P(Node.if_then(Expr.lt(Expr.div(Expr.local_x(), u(16)), u(1)),
                                            [Node.let_bind("x", Expr.subgroup_add(u(1)))])),
                             ControlFlowError, "differs between the lanes of one subgroup"),
    "subgroup x/32 on wg 48": (P(Node.if_then(Expr.lt(Expr.div(Expr.local_x(), u(32)), u(1)),
                                              [Node.let_bind("x", Expr.subgroup_add(u(1)))]), wg=(48, 1, 1)),
                               ControlFlowError, "differs between the lanes of one subgroup"),
    "subgroup divergent loop": (P(Node.loop_for("j", u(0), Expr.load("a", u(0)),
                                                [Node.let_bind("x", Expr.subgroup_add(u(1)))])),
                                ControlFlowError, "loop whose bounds depend on the invocation"),
    "subgroup after return": (P(guarded(Node.return_()), Node.let_bind("x", Expr.subgroup_add(u(1)))),
                              ControlFlowError, "after a return under invocation-dependent control flow"),
    "subgroup return in loop": (P(Node.loop_for("j", u(0), u(2), [Node.let_bind("x", Expr.subgroup_add(u(1))),
                                                                  guarded(Node.return_())])),
                                ControlFlowError, "the next iteration's subgroup operation misses this lane"),
    "subgroup with atomic": (P(Node.let_bind("x", Expr.add(Expr.subgroup_add(u(1)),
                                                           Expr.atomic_add("rw", u(0), u(1))))),
                             UnsupportedFeature, "both a subgroup operation and an atomic"),
    "call expr": (P(Node.let_bind("x", Expr.call("op", [u(1)]))), UnsupportedFeature, "Call is not supported"),
    "not a node": (P("store"), ProgramShapeError, "str is not an IR node"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_rejects(name):
    program, cls, fragment = CASES[name]
    with pytest.raises(cls) as info:
        validate(program)
    err = info.value
    assert isinstance(err, ValidationError)
    assert fragment in err.message, err.message
    assert str(err).startswith(err.path + ": ")
    assert " Fix: " in str(err) and err.fix


def test_i32_negate_fix_suggests_subtraction():
    with pytest.raises(TypeMismatch) as info:
        validate(P(Node.let_bind("x", Expr.negate(i_(4)))))
    assert "0 - x" in info.value.fix


def test_barrier_fix_clears_fusion_hazard_and_uniform_barrier_is_fine():
    validate(P(Node.let_bind("x", Expr.load("rw", u(0))), Node.barrier(),
               Node.let_bind("y", Expr.atomic_add("rw", u(0), u(1)))))
    validate(P(Node.if_then(Expr.eq(Expr.workgroup_x(), u(0)), [Node.store("tile", u(0), u(1))]), Node.barrier()))


def test_error_path_names_nested_node():
    p = P(Node.let_bind("i", Expr.gid_x()),
          Node.if_then(Expr.lt(v("i"), u(4)), [
              Node.loop_for("j", u(0), u(4), [Node.let_bind("a1", u(0)), Node.let_bind("a2", u(0)),
                                              Node.assign("zz", u(1))])]))
    with pytest.raises(UndeclaredName) as info:
        validate(p)
    assert info.value.path == "entry[0].region.body[1].if.then[0].loop(j).body[2]"


def test_deep_nesting_and_expression_depth_limits():
    body = [Node.let_bind("x", u(0))]
    for _ in range(V.MAX_NESTING + 1):
        body = [Node.block(body)]
    with pytest.raises(ProgramShapeError, match="nested"):
        validate(P(*body))
    e = u(1)
    for _ in range(V.MAX_EXPR_DEPTH + 2):
        e = Expr.add(e, u(1))
    with pytest.raises(ProgramShapeError, match="expression nested more than"):
        validate(P(Node.let_bind("x", e)))


def test_node_count_limit(monkeypatch):
    monkeypatch.setattr(V, "MAX_NODES", 10)
    with pytest.raises(ProgramShapeError, match="more than 10 statements"):
        validate(P(*[Node.barrier() for _ in range(11)]))


def test_valid_programs_pass():
    from vyre_vk.ops import all_ops
    for e in all_ops():
        validate(e.build())


def test_subgroup_ops_in_subgroup_uniform_control_flow_are_valid():
    """linear_4bit_affine_grouped's pattern: warp = local_x / 32 guards the collectives (x size 256);
    loops with literal bounds; lane-divergent ifs without collectives; a divergent return after them."""
    lx = Expr.local_x()
    validate(P(Node.let_bind("local", lx), Node.let_bind("warp", Expr.div(v("local"), u(32))),
               Node.let_bind("lane", Expr.rem(v("local"), u(32))),
               Node.if_then(Expr.lt(Expr.add(Expr.mul(Expr.workgroup_x(), u(8)), v("warp")), u(5)), [
                   Node.let_bind("w", u(0)),
                   Node.if_then(Expr.eq(v("lane"), u(0)), [Node.assign("w", Expr.load("a", u(0)))]),
                   Node.loop_for("c", u(0), u(3), [
                       Node.let_bind("x", Expr.subgroup_shuffle(v("w"), u(0))),
                       Node.if_then(Expr.lt(Expr.subgroup_add(v("x")), u(9)),  # a reduce is subgroup-uniform
                                    [Node.let_bind("y", Expr.subgroup_ballot(Expr.gt(v("lane"), u(3))))])]),
                   Node.if_then(Expr.shr(Expr.gid_x(), u(5)), [Node.let_bind("z", Expr.subgroup_max(f(1.0)))]),
               ]),
               Node.if_then(Expr.ne(v("lane"), u(0)), [Node.return_()]),
               Node.store("out", v("lane"), Expr.subgroup_local_id()), wg=(256, 1, 1)))
    # y / z axes are subgroup-uniform when the x size is a multiple of 32
    validate(P(Node.if_then(Expr.lt(Expr.local_y(), u(1)), [Node.let_bind("x", Expr.subgroup_add(u(1)))]),
               wg=(32, 2, 1)))
    with pytest.raises(ControlFlowError):
        validate(P(Node.if_then(Expr.lt(Expr.local_y(), u(1)), [Node.let_bind("x", Expr.subgroup_add(u(1)))]),
                   wg=(16, 4, 1)))


def test_validation_types_agree_with_walk_expr_type(monkeypatch):
    """One expression typer: on every registered op, validation's checker (validate_expr.etype, which
    must type every operand and stop at the first fault) gives each expression the type the optimiser's
    vyre_vk.ir.walk.expr_type gives it; walk.expr_type answers None (unknown) for subgroup collectives."""
    from vyre_vk.ir import expr as E, validate_expr, validate_stmt
    from vyre_vk.ir.walk import expr_type
    from vyre_vk.ops import all_ops

    seen: list = []
    checker = validate_expr.etype

    def recording(ctx, e, path, depth=0):
        t = checker(ctx, e, path, depth)
        seen.append((e, {k: b.type for s in ctx.scopes for k, b in s.items()}, ctx.buffers, t))
        return t
    monkeypatch.setattr(validate_expr, "etype", recording)  # its own recursion goes through the global
    monkeypatch.setattr(validate_stmt, "etype", recording)
    for entry in all_ops():
        validate(entry.build())
    assert len(seen) > 5000
    differ = [(e, t, expr_type(e, env, bufs)) for e, env, bufs, t in seen if expr_type(e, env, bufs) != t]
    assert all(w is None and isinstance(e, E.SUBGROUP_COLLECTIVES) for e, t, w in differ), differ[:5]
    assert V.expr_type(P(), Expr.lt(v("i"), u(3)), {"i": U32}) is BOOL  # the public helper is walk's
