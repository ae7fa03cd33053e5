"""Validation: every rule a Program must satisfy before the reference or a GPU runs it.

`validate(program)` raises the first problem found as a :class:`ValidationError` (or a
subclass naming the kind of problem). Each error carries `.path` (the node path, e.g.
``entry[0].region.body[1].if.then[0].loop(j).body[2]``), `.message` (what is wrong) and
`.fix` (how to fix it); ``str(err)`` is ``"<path>: <message> Fix: <fix>"``.

Example::

    >>> validate(Program.wrapped([], (64, 1, 1), [Node.assign("x", Expr.u32(1))]))
    Traceback (most recent call last):
    ...
    UndeclaredName: entry[0].region.body[0]: assignment to undeclared variable `x`. Fix: ...
"""
from __future__ import annotations

from dataclasses import dataclass, field

from vyre_vk.errors import VyreError
from typing import Optional

from . import expr as E
from . import node as N
from .optable import ATOMICS, BINOPS, CASTS, UNOPS, AtomicOp, BinOp, SAME
from .program import BufferDecl, Program
from .types import ATOMIC_ORDERINGS, BARRIER_ORDERINGS, BufferAccess, DataType, MemoryOrdering

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool

MAX_NODES = 100_000  # V019
MAX_NESTING = 64  # V018
MAX_EXPR_DEPTH = 128  # V033
MAX_WORKGROUP_INVOCATIONS = 1024  # Vulkan maxComputeWorkGroupInvocations on every desktop GPU
UNSUPPORTED = "not supported by the Vulkan backend yet"


class ValidationError(VyreError, ValueError):
    """A program breaks an IR rule. Attributes: path, message, fix."""

    def __init__(self, path: str, message: str, fix: str):
        self.path, self.message, self.fix = path, message, fix
        super().__init__(f"{path}: {message} Fix: {fix}")


class ProgramShapeError(ValidationError):
    """Entry structure, workgroup size or size limits."""


class BufferDeclError(ValidationError):
    """Buffer declarations: names, bindings, counts, element types, output markers."""


class UndeclaredName(ValidationError):
    """A variable or buffer that is not in scope / not declared."""


class ScopeError(ValidationError):
    """Shadowing, duplicate lets, assignment to loop variables."""


class TypeMismatch(ValidationError):
    """Operand, condition, bound, index or value of the wrong type."""


class BufferAccessError(ValidationError):
    """Store to a read-only buffer, atomics on the wrong kind of buffer, bad constant index."""


class UnsupportedFeature(ValidationError):
    """A type, node or expression the Vulkan backend does not implement yet."""


class ControlFlowError(ValidationError):
    """Barriers in divergent control flow, bad orderings, unreachable code, fusion hazards."""


@dataclass
class _Binding:
    type: Optional[DataType]
    loop_var: bool
    divergent: bool
    sg: str = "d"  # subgroup uniformity level (_SG_*), used only where subgroup ops appear


# Subgroup uniformity levels. vyre has no placement rule for subgroup collectives (its
# reference evaluates every lane's snapshot, wherever the lanes are); ours exists because the
# Vulkan lowering emulates vyre's width-32 subgroups with workgroup barriers (lower/glsl.py):
# a collective must be reached by all 32 lanes of its subgroup together (uniform within the
# subgroup), inside loops whose trip count is the same for the whole workgroup.
_SG_U, _SG_S, _SG_L, _SG_D = "u", "s", "l", "d"  # workgroup-uniform, subgroup-uniform, lane, divergent


@dataclass
class _Ctx:
    program: Program
    buffers: dict[str, BufferDecl]
    scopes: list[dict[str, _Binding]] = field(default_factory=list)
    nodes: int = 0
    sg_ctrl: str = _SG_U              # uniformity of the control flow reaching the current statement
    sg_loops_uniform: bool = True     # every enclosing loop has workgroup-uniform bounds
    sg_returned: Optional[str] = None  # path of a Return under invocation-dependent control flow
    has_sg: bool = False              # the program has subgroup collectives (else levels are not tracked)

    def lookup(self, name: str) -> Optional[_Binding]:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None


def _err(cls, path: str, message: str, fix: str):
    raise cls(path, message, fix)


def _tname(t: Optional[DataType]) -> str:
    return t.value if t is not None else "unknown"


# ----------------------------------------------------------------------------- program level
def validate(program: Program) -> None:
    """Raise a ValidationError (subclass) for the first broken rule; return None if valid."""
    if not isinstance(program, Program):
        _err(ProgramShapeError, "program", f"expected a Program, got {type(program).__name__}.",
             "build it with Program.wrapped(buffers, workgroup_size, entry).")
    _check_workgroup(program)
    buffers = _check_buffers(program)
    ctx = _Ctx(program, buffers)
    ctx.has_sg = _has_collective(program.entry)
    if not program.entry:
        _err(ProgramShapeError, "entry", "program entry has no top-level Region (it is empty).",
             "build the program with Program.wrapped(...), which wraps the body in a Region.")
    for i, n in enumerate(program.entry):
        if not isinstance(n, N.Region):
            _err(ProgramShapeError, f"entry[{i}]",
                 f"program entry node {i} is `{type(n).__name__}` instead of a Region.",
                 "build the program with Program.wrapped(...) or wrap the body with wrap_anonymous(op_id, body).")
    _check_list(ctx, program.entry, "entry", depth=0, divergent=False)


def _check_workgroup(p: Program) -> None:
    wg = p.workgroup_size
    if len(wg) != 3 or not all(isinstance(x, int) and not isinstance(x, bool) for x in wg):
        _err(ProgramShapeError, "workgroup_size", f"workgroup size {wg!r} is not three integers.",
             "give [x, y, z], e.g. [64, 1, 1].")
    if any(x < 1 for x in wg):
        _err(ProgramShapeError, "workgroup_size", f"workgroup size {list(wg)} has a zero or negative dimension.",
             "every dimension must be >= 1, e.g. [64, 1, 1].")
    if wg[0] * wg[1] * wg[2] > MAX_WORKGROUP_INVOCATIONS:
        _err(ProgramShapeError, "workgroup_size",
             f"workgroup size {list(wg)} has {wg[0] * wg[1] * wg[2]} invocations, more than "
             f"{MAX_WORKGROUP_INVOCATIONS}.", f"use at most {MAX_WORKGROUP_INVOCATIONS} invocations per workgroup.")


def _check_buffers(p: Program) -> dict[str, BufferDecl]:
    out: dict[str, BufferDecl] = {}
    bindings: dict[int, str] = {}
    outputs = []
    for i, b in enumerate(p.buffers):
        path = f"buffers[{i}]"
        if not isinstance(b, BufferDecl):
            _err(BufferDeclError, path, f"expected a BufferDecl, got {type(b).__name__}.",
                 "declare buffers with BufferDecl.read/output/storage/workgroup.")
        if not isinstance(b.name, str) or not b.name:
            _err(BufferDeclError, path, "buffer has an empty name.", "give every buffer a non-empty name.")
        path = f"buffers[{i}]({b.name})"
        if not isinstance(b.access, BufferAccess) or not isinstance(b.element, DataType):
            _err(BufferDeclError, path, "buffer access or element is not a BufferAccess/DataType.",
                 "use the BufferAccess and DataType enums.")
        if b.name in out:
            _err(BufferDeclError, path, f"duplicate buffer name `{b.name}`.", "give every buffer a unique name.")
        if not b.element.supported:
            _err(UnsupportedFeature, path,
                 f"element type {b.element.value} is {UNSUPPORTED}.",
                 "use u32, i32, f32 or bool (pack narrower data into u32 words).")
        if not isinstance(b.count, int) or not 0 <= b.count <= 0xFFFFFFFF:
            _err(BufferDeclError, path, f"count {b.count!r} is not a u32.", "use a count in [0, 2^32).")
        if b.is_workgroup:
            if b.count == 0:
                _err(BufferDeclError, path, f"workgroup buffer `{b.name}` has count 0.",
                     "give workgroup memory a positive element count: BufferDecl.workgroup(name, count, dtype).")
        else:
            if not isinstance(b.binding, int) or not 0 <= b.binding <= 0xFFFFFFFF:
                _err(BufferDeclError, path, f"binding {b.binding!r} is not a u32.", "use a binding slot >= 0.")
            if b.binding in bindings:
                _err(BufferDeclError, path,
                     f"binding {b.binding} of `{b.name}` is already used by `{bindings[b.binding]}`.",
                     "give every storage buffer its own binding slot.")
            bindings[b.binding] = b.name
        if b.is_output:
            outputs.append(b.name)
        if b.backend_allocated and b.count == 0:
            _err(BufferDeclError, path, f"output buffer `{b.name}` has count 0 (it would be allocated with 0 bytes).",
                 "declare outputs with .with_count(n) where n >= 1.")
        if b.output_byte_range is not None:
            lo, hi = b.output_byte_range
            limit = b.count * b.element.size
            if not (0 <= lo <= hi) or (b.count and hi > limit):
                _err(BufferDeclError, path, f"output byte range {lo}..{hi} is invalid for {limit} bytes.",
                     "use start <= end <= count * element size.")
        out[b.name] = b
    if len(outputs) > 1:
        _err(BufferDeclError, "buffers", f"program declares {len(outputs)} output buffers ({', '.join(outputs)}).",
             "mark at most one buffer with BufferDecl.output; use BufferDecl.read_write for the others.")
    return out


# ----------------------------------------------------------------------------- statements
def _check_list(ctx: _Ctx, nodes: tuple, path: str, depth: int, divergent: bool,
                new_scope: Optional[dict[str, _Binding]] = None) -> None:
    if depth > MAX_NESTING:
        _err(ProgramShapeError, path, f"statements nested {depth} levels deep (limit {MAX_NESTING}).",
             "flatten the program or split it into several programs.")
    if not isinstance(nodes, tuple):
        _err(ProgramShapeError, path, f"statement list is a {type(nodes).__name__}, not a tuple.",
             "build nodes with the Node helpers (they store tuples).")
    ctx.scopes.append(new_scope if new_scope is not None else {})
    # Fusion hazard tracking (vyre validate.rs::report_alias_hazards), reset by barriers.
    plain_reads: set[str] = set()
    atomics: set[str] = set()
    for i, n in enumerate(nodes):
        npath = f"{path}[{i}]"
        if i > 0 and isinstance(nodes[i - 1], N.Return):
            _err(ControlFlowError, npath, "unreachable statement after `return`.",
                 "remove the statements after Return or move the Return to the end of the list.")
        _check_node(ctx, n, npath, depth, divergent)
        if isinstance(n, N.Barrier):
            plain_reads.clear()
            atomics.clear()
            continue
        reads, atoms = _buffer_uses(n)
        clash = (reads & atomics) | (atoms & plain_reads)
        if clash:
            b = sorted(clash)[0]
            _err(ControlFlowError, npath,
                 f"fusion hazard on buffer `{b}`: one statement accesses it non-atomically and a sibling "
                 "statement accesses it atomically, with no barrier between them.",
                 "insert Node.barrier() between the two statements, or use atomics for every access.")
        plain_reads |= reads
        atomics |= atoms
    ctx.scopes.pop()


def _buffer_uses(n: N.Node) -> tuple[set[str], set[str]]:
    reads: set[str] = set()
    atoms: set[str] = set()
    stack: list = [n]
    while stack:
        x = stack.pop()
        if isinstance(x, N.Node):
            if isinstance(x, N.Store):
                reads.add(x.buffer)
            stack.extend(N.node_exprs(x))
            for _, body in N.node_bodies(x):
                stack.extend(body)
        elif isinstance(x, E.Expr):
            for e in E.walk(x):
                if isinstance(e, (E.Load, E.BufLen)):
                    reads.add(e.buffer)
                elif isinstance(e, E.Atomic):
                    atoms.add(e.buffer)
    return reads, atoms


def _check_name(name, path: str, what: str) -> None:
    if not isinstance(name, str) or not name:
        _err(ScopeError, path, f"{what} name {name!r} is empty or not a string.", f"give the {what} a non-empty name.")


def _bind(ctx: _Ctx, name: str, b: _Binding, path: str, what: str) -> None:
    _check_name(name, path, what)
    if name in ctx.scopes[-1] and not ctx.scopes[-1][name].loop_var:
        _err(ScopeError, path, f"duplicate `let {name}` in the same statement list (V032).",
             f"use Node.assign('{name}', ...) to update it, or pick a new name.")
    if ctx.lookup(name) is not None:
        _err(ScopeError, path, f"`{name}` shadows a binding that is still in scope (V008).",
             "rename the inner binding; vyre never allows shadowing.")
    ctx.scopes[-1][name] = b


def _check_node(ctx: _Ctx, n, path: str, depth: int, divergent: bool) -> None:
    ctx.nodes += 1
    if ctx.nodes > MAX_NODES:
        _err(ProgramShapeError, path, f"program has more than {MAX_NODES} statements (V019).",
             "split the program into several programs.")
    if ctx.has_sg:
        _check_subgroup_statement(n, path)
    if isinstance(n, N.Let):
        t = _etype(ctx, n.value, path + ".value")
        lvl = _sg_bind_level(_sg_level(ctx, n.value), ctx.sg_ctrl)
        _bind(ctx, n.name, _Binding(t, False, divergent or _divergent(ctx, n.value), lvl), path, "let")
    elif isinstance(n, N.Assign):
        _check_name(n.name, path, "assigned variable")
        b = ctx.lookup(n.name)
        if b is None:
            _err(UndeclaredName, path, f"assignment to undeclared variable `{n.name}`.",
                 f"declare it first with Node.let_bind('{n.name}', ...) in an enclosing scope.")
        if b.loop_var:
            _err(ScopeError, path, f"assignment to loop variable `{n.name}` (V011).",
                 "loop variables are immutable; copy it into a let binding and assign that.")
        t = _etype(ctx, n.value, path + ".value")
        if b.type is not None and t is not None and t != b.type:
            _err(TypeMismatch, path, f"assigning a {t.value} value to `{n.name}`, which is {b.type.value} (V045).",
                 f"cast the value with Expr.cast(DataType.{b.type.name}, ...) or bind a new variable.")
        if divergent or _divergent(ctx, n.value):
            b.divergent = True
        b.sg = _sg_join(b.sg, _sg_level(ctx, n.value), ctx.sg_ctrl)
    elif isinstance(n, N.Store):
        buf = _buffer(ctx, n.buffer, path, "store to")
        if not buf.access.writable:
            _err(BufferAccessError, path, f"store to `{n.buffer}`, which is {buf.access.name}.",
                 f"declare `{n.buffer}` with BufferDecl.output/read_write, or store to another buffer.")
        it = _etype(ctx, n.index, path + ".index")
        if it is not U32:
            _err(TypeMismatch, path, f"store index has type {_tname(it)}, expected u32.",
                 "cast the index with Expr.cast(DataType.U32, ...).")
        vt = _etype(ctx, n.value, path + ".value")
        if vt is not None and not _store_compatible(buf.element, vt):
            _err(TypeMismatch, path, f"storing a {vt.value} value into `{n.buffer}` of {buf.element.value}.",
                 f"cast the value with Expr.cast(DataType.{buf.element.name}, ...).")
        if isinstance(n.index, E.LitU32) and buf.count and n.index.value >= buf.count:
            _err(BufferAccessError, path, f"constant index {n.index.value} is out of range for `{n.buffer}` "
                 f"with {buf.count} elements (V036).", f"use an index below {buf.count}.")
    elif isinstance(n, N.If):
        t = _etype(ctx, n.cond, path + ".cond")
        if t not in (U32, BOOL):
            _err(TypeMismatch, path, f"if condition has type {_tname(t)}, expected bool or u32.",
                 "compare it explicitly, e.g. Expr.ne(x, Expr.f32(0.0)).")
        div = divergent or _divergent(ctx, n.cond)
        saved = ctx.sg_ctrl
        ctx.sg_ctrl = _sg_join(saved, _sg_level(ctx, n.cond))
        _check_list(ctx, n.then, path + ".if.then", depth + 1, div)
        _check_list(ctx, n.otherwise, path + ".if.else", depth + 1, div)
        ctx.sg_ctrl = saved
    elif isinstance(n, N.Loop):
        for k, e in (("from", n.from_), ("to", n.to)):
            t = _etype(ctx, e, f"{path}.{k}")
            if t is not U32:
                _err(TypeMismatch, path, f"loop `{n.var}` bound `{k}` has type {_tname(t)}, expected u32.",
                     "cast the bound with Expr.cast(DataType.U32, ...).")
        div = divergent or _divergent(ctx, n.from_) or _divergent(ctx, n.to)
        lpath = f"{path}.loop({n.var}).body"
        _check_name(n.var, path, "loop variable")
        if ctx.lookup(n.var) is not None:
            _err(ScopeError, path, f"loop variable `{n.var}` shadows a binding that is still in scope (V008).",
                 "rename the loop variable.")
        bounds = _sg_join(_sg_level(ctx, n.from_), _sg_level(ctx, n.to))
        saved = (ctx.sg_ctrl, ctx.sg_loops_uniform, ctx.sg_returned)
        ctx.sg_ctrl = _sg_join(saved[0], bounds)
        ctx.sg_loops_uniform = saved[1] and bounds == _SG_U
        _check_list(ctx, n.body, lpath, depth + 1, div, {n.var: _Binding(U32, True, div, ctx.sg_ctrl)})
        if saved[2] is None and ctx.sg_returned is not None and _has_collective(n.body):
            _err(ControlFlowError, ctx.sg_returned, "return under invocation-dependent control flow inside a loop "
                 "that runs subgroup operations: the next iteration's subgroup operation misses this lane.",
                 "guard the rest of the loop body with an if instead of returning early.")
        ctx.sg_ctrl, ctx.sg_loops_uniform = saved[0], saved[1]
    elif isinstance(n, N.Block):
        _check_list(ctx, n.body, path + ".block.body", depth + 1, divergent)
    elif isinstance(n, N.Region):
        if not isinstance(n.generator, str):
            _err(ProgramShapeError, path, "region generator is not a string.", "use the op id as generator.")
        _check_list(ctx, n.body, path + ".region.body", depth + 1, divergent)
    elif isinstance(n, N.Barrier):
        if n.ordering not in BARRIER_ORDERINGS:
            _err(ControlFlowError, path, f"barrier ordering {getattr(n.ordering, 'name', n.ordering)} is "
                 "not allowed (V043).", "use MemoryOrdering.SeqCst (Node.barrier()).")
        if divergent:
            _err(ControlFlowError, path, "barrier inside divergent control flow (V010): not every invocation "
                 "of the workgroup is guaranteed to reach it.",
                 "move the barrier out of if/loop statements whose condition depends on the invocation id, "
                 "a load or an atomic.")
    elif isinstance(n, N.Return):
        if divergent and ctx.sg_returned is None:
            ctx.sg_returned = path
    elif isinstance(n, N.Trap):
        _etype(ctx, n.address, path + ".address")
        if not isinstance(n.tag, str):
            _err(ProgramShapeError, path, "trap tag is not a string.", "give the trap a string tag.")
    elif isinstance(n, N.UNSUPPORTED_NODES):
        _err(UnsupportedFeature, path, f"node kind {type(n).__name__} is {UNSUPPORTED}.",
             "express it with loads, stores and loops, or run the program on vyre's own backends.")
    else:
        _err(ProgramShapeError, path, f"{type(n).__name__} is not an IR node.",
             "build statements with the Node helpers (let_bind, store, if_then, loop_for, ...).")


def _store_compatible(elem: DataType, vt: DataType) -> bool:
    return elem == vt or {elem, vt} in ({U32, BOOL}, {U32, I32})


def _buffer(ctx: _Ctx, name, path: str, what: str) -> BufferDecl:
    b = ctx.buffers.get(name) if isinstance(name, str) else None
    if b is None:
        _err(UndeclaredName, path, f"{what} unknown buffer `{name}`.",
             f"declare `{name}` in the program's buffers or fix the name.")
    return b


# ----------------------------------------------------------------------------- expressions
def _divergent(ctx: _Ctx, e: E.Expr) -> bool:
    """Uniformity (vyre validate/uniformity.rs): may `e` differ between invocations of a workgroup?"""
    for x in E.walk(e):
        if isinstance(x, (E.InvocationId, E.LocalId, E.Load, E.Atomic, E.Call, E.SubgroupBallot,
                          E.SubgroupShuffle, E.SubgroupReduce, E.SubgroupLocalId)):
            return True
        if isinstance(x, E.Var):
            b = ctx.lookup(x.name)
            if b is None or b.divergent:
                return True
    return False


def expr_type(program: Program, e: E.Expr, env: Optional[dict[str, DataType]] = None) -> Optional[DataType]:
    """Static type of `e` given variable types `env` (for tools like the lowering)."""
    ctx = _Ctx(program, {b.name: b for b in program.buffers})
    ctx.scopes.append({k: _Binding(v, False, False) for k, v in (env or {}).items()})
    return _etype(ctx, e, "expr")


def _etype(ctx: _Ctx, e, path: str, depth: int = 0) -> Optional[DataType]:
    if depth > MAX_EXPR_DEPTH:
        _err(ProgramShapeError, path, f"expression nested more than {MAX_EXPR_DEPTH} levels (V033).",
             "split it with let bindings.")
    if not isinstance(e, E.Expr):
        _err(TypeMismatch, path, f"{type(e).__name__} {e!r} is not an Expr.",
             "wrap constants with Expr.u32/i32/f32/bool and names with Expr.var.")
    sub = lambda x, k: _etype(ctx, x, f"{path}.{k}", depth + 1)  # noqa: E731
    if isinstance(e, E.LitU32):
        _lit_range(e.value, 0, 0xFFFFFFFF, path, "u32")
        return U32
    if isinstance(e, E.LitI32):
        _lit_range(e.value, -2**31, 2**31 - 1, path, "i32")
        return I32
    if isinstance(e, E.LitF32):
        _lit_range(e.bits, 0, 0xFFFFFFFF, path, "f32 bit pattern")
        return F32
    if isinstance(e, E.LitBool):
        if not isinstance(e.value, bool):
            _err(TypeMismatch, path, f"bool literal holds {e.value!r}.", "use Expr.bool(True/False).")
        return BOOL
    if isinstance(e, E.Var):
        b = ctx.lookup(e.name)
        if b is None:
            _err(UndeclaredName, path, f"reference to undeclared variable `{e.name}`.",
                 f"bind it first with Node.let_bind('{e.name}', ...) in an enclosing scope.")
        return b.type
    if isinstance(e, E.Load):
        buf = _buffer(ctx, e.buffer, path, "load from")
        it = sub(e.index, "index")
        if it is not U32:
            _err(TypeMismatch, path, f"load index into `{e.buffer}` has type {_tname(it)}, expected u32.",
                 "cast the index with Expr.cast(DataType.U32, ...).")
        return buf.element
    if isinstance(e, E.BufLen):
        _buffer(ctx, e.buffer, path, "buf_len of")
        return U32
    if isinstance(e, (E.InvocationId, E.WorkgroupId, E.LocalId)):
        if not isinstance(e.axis, int) or not 0 <= e.axis <= 2:
            _err(TypeMismatch, path, f"{type(e).__name__} axis {e.axis!r} is not 0, 1 or 2.", "use axis 0, 1 or 2.")
        return U32
    if isinstance(e, E.BinOpExpr):
        info = BINOPS.get(e.op)
        if info is None or not info.supported:
            _err(UnsupportedFeature, path, f"binary op {getattr(e.op, 'name', e.op)} is {UNSUPPORTED} "
                 "(it requires backend subgroup semantics).", "use the subgroup-free formulation of the op.")
        lt, rt = sub(e.left, "left"), sub(e.right, "right")
        for side, t in (("left", lt), ("right", rt)):
            if t is not None and t not in info.types:
                _err(TypeMismatch, path, f"{info.name} does not accept a {t.value} {side} operand "
                     f"(accepted: {', '.join(x.value for x in info.types)}).",
                     "cast the operand with Expr.cast(...) to an accepted type.")
        if info.match and lt is not None and rt is not None and lt != rt:
            _err(TypeMismatch, path, f"{info.name} operands have different types ({lt.value} and {rt.value}).",
                 "insert an explicit Expr.cast so both operands have the same type.")
        if info.static_zero_divisor and _static_zero(e.right):
            _err(TypeMismatch, path, f"{info.name} by a constant zero (V044).",
                 "guard the division or use a non-zero divisor.")
        t = lt if lt is not None else rt
        if info.result == SAME:
            return t
        return info.result  # type: ignore[return-value]
    if isinstance(e, E.UnOpExpr):
        info = UNOPS.get(e.op)
        if info is None:
            _err(UnsupportedFeature, path, f"unary op {e.op!r} is {UNSUPPORTED}.", "use a UnOp enum member.")
        t = sub(e.operand, "operand")
        if t is not None and t not in info.types:
            _err(TypeMismatch, path, f"{info.name} does not accept a {t.value} operand "
                 f"(accepted: {', '.join(x.value for x in info.types)}).",
                 "cast the operand to an accepted type" + (" (write 0 - x for i32 negation)."
                                                           if e.op.name == "Negate" else "."))
        return info.result_type(t) if t is not None or info.result != SAME else None
    if isinstance(e, E.Select):
        ct = sub(e.cond, "cond")
        if ct not in (U32, BOOL):
            _err(TypeMismatch, path, f"select condition has type {_tname(ct)}, expected bool or u32.",
                 "compare it explicitly, e.g. Expr.ne(x, Expr.f32(0.0)).")
        a, b = sub(e.true_val, "true_val"), sub(e.false_val, "false_val")
        if a is not None and b is not None and a != b:
            _err(TypeMismatch, path, f"select branches have different types ({a.value} and {b.value}) (V029).",
                 "cast one branch so both have the same type.")
        return a if a is not None else b
    if isinstance(e, E.Cast):
        if not isinstance(e.target, DataType) or not e.target.supported:
            tgt = getattr(e.target, "value", e.target)
            _err(UnsupportedFeature, path, f"cast to {tgt} is {UNSUPPORTED}.",
                 "cast to u32, i32, f32 or bool (mask narrow values with bit ops).")
        t = sub(e.value, "value")
        if t is not None and (t, e.target) not in CASTS:
            _err(TypeMismatch, path, f"cannot cast {t.value} to {e.target.value} (V012).", "cast through u32.")
        return e.target
    if isinstance(e, E.Fma):
        for k in ("a", "b", "c"):
            t = sub(getattr(e, k), k)
            if t is not F32:
                _err(TypeMismatch, path, f"fma operand {k} has type {_tname(t)}, expected f32 (V028).",
                     "cast the operand with Expr.cast(DataType.F32, ...).")
        return F32
    if isinstance(e, E.Atomic):
        info = ATOMICS.get(e.op)
        if info is None or not info.supported:
            _err(UnsupportedFeature, path, f"atomic op {getattr(e.op, 'name', e.op)} is {UNSUPPORTED}.",
                 "use CompareExchange (strong) or a fetch-and-op from the AtomicOp table.")
        buf = _buffer(ctx, e.buffer, path, "atomic on")
        if buf.access is BufferAccess.Workgroup:
            _err(BufferAccessError, path, f"atomic on workgroup buffer `{e.buffer}` (V025).",
                 "atomics need a ReadWrite storage buffer; reduce workgroup memory with barriers instead.")
        if buf.access is not BufferAccess.ReadWrite:
            _err(BufferAccessError, path, f"atomic on `{e.buffer}`, which is {buf.access.name} (V009).",
                 f"declare `{e.buffer}` with BufferDecl.read_write or BufferDecl.output.")
        if buf.element is not U32:
            _err(TypeMismatch, path, f"atomic on `{e.buffer}` of {buf.element.value}; atomics are u32 only (V014).",
                 "declare the buffer with DataType.U32.")
        for k in ("index", "value"):
            t = sub(getattr(e, k), k)
            if t is not U32:
                _err(TypeMismatch, path, f"atomic {k} has type {_tname(t)}, expected u32 (V027).",
                     f"cast the {k} with Expr.cast(DataType.U32, ...).")
        if info.needs_expected != (e.expected is not None):
            _err(TypeMismatch, path, f"atomic {info.name} " + ("needs" if info.needs_expected else "must not have")
                 + " an `expected` value.", "use Expr.atomic_compare_exchange for compare-and-swap only.")
        if e.expected is not None and sub(e.expected, "expected") is not U32:
            _err(TypeMismatch, path, "atomic expected value is not u32.", "cast it to u32.")
        if e.ordering not in ATOMIC_ORDERINGS:
            _err(ControlFlowError, path, f"atomic ordering {getattr(e.ordering, 'name', e.ordering)} is not "
                 "allowed (V042).", "use Relaxed, Acquire, Release, AcqRel or SeqCst.")
        return U32
    if isinstance(e, (E.SubgroupLocalId, E.SubgroupSize)):
        return U32
    if isinstance(e, E.SUBGROUP_COLLECTIVES):
        return _subgroup_type(ctx, e, path, sub)
    if isinstance(e, E.Call):
        _err(UnsupportedFeature, path, f"expression kind {E.EXPR_KIND[type(e)]} is {UNSUPPORTED}.",
             "inline the called op.")
    _err(TypeMismatch, path, f"{type(e).__name__} is not an IR expression.", "build expressions with Expr helpers.")
    return None


def _subgroup_type(ctx: _Ctx, e: E.Expr, path: str, sub) -> Optional[DataType]:
    """Types (vyre expr_rules.rs, V047) and placement of a subgroup collective."""
    kind = E.EXPR_KIND[type(e)]
    if ctx.sg_ctrl not in (_SG_U, _SG_S):
        _err(ControlFlowError, path, f"{kind} under control flow that differs between the lanes of one "
             "subgroup: vyre's result would mix lanes that did not reach it.",
             "move the subgroup operation out of the if/loop, or make the condition the same for all 32 lanes "
             "of a subgroup (e.g. a function of local_x / 32 with a workgroup x size that is a multiple of 32).")
    if not ctx.sg_loops_uniform:
        _err(ControlFlowError, path, f"{kind} inside a loop whose bounds depend on the invocation: the Vulkan "
             "backend needs the same trip count in the whole workgroup around a subgroup operation.",
             "give the loop workgroup-uniform bounds (literals, buf_len, workgroup ids) and guard the body instead.")
    if ctx.sg_returned is not None:
        _err(ControlFlowError, path, f"{kind} after a return under invocation-dependent control flow "
             f"({ctx.sg_returned}): the lanes that returned cannot take part in it on the GPU.",
             "guard the rest of the body with an if instead of returning early.")
    if isinstance(e, E.SubgroupBallot):
        t = sub(e.cond, "cond")
        if t is not None and t not in (U32, I32, F32, BOOL):
            _err(TypeMismatch, path, f"ballot condition has type {t.value}.", "use a bool or u32 condition.")
        return U32
    if isinstance(e, E.SubgroupReduce) and e.op not in E.SUBGROUP_REDUCE_OPS:
        _err(UnsupportedFeature, path, f"subgroup reduce op {e.op!r} is not a SubgroupReduceOp.",
             f"use one of {', '.join(E.SUBGROUP_REDUCE_OPS)}.")
    t = sub(e.value, "value")
    if t is not None and t not in (U32, F32):
        _err(TypeMismatch, path, f"{kind} of a {t.value} value: vyre's reference exchanges only u32 or f32 lanes.",
             "cast the value to u32 or f32 (and back) around the subgroup operation.")
    if isinstance(e, E.SubgroupShuffle):
        lt = sub(e.lane, "lane")
        if lt is not U32:
            _err(TypeMismatch, path, f"shuffle lane has type {_tname(lt)}, expected u32.",
                 "cast the lane with Expr.cast(DataType.U32, ...).")
    elif t is F32 and e.op in ("And", "Or", "Xor"):
        _err(TypeMismatch, path, f"V047: subgroup {e.op} is a bitwise reduction and rejects f32 operands.",
             "use a u32 operand for And/Or/Xor, or Add/Mul/Min/Max for a float reduction.")
    return t


def _has_collective(nodes) -> bool:
    """Any subgroup collective in `nodes` (tolerates malformed trees: validation reports those)."""
    stack = list(nodes) if isinstance(nodes, (tuple, list)) else []
    while stack:
        n = stack.pop()
        for e in N.node_exprs(n):
            if isinstance(e, E.Expr) and any(isinstance(x, E.SUBGROUP_COLLECTIVES) for x in E.walk(e)):
                return True
        for _, body in N.node_bodies(n):
            if isinstance(body, (tuple, list)):
                stack.extend(body)
    return False


def _check_subgroup_statement(n, path: str) -> None:
    """The lowering evaluates a statement's collectives before the rest of it, so an atomic in the
    same statement would run in a different order than in the reference."""
    found = [x for e in N.node_exprs(n) for x in E.walk(e)]
    if any(isinstance(x, E.SUBGROUP_COLLECTIVES) for x in found) and any(isinstance(x, E.Atomic) for x in found):
        _err(UnsupportedFeature, path, "a statement with both a subgroup operation and an atomic.",
             "bind the atomic's result with Node.let_bind first, then use the variable.")


def _sg_join(*levels: str) -> str:
    """Uniformity of a value computed from values of these levels (a lane-linear value is divergent
    once combined with anything)."""
    out = _SG_U
    for lv in levels:
        if lv == _SG_U:
            continue
        if lv == _SG_L or out not in (_SG_U, lv):
            return _SG_D
        out = lv
    return out


def _sg_bind_level(value: str, ctrl: str) -> str:
    """A let keeps a lane-linear value's level only in workgroup-uniform control flow."""
    return value if ctrl == _SG_U else _sg_join(value, ctrl)


def _sg_level(ctx: _Ctx, e: E.Expr) -> str:
    """Subgroup uniformity of `e`: _SG_U (same in the workgroup), _SG_S (same in each 32-lane
    subgroup), _SG_L (local/global x with x size a multiple of 32: 32 consecutive values over each
    subgroup) or _SG_D."""
    if not ctx.has_sg:
        return _SG_D
    sx, sy, _ = ctx.program.workgroup_size
    w = E.SUBGROUP_WIDTH
    if isinstance(e, (E.LitU32, E.LitI32, E.LitF32, E.LitBool, E.BufLen, E.WorkgroupId, E.SubgroupSize)):
        return _SG_U
    if isinstance(e, E.Var):
        b = ctx.lookup(e.name)
        return b.sg if b is not None else _SG_D
    if isinstance(e, (E.LocalId, E.InvocationId)):
        rows = {0: None, 1: sx, 2: sx * sy}.get(e.axis)
        if e.axis == 0:
            return _SG_L if sx % w == 0 else _SG_D
        return _SG_S if rows is not None and rows % w == 0 else _SG_D
    if isinstance(e, E.Load):
        b = ctx.buffers.get(e.buffer)
        ro = b is not None and b.access in (BufferAccess.ReadOnly, BufferAccess.Uniform)
        return _SG_S if ro and _sg_level(ctx, e.index) in (_SG_U, _SG_S) else _SG_D
    if isinstance(e, (E.SubgroupReduce, E.SubgroupBallot)):
        return _SG_S
    if isinstance(e, E.SubgroupShuffle):
        return _SG_S if _sg_level(ctx, e.lane) in (_SG_U, _SG_S) else _SG_D
    if isinstance(e, E.BinOpExpr) and isinstance(e.right, E.LitU32) and _sg_level(ctx, e.left) == _SG_L:
        c = e.right.value
        if (e.op is BinOp.Div and c and c % w == 0) or (e.op is BinOp.Shr and 5 <= c < 32):
            return _SG_S  # x / 32k or x >> 5+: constant over 32 aligned consecutive values
        return _SG_D
    if isinstance(e, (E.Atomic, E.Call, E.SubgroupLocalId)):
        return _SG_D
    return _sg_join(*(_sg_level(ctx, k) for k in E.children(e)))


def _lit_range(v, lo: int, hi: int, path: str, what: str) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        _err(TypeMismatch, path, f"{what} literal {v!r} is out of range [{lo}, {hi}].",
             "use a value that fits the literal's type.")


def _static_zero(e: E.Expr) -> bool:
    """V044: the divisor is a literal zero (also through a Cast)."""
    while isinstance(e, E.Cast):
        e = e.value
    if isinstance(e, (E.LitU32, E.LitI32)):
        return e.value == 0
    if isinstance(e, E.LitF32):
        return (e.bits & 0x7FFFFFFF) == 0
    return False
