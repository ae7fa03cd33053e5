"""Validation of expressions: every operand's type, literal ranges, buffers, operators, casts,
atomics (subgroup collectives: validate_subgroup), and uniformity for barrier placement.

:func:`etype` checks an expression and returns its type. It is validation's own typer, apart
from the optimiser's :func:`vyre_vk.ir.walk.expr_type`: a checker must type *every* operand (to
check it) and stop at the first fault with its path, where walk.expr_type follows only the left
operand and answers None for what it does not know. On a valid program both give the same type
(tests/ir/test_validation.py compares them over every registered op), except that walk.expr_type
answers None for subgroup collectives.

Part of :mod:`vyre_vk.ir.validate`.

Example::

    >>> static_zero(E.Cast(DataType.U32, E.LitI32(0)))
    True
"""
from __future__ import annotations

from typing import Optional

from . import expr as E
from .optable import ATOMICS, BINOPS, CASTS, SAME, UNOPS
from .program import BufferDecl
from .types import ATOMIC_ORDERINGS, BufferAccess, DataType
from .validate_base import (BOOL, F32, I32, MAX_EXPR_DEPTH, U32, UNSUPPORTED, BufferAccessError, ControlFlowError,
                            Ctx, ProgramShapeError, TypeMismatch, UndeclaredName, UnsupportedFeature, err, tname)
from .validate_subgroup import subgroup_type
from .walk import walk_expr

# May differ between invocations of a workgroup (vyre validate/uniformity.rs).
_DIVERGENT = (E.InvocationId, E.LocalId, E.Load, E.Atomic, E.Call, E.SubgroupBallot, E.SubgroupShuffle,
              E.SubgroupReduce, E.SubgroupLocalId)


def divergent(ctx: Ctx, e: E.Expr) -> bool:
    """Uniformity (vyre validate/uniformity.rs): may `e` differ between invocations of a workgroup?"""
    for x in walk_expr(e):
        if isinstance(x, _DIVERGENT):
            return True
        if isinstance(x, E.Var):
            b = ctx.lookup(x.name)
            if b is None or b.divergent:
                return True
    return False


def buffer(ctx: Ctx, name: object, path: str, what: str) -> BufferDecl:
    """The declared buffer `name`, or UndeclaredName ("<what> unknown buffer ...")."""
    b = ctx.buffers.get(name) if isinstance(name, str) else None
    if b is None:
        err(UndeclaredName, path, f"{what} unknown buffer `{name}`.",
            f"declare `{name}` in the program's buffers or fix the name.")
    return b


def lit_range(v: object, lo: int, hi: int, path: str, what: str) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        err(TypeMismatch, path, f"{what} literal {v!r} is out of range [{lo}, {hi}].",
            "use a value that fits the literal's type.")


def static_zero(e: E.Expr) -> bool:
    """V044: the divisor is a literal zero (also through a Cast)."""
    while isinstance(e, E.Cast):
        e = e.value
    if isinstance(e, (E.LitU32, E.LitI32)):
        return e.value == 0
    if isinstance(e, E.LitF32):
        return (e.bits & 0x7FFFFFFF) == 0
    return False


def etype(ctx: Ctx, e: object, path: str, depth: int = 0) -> Optional[DataType]:
    """Check expression `e` (at `path`) and return its type. One function, two frames per level
    (etype and `sub`), as tests/ir/test_hostile_ir.py measures at the depth caps."""
    if depth > MAX_EXPR_DEPTH:
        err(ProgramShapeError, path, f"expression nested more than {MAX_EXPR_DEPTH} levels (V033).",
            "split it with let bindings.")
    if not isinstance(e, E.Expr):
        err(TypeMismatch, path, f"{type(e).__name__} {e!r} is not an Expr.",
            "wrap constants with Expr.u32/i32/f32/bool and names with Expr.var.")
    sub = lambda x, k: etype(ctx, x, f"{path}.{k}", depth + 1)  # noqa: E731
    if isinstance(e, E.LitU32):
        lit_range(e.value, 0, 0xFFFFFFFF, path, "u32")
        return U32
    if isinstance(e, E.LitI32):
        lit_range(e.value, -2**31, 2**31 - 1, path, "i32")
        return I32
    if isinstance(e, E.LitF32):
        lit_range(e.bits, 0, 0xFFFFFFFF, path, "f32 bit pattern")
        return F32
    if isinstance(e, E.LitBool):
        if not isinstance(e.value, bool):
            err(TypeMismatch, path, f"bool literal holds {e.value!r}.", "use Expr.bool(True/False).")
        return BOOL
    if isinstance(e, E.Var):
        b = ctx.lookup(e.name)
        if b is None:
            err(UndeclaredName, path, f"reference to undeclared variable `{e.name}`.",
                f"bind it first with Node.let_bind('{e.name}', ...) in an enclosing scope.")
        return b.type
    if isinstance(e, E.Load):
        buf = buffer(ctx, e.buffer, path, "load from")
        it = sub(e.index, "index")
        if it is not U32:
            err(TypeMismatch, path, f"load index into `{e.buffer}` has type {tname(it)}, expected u32.",
                "cast the index with Expr.cast(DataType.U32, ...).")
        return buf.element
    if isinstance(e, E.BufLen):
        buffer(ctx, e.buffer, path, "buf_len of")
        return U32
    if isinstance(e, (E.InvocationId, E.WorkgroupId, E.LocalId)):
        if not isinstance(e.axis, int) or not 0 <= e.axis <= 2:
            err(TypeMismatch, path, f"{type(e).__name__} axis {e.axis!r} is not 0, 1 or 2.", "use axis 0, 1 or 2.")
        return U32
    if isinstance(e, E.BinOpExpr):
        info = BINOPS.get(e.op)
        if info is None or not info.supported:
            err(UnsupportedFeature, path, f"binary op {getattr(e.op, 'name', e.op)} is {UNSUPPORTED} "
                "(it requires backend subgroup semantics).", "use the subgroup-free formulation of the op.")
        lt, rt = sub(e.left, "left"), sub(e.right, "right")
        for side, t in (("left", lt), ("right", rt)):
            if t is not None and t not in info.types:
                err(TypeMismatch, path, f"{info.name} does not accept a {t.value} {side} operand "
                    f"(accepted: {', '.join(x.value for x in info.types)}).",
                    "cast the operand with Expr.cast(...) to an accepted type.")
        if info.match and lt is not None and rt is not None and lt != rt:
            err(TypeMismatch, path, f"{info.name} operands have different types ({lt.value} and {rt.value}).",
                "insert an explicit Expr.cast so both operands have the same type.")
        if info.static_zero_divisor and static_zero(e.right):
            err(TypeMismatch, path, f"{info.name} by a constant zero (V044).",
                "guard the division or use a non-zero divisor.")
        t = lt if lt is not None else rt
        if info.result == SAME:
            return t
        return info.result  # type: ignore[return-value]
    if isinstance(e, E.UnOpExpr):
        info = UNOPS.get(e.op)
        if info is None:
            err(UnsupportedFeature, path, f"unary op {e.op!r} is {UNSUPPORTED}.", "use a UnOp enum member.")
        t = sub(e.operand, "operand")
        if t is not None and t not in info.types:
            err(TypeMismatch, path, f"{info.name} does not accept a {t.value} operand "
                f"(accepted: {', '.join(x.value for x in info.types)}).",
                "cast the operand to an accepted type" + (" (write 0 - x for i32 negation)."
                                                          if e.op.name == "Negate" else "."))
        return info.result_type(t) if t is not None or info.result != SAME else None
    if isinstance(e, E.Select):
        ct = sub(e.cond, "cond")
        if ct not in (U32, BOOL):
            err(TypeMismatch, path, f"select condition has type {tname(ct)}, expected bool or u32.",
                "compare it explicitly, e.g. Expr.ne(x, Expr.f32(0.0)).")
        a, b = sub(e.true_val, "true_val"), sub(e.false_val, "false_val")
        if a is not None and b is not None and a != b:
            err(TypeMismatch, path, f"select branches have different types ({a.value} and {b.value}) (V029).",
                "cast one branch so both have the same type.")
        return a if a is not None else b
    if isinstance(e, E.Cast):
        if not isinstance(e.target, DataType) or not e.target.supported:
            tgt = getattr(e.target, "value", e.target)
            err(UnsupportedFeature, path, f"cast to {tgt} is {UNSUPPORTED}.",
                "cast to u32, i32, f32, bool, u8 or i8 (mask other widths with bit ops).")
        t = sub(e.value, "value")
        if t is not None and (t, e.target) not in CASTS:
            err(TypeMismatch, path, f"cannot cast {t.value} to {e.target.value} (V012).", "cast through u32.")
        return e.target
    if isinstance(e, E.Fma):
        for k in ("a", "b", "c"):
            t = sub(getattr(e, k), k)
            if t is not F32:
                err(TypeMismatch, path, f"fma operand {k} has type {tname(t)}, expected f32 (V028).",
                    "cast the operand with Expr.cast(DataType.F32, ...).")
        return F32
    if isinstance(e, E.Atomic):
        info = ATOMICS.get(e.op)
        if info is None or not info.supported:
            err(UnsupportedFeature, path, f"atomic op {getattr(e.op, 'name', e.op)} is {UNSUPPORTED}.",
                "use CompareExchange (strong) or a fetch-and-op from the AtomicOp table.")
        buf = buffer(ctx, e.buffer, path, "atomic on")
        if buf.access is BufferAccess.Workgroup:
            err(BufferAccessError, path, f"atomic on workgroup buffer `{e.buffer}` (V025).",
                "atomics need a ReadWrite storage buffer; reduce workgroup memory with barriers instead.")
        if buf.access is not BufferAccess.ReadWrite:
            err(BufferAccessError, path, f"atomic on `{e.buffer}`, which is {buf.access.name} (V009).",
                f"declare `{e.buffer}` with BufferDecl.read_write or BufferDecl.output.")
        if buf.element is not U32:
            err(TypeMismatch, path, f"atomic on `{e.buffer}` of {buf.element.value}; atomics are u32 only (V014).",
                "declare the buffer with DataType.U32.")
        for k in ("index", "value"):
            t = sub(getattr(e, k), k)
            if t is not U32:
                err(TypeMismatch, path, f"atomic {k} has type {tname(t)}, expected u32 (V027).",
                    f"cast the {k} with Expr.cast(DataType.U32, ...).")
        if info.needs_expected != (e.expected is not None):
            err(TypeMismatch, path, f"atomic {info.name} " + ("needs" if info.needs_expected else "must not have")
                + " an `expected` value.", "use Expr.atomic_compare_exchange for compare-and-swap only.")
        if e.expected is not None and sub(e.expected, "expected") is not U32:
            err(TypeMismatch, path, "atomic expected value is not u32.", "cast it to u32.")
        if e.ordering not in ATOMIC_ORDERINGS:
            err(ControlFlowError, path, f"atomic ordering {getattr(e.ordering, 'name', e.ordering)} is not "
                "allowed (V042).", "use Relaxed, Acquire, Release, AcqRel or SeqCst.")
        return U32
    if isinstance(e, (E.SubgroupLocalId, E.SubgroupSize)):
        return U32
    if isinstance(e, E.SUBGROUP_COLLECTIVES):
        return subgroup_type(ctx, e, path, sub)
    if isinstance(e, E.Call):
        err(UnsupportedFeature, path, f"expression kind {E.EXPR_KIND[type(e)]} is {UNSUPPORTED}.",
            "inline the called op.")
    err(TypeMismatch, path, f"{type(e).__name__} is not an IR expression.", "build expressions with Expr helpers.")


__all__ = ["etype", "divergent", "buffer", "lit_range", "static_zero"]
