"""The lowerer's state and the small services every part of it uses (output, scopes, templates).

The lowerer is one class built in layers, each in its own module: this base, expressions
(exprs.py), statements (stmts.py) and the shader assembly (glsl.py).
"""
from __future__ import annotations

import re
from typing import Mapping, Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import BufferDecl, Program
from ..ir.types import DataType
from ..ir.validate import _has_collective
from . import bounds
from .helpers import BRANCHLESS, GLSL_HELPERS
from .fastmath import fast_table
from .ffmath64 import GLSL as FLOAT64
from .ieee import FUSED
from .names import glsl_names
from .result import LoweringError
from .shared_rcp import Uniformity
from .speculate import SPECULATIVE, SPECULATIVE_FUSED, Speculation
from .spelling import CAST_GLSL, STORAGE_TYPE, VALUE_TYPE, Spelling
from .vector import VectorPlan
from vyre_vk.ir.paths import labelled_bodies

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool

INDENT = "    "
_HELPER_CALL = re.compile(r"\bvyre_\w+")


def fill(template: str, **operands: str) -> str:
    """A spelling-table template with its operands filled in."""
    return template.format(**operands)


def unwrap(code: str) -> str:
    """Drop one pair of parentheses enclosing the whole of `code` (`if ((a < b))` reads badly)."""
    if not (code.startswith("(") and code.endswith(")")):
        return code
    depth = 0
    for i, ch in enumerate(code):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(code) - 1:
            return code  # the first "(" closes early: "(a) + (b)"
    return code[1:-1]


def helper_calls(text: str, known: Mapping[str, str]) -> list[str]:
    """The helper functions (names in `known`) that GLSL `text` calls, in order of appearance."""
    return [m for m in _HELPER_CALL.findall(text) if m in known]


def _assigned_names(nodes: tuple) -> set[str]:
    """Every variable some `Assign` writes (their ranges are not tracked)."""
    out: set[str] = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if isinstance(n, N.Assign):
            out.add(n.name)
        for _, body in labelled_bodies(n):
            stack.extend(body)
    return out


def exchanged_buffers(program: Program) -> frozenset[str]:
    """Storage buffers the program both writes and reads (stores, atomics, async copies, loads):
    the only ones through which one invocation can see another's writes within the dispatch.
    A barrier needs a buffer fence, and a buffer needs ``coherent``, only for these; the tiles
    the stream pass passes through workgroup memory need neither (a device-scope fence per tile).

    >>> from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program
    >>> p = Program([BufferDecl.read("a", 0, DataType.U32), BufferDecl.output("o", 1, DataType.U32)], (1, 1, 1),
    ...             [Node.store("o", Expr.u32(0), Expr.load("a", Expr.u32(0)))])
    >>> sorted(exchanged_buffers(p))
    []
    """
    from ..ir.walk import node_all_exprs, walk_nodes

    written: set[str] = set()
    read: set[str] = set()
    for n in walk_nodes(program.entry):
        if isinstance(n, N.Store):
            written.add(n.buffer)
        elif isinstance(n, (N.AsyncLoad, N.AsyncStore)):
            read.add(n.source)
            written.add(n.destination)
        elif isinstance(n, N.IndirectDispatch):
            read.add(n.count_buffer)
    for e in node_all_exprs(program.entry):
        if isinstance(e, E.Load):
            read.add(e.buffer)
        elif isinstance(e, E.Atomic):
            read.add(e.buffer)
            written.add(e.buffer)
    storage = {b.name for b in program.buffers if not b.is_workgroup}
    return frozenset(written & read & storage)


def _canonical_lit(e: E.Expr) -> bool:
    """An f32 literal vyre_canon leaves as it is: not subnormal, not a NaN other than 0x7FC00000."""
    exp, frac = e.bits & 0x7F800000, e.bits & 0x007FFFFF
    return (exp != 0 or frac == 0) and (exp != 0x7F800000 or frac == 0 or e.bits == 0x7FC00000)


def canonical_vars(program: Program) -> frozenset[str]:
    """Variables every Let and Assign of which (anywhere in the program) gives a canonical f32
    value: a load (storage loads canonicalise; workgroup memory starts zeroed and every store into
    it canonicalises), a canonical literal, or another such variable. A store of one needs no
    vyre_canon (the stream pass's tile copies)."""
    defs: dict[str, list[E.Expr]] = {}
    from ..ir.walk import walk_nodes

    for n in walk_nodes(program.entry):
        if isinstance(n, (N.Let, N.Assign)):
            defs.setdefault(n.name, []).append(n.value)
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, values in defs.items():
            if name not in out and all(canonical_expr(v, out) for v in values):
                out.add(name)
                changed = True
    return frozenset(out)


def canonical_expr(e: E.Expr, canon: "set[str] | frozenset[str]") -> bool:
    """Whether `e`, as lowered, is always a canonical f32 (see canonical_vars)."""
    if isinstance(e, E.Load):
        return True
    if isinstance(e, E.LitF32):
        return _canonical_lit(e)
    return isinstance(e, E.Var) and e.name in canon


def store_accessor(stem: str, element: DataType, checked: bool, canon: bool) -> str:
    """The name of a store accessor: ``vk_st_`` checks the index and canonicalises an f32,
    ``vk_stn_`` skips the check, ``c`` after it skips vyre_canon (an f32 value already canonical).

    >>> store_accessor("out", DataType.F32, False, False), store_accessor("out", DataType.U32, True, False)
    ('vk_stnc_out', 'vk_st_out')
    """
    return f"vk_st{'' if checked else 'n'}{'' if canon or element is not F32 else 'c'}_{stem}"


class LowererBase:
    """State of one program's lowering; the layers above add expressions, statements, assembly."""

    def __init__(self, program: Program, fused_fma: bool = False, latency_bound: bool = False,
                 float64: bool = False, storage_8bit: bool = False, fast: bool = False,
                 native_math: tuple[str, ...] = ()):
        self.p = program
        self.storage_8bit = storage_8bit  # storage byte buffers as uint8_t arrays (bytes.py)
        # the helper sources: exp, tanh and Fma in double where the device has it (ffmath64.py), FUSED's
        # fast paths where the device's fma() is fused (ieee.py; after FLOAT64, so that its Fma sits in
        # front of the double one), the branch-free f32 helpers for a latency-bound stage
        # (helpers.BRANCHLESS); in the fast precision, plain f32 arithmetic and the device's builtins
        # that its probe measured within vyre's windows (fastmath.py)
        self.table = {**GLSL_HELPERS, **(FLOAT64 if float64 else {}), **(FUSED if fused_fma else {}),
                      **(BRANCHLESS if latency_bound else {})}
        # fast mode's division falls back to the exact one outside the range Vulkan bounds
        self.table["vyre_fdiv_exact"] = self.table["vyre_fdiv"].replace("float vyre_fdiv(", "float vyre_fdiv_exact(", 1)
        self.table.update(fast_table(native_math) if fast else {})
        # speculative chains (speculate.py): exact precision only; the division where fma is fused
        if not fast:
            self.table.update({**SPECULATIVE, **(SPECULATIVE_FUSED if fused_fma else {})})
        self.spec: Optional[Speculation] = None  # the chain of the loop emitted speculatively now
        self.decls = {b.name: b for b in program.buffers}
        self.names = glsl_names(program)
        self.var = self.names.variables  # IR variable -> GLSL name
        self.stem = self.names.buffers   # IR buffer -> stem of its derived vk_* names
        self.helpers: set[str] = set()
        self.loads: set[str] = set()
        self.stores: set[str] = set()
        self.atomics: set[tuple[str, str]] = set()  # (op name, buffer)
        self.features: set[str] = set()
        self.trap_tags: dict[str, int] = {}
        self.scopes: list[dict[str, DataType]] = []
        self.lines: list[tuple[str, Optional[str]]] = []  # (text, IR path) of main's body
        self.depth = 1
        self.tmp = 0
        self.vplan: Optional[VectorPlan] = None  # the vector fast path (see vector.py)
        self.vlane: Optional[int] = None          # the element copy being emitted in it
        self.sg = _has_collective(program.entry)  # emulate width-32 subgroups (glsl.py's notes)
        self.sg_sites = 0                         # collectives emitted (temporaries' suffix)
        self.sg_helpers: dict[str, str] = {}      # scratch-reading functions, by name
        self.pred: Optional[str] = None           # predicate of the current statement (predicated if)
        self.iv: list[dict[str, bounds.Interval]] = []  # known u32 ranges by scope (bounds.py)
        self.lid_ranges = {bounds.lid_key(a): (0, int(w) - 1) for a, w in enumerate(program.workgroup_size)}
        self.assigned = _assigned_names(program.entry)
        self.nloads: set[str] = set()             # buffers read through the unclamped accessor
        self.rloads: set[str] = set()             # ... through the accessors without vyre_canon (raw_loads)
        self.nrloads: set[str] = set()
        self.exchanged = exchanged_buffers(program)  # barriers fence, and `coherent` marks, only these
        self.canon = canonical_vars(program)          # f32 variables that always hold canonical values
        self.stores_as: set[tuple[str, bool, bool]] = set()  # (buffer, checked, canonicalised) accessors
        self._carries: dict[int, bool] = {}
        self.wgu = Uniformity(program)  # workgroup-uniform control flow, for barriers the lowering adds
        self.shared_extra = 0  # bytes of workgroup memory the lowering adds (shared_rcp.py)

    # ---- output
    def emit(self, text: str, path: Optional[str]) -> None:
        self.lines.append((INDENT * self.depth + text, path))

    def use(self, template: str) -> None:
        """Record the helpers a filled template calls."""
        self.helpers.update(helper_calls(template, self.table))

    # ---- names, scopes and ranges
    def declare(self, name: str, t: DataType) -> E.Var:
        """The GLSL variable `name` as an IR variable of type `t` in the current scope (its IR name is
        not an IR identifier: no clash with the program's names)."""
        ir = f"vk.{name}"
        self.var[ir] = name
        self.scopes[-1][ir] = t
        return E.Var(ir)

    def var_type(self, name: str, path: str) -> DataType:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        raise LoweringError(path, f"variable `{name}` is not in scope.", "validate the program before lowering it.")

    def buffer(self, name: str, path: str) -> BufferDecl:
        d = self.decls.get(name)
        if d is None:
            raise LoweringError(path, f"unknown buffer `{name}`.", "declare it in the program's buffers.")
        return d

    def range_of(self, key: str) -> Optional[bounds.Interval]:
        """Known range under a bounds.py key (bounds.var_key / gid_key / lid_key), or None."""
        for s in reversed(self.iv):
            if key in s:
                return s[key]
        return self.lid_ranges.get(key)

    def interval(self, e: E.Expr) -> Optional[bounds.Interval]:
        return bounds.interval(e, self.range_of)

    def inside(self, d: BufferDecl, index: E.Expr) -> bool:
        """`index` provably below `d`'s declared (hence bound) count: its access needs no check."""
        r = self.interval(index) if self.pred is None and d.count > 0 else None
        return r is not None and r[1] < d.count

    # ---- spelling
    def template(self, table: Spelling, t: DataType, what: str, path: str) -> str:
        """The template of an operator for operand type `t` (its helpers recorded)."""
        tpl = table.get(t)
        if tpl is None:
            raise LoweringError(path, f"{what} has no GLSL form for {t.value} operands.",
                                "validate the program (the operator table lists the accepted types).")
        self.use(tpl)
        return tpl

    def truthy(self, code: str, t: DataType) -> str:
        """`code` of type `t` as a GLSL bool by truthiness (non-zero is true), as the cast to bool."""
        if t is BOOL:
            return code
        tpl = CAST_GLSL[(t, BOOL)]
        self.use(tpl)
        return fill(tpl, a=code)

    def to_storage(self, code: str, t: DataType, elem: DataType) -> str:
        """Convert a value to a buffer's storage word type (validator-checked pairs only)."""
        st = STORAGE_TYPE[elem]
        if VALUE_TYPE[t] == st:
            return code
        return f"{st}({code})"  # bool -> 0/1, i32 <-> u32 bit reinterpretation (an i8's too)

    # ---- subgroup emulation and the vector fast path: where they apply
    def guard(self, code: str, zero: str) -> str:
        """`code` evaluated only by lanes of the current predicate (others get `zero`)."""
        return f"({self.pred} ? {code} : {zero})" if self.pred else code

    def carries_sg(self, n: N.Node) -> bool:
        key = id(n)
        if key not in self._carries:
            self._carries[key] = self.sg and _has_collective((n,))
        return self._carries[key]

    def sg_lanes(self) -> int:
        sx, sy, sz = self.p.workgroup_size
        return sx * sy * sz

    def vector_index(self, buffer: str, index: E.Expr, bufs: tuple) -> bool:
        return (self.vlane is not None and buffer in bufs and isinstance(index, E.Var)
                and index.name in self.vplan.aliases)
