"""vyre IR Program -> GLSL 450 compute shader text.

Table-driven: every operator, cast and helper is spelled once in
:mod:`vyre_vk.ir.optable` (``BINOPS``/``UNOPS``/``CASTS``/``ATOMICS``/``EXPR_GLSL``/
``GLSL_HELPERS``); this module only walks the tree, types each expression, fills the
templates and lays out the shader. Decisions that keep GPU results identical to the
reference (vyre_vk.reference):

* Every buffer access goes through a small generated accessor (``vk_ld_<buf>``,
  ``vk_st_<buf>``, ``vk_at_<op>_<buf>``) that checks the index against ``.length()`` (or
  the workgroup count): out-of-bounds loads return zero, stores are dropped, atomics
  return 0 and write nothing. Driver robustness is never relied on.
* f32 values loaded from storage are canonicalised (NaN -> 0x7FC00000, subnormal ->
  signed zero); every f32 op's helper canonicalises its result, so stored f32 are canonical.
* Operands are evaluated left to right exactly once (templates use each operand once;
  Select, And and Or are function calls, so both arms always run, like the reference).
* Every IR statement list (If arms, Loop body, Block, Region) is a GLSL ``{}`` scope;
  vyre's Regions are lexical scopes too (IR-SPEC 6.2), so a Region is braces plus a
  comment naming its generator.
* Workgroup memory is zeroed at kernel start (the reference zeroes it per workgroup).
* Traps (``Trap`` nodes, i32 division by zero or MIN/-1) set a flag word in an extra
  storage buffer at binding ``Lowered.trap_binding``; the runtime raises when it is set.
* Subgroup collectives get vyre's simulated width 32 on any device (hardware subgroups are
  8 wide on lavapipe, 32 on NVIDIA, up to 128 elsewhere, and cannot be requested through kp):
  each lane writes its operand word to a workgroup scratch array, a barrier, then every lane
  folds its own 32-lane group in lane order (bit-identical f32 folds, the table's f32 ops). Two
  scratch halves alternate, so one barrier per collective suffices: a half is rewritten only
  after the next collective's barrier, which every lane reaches after its reads. Barriers need
  every lane of the workgroup, so an ``if`` whose body holds a collective is predicated (a
  ``bool vk_pN``: lets become ``p ? value : 0``, assigns/stores/other statements are guarded by
  ``if (p)``) instead of branched; validation guarantees subgroup-uniform conditions,
  workgroup-uniform loop bounds and no divergent return before a collective.
"""
from __future__ import annotations

from vyre_vk.errors import VyreError
import math
import re
from dataclasses import dataclass, field
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.expr import bits_f32
from ..ir.optable import ATOMICS, BINOPS, CASTS, CANON_NAN_BITS, EXPR_GLSL, GLSL_HELPERS, UNOPS, SAME, BinOp
from ..ir.program import BufferDecl, Program
from ..ir.types import BufferAccess, DataType
from ..ir.validate import ValidationError, _has_collective, validate
from . import bounds
from .vector import VectorPlan, component, vec_type, vector_plan

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool

#: Words of the trap buffer: [flag (0 = no trap), code, gl_GlobalInvocationID.x, address].
TRAP_WORDS = 4
#: Trap code written by the i32 Div/Mod helpers (the table's `vyre_trap(1u)`).
TRAP_CODE_DIVISION = 1
_TRAP_DIVISION_MESSAGE = "i32 division or remainder by zero, or i32::MIN / -1"

_INDENT = "    "


class LoweringError(VyreError, ValueError):
    """A program cannot be lowered to GLSL. Attributes: path (IR node path), message.

    ``str(err)`` is ``"<path>: <message> Fix: <fix>"``.
    """

    def __init__(self, path: str, message: str, fix: str):
        self.path, self.message, self.fix = path, message, fix
        super().__init__(f"{path}: {message} Fix: {fix}")


@dataclass(frozen=True)
class Lowered:
    """One lowered program.

    `bindings` are the program's non-workgroup buffers in binding order (binding N of the
    program is ``layout(std430, set = 0, binding = N)``). `trap_binding`, when not None, is
    one more storage buffer of ``TRAP_WORDS`` u32 words (zero-initialised by the runtime)
    whose word 0 becomes non-zero if an invocation trapped; `trap_codes` maps word 1 to a
    message. `line_map` maps a GLSL line (1-based) to the IR node path it came from.
    """

    glsl: str
    workgroup_size: tuple[int, int, int]
    bindings: tuple[BufferDecl, ...]
    line_map: dict[int, str]
    features: frozenset[str]
    target_env: str
    trap_binding: Optional[int] = None
    trap_codes: dict[int, str] = field(default_factory=dict)

    def node_at_line(self, line: int) -> Optional[str]:
        """IR node path of GLSL `line`, or of the nearest statement line above it."""
        for ln in range(line, 0, -1):
            if ln in self.line_map:
                return self.line_map[ln]
        return None


# ----------------------------------------------------------------------------- names
# Every program name is spelled in GLSL in a namespace no generated name can enter:
#
#   buffer `n`    -> ``b_<stem(n)>`` (block member / shared array), ``vk_<kind>_<stem(n)>`` for
#                    what the lowering derives from it (block type, accessors, vector temporaries)
#   variable `n`  -> ``v_<stem(n)>`` (let and loop variables)
#
# Generated names are ``vk_*``, ``vyre_*`` (optable helpers), ``gl_*`` builtins, GLSL keywords and
# the helpers' own function-local names; none starts with ``b_`` or ``v_`` (tests/lower/test_names.py
# scans the lowering output for that), so a user name can never meet one, whatever it spells.
#
# The stem is an injective spelling of any string as ``[A-Za-z0-9]+`` words joined by single
# ``_`` (so it never holds the ``__`` GLSL reserves, nor ends in ``_``):
#   * a maximal run of ASCII letters/digits is a *literal* word, copied as is;
#   * an ``_`` with a literal word on each side is the separator between those two words;
#   * every other character is an *escape* word: ``Z`` for any other ``_``, ``Z<hex code point>``
#     for the rest; a literal run starting with ``Z`` has its leading ``Z``s escaped (``Z5a``) so
#     literal words never start with ``Z``. The empty name (refused by the validator) is ``ZZ``.
# Decoding is therefore unambiguous: a word starting with ``Z`` is an escape, any other is
# literal; ``_`` between two literal words decodes to ``_``, every other ``_`` to nothing. A
# left inverse exists, so the stem is injective: ``a_b`` -> ``a_b``, ``a__b`` -> ``a_Z_Z_b``,
# ``a-b`` -> ``a_Z2d_b``. A stem longer than ``_MAX_STEM`` (glslang refuses names over 1023
# characters, and derived names add to it) is cut at ``_MAX_STEM`` characters and gets a
# final word ``ZZ<k>``, k its rank among the program's long names of that namespace: no other
# stem has a word starting with ``ZZ`` (escapes are ``Z`` + hex) but the empty name's ``ZZ``
# (no k), and k differs per name.
_MAX_STEM = 64
_LONG_MARK = "ZZ"
_WORD = re.compile(r"[A-Za-z0-9]+|.", re.DOTALL)
_ALNUM = re.compile(r"[A-Za-z0-9]+")


def _escape(ch: str) -> str:
    return "Z" if ch == "_" else f"Z{ord(ch):x}"  # "_" is the commonest escape: keep it short


def _run_words(run: str) -> list[str]:
    """Words of an alphanumeric run: its leading ``Z``s escaped, then the rest as one literal word."""
    rest = run.lstrip("Z")
    return [_escape("Z")] * (len(run) - len(rest)) + ([rest] if rest else [])


def stem(name: str) -> str:
    """Injective spelling of `name` as ``[A-Za-z0-9]+`` words joined by single ``_`` (module notes).

    >>> stem("x"), stem("a_b"), stem("a__b"), stem("__init__"), stem("a_Zeta"), stem("a::b")
    ('x', 'a_b', 'a_Z_Z_b', 'Z_Z_init_Z_Z', 'a_Z_Z5a_eta', 'a_Z3a_Z3a_b')
    """
    tokens = _WORD.findall(name)
    alnum = [bool(_ALNUM.fullmatch(t)) for t in tokens]
    words: list[str] = []
    for i, tok in enumerate(tokens):
        if alnum[i]:
            words.extend(_run_words(tok))
        elif (tok == "_" and 0 < i < len(tokens) - 1 and alnum[i - 1] and alnum[i + 1]
              and tokens[i - 1].lstrip("Z") and not tokens[i + 1].startswith("Z")):
            continue  # a separator: implied between two literal words
        else:
            words.append(_escape(tok))
    return "_".join(words) or _LONG_MARK


def _stems(names: list[str]) -> dict[str, str]:
    """`stem` of each name, long ones cut and numbered (module notes); deterministic."""
    out = {n: stem(n) for n in set(names)}
    long_names = sorted(n for n, s in out.items() if len(s) > _MAX_STEM)
    for k, n in enumerate(long_names):
        out[n] = f"{out[n][:_MAX_STEM].rstrip('_')}_{_LONG_MARK}{k}"
    return out


@dataclass(frozen=True)
class GlslNames:
    """GLSL spellings of one program's names. `buffers`: IR buffer name -> its stem (the block
    member is ``b_<stem>``, derived names ``vk_<kind>_<stem>``); `variables`: IR variable name
    -> GLSL variable name (``v_<stem>``)."""

    buffers: dict[str, str]
    variables: dict[str, str]

    def buf(self, name: str) -> str:
        return "b_" + self.buffers[name]


def glsl_names(program: Program) -> GlslNames:
    """The GLSL names of every buffer, let and loop variable of `program` (module notes).

    >>> from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
    >>> p = Program.wrapped([BufferDecl.output("i", 0, DataType.U32).with_count(1)], (1, 1, 1),
    ...     [wrap_anonymous("t", [Node.let_bind("i", Expr.u32(1)), Node.store("i", Expr.u32(0), Expr.var("i"))])])
    >>> names = glsl_names(p)
    >>> names.buf("i"), names.variables["i"]
    ('b_i', 'v_i')
    """
    variables: list[str] = []
    stack = list(program.entry)
    while stack:
        n = stack.pop()
        if isinstance(n, N.Let):
            variables.append(n.name)
        elif isinstance(n, N.Loop):
            variables.append(n.var)
        for _, body in N.node_bodies(n):
            stack.extend(body)
    return GlslNames(buffers=_stems([b.name for b in program.buffers]),
                     variables={n: "v_" + s for n, s in _stems(variables).items()})


def _comment(text: object) -> str:
    """`text` safe inside a one-line ``//`` comment: printable ASCII, no backslash (a line splice)."""
    return re.sub(r"[^\x20-\x7E]|\\", "?", str(text))


# ----------------------------------------------------------------------------- literals
def f32_literal(bits: int) -> str:
    """GLSL spelling of the *canonical* f32 with these bits (as the reference canonicalises
    literals): finite normals as round-trip decimals, the rest through uintBitsToFloat.

    >>> f32_literal(0x3F800000), f32_literal(0xFF800000)
    ('1.0', 'uintBitsToFloat(0xFF800000u)')
    """
    bits &= 0xFFFFFFFF
    exp = bits & 0x7F800000
    if exp == 0:
        bits &= 0x80000000  # subnormal -> signed zero
    elif exp == 0x7F800000 and bits & 0x007FFFFF:
        bits = CANON_NAN_BITS
    v = bits_f32(bits)
    if bits == 0:
        return "0.0"
    if not math.isfinite(v) or bits == 0x80000000:
        return f"uintBitsToFloat(0x{bits:08X}u)"
    text = repr(v)  # shortest decimal that round-trips the (exact) double -> exact f32
    if "e" not in text and "." not in text:
        text += ".0"
    return text if v > 0 else f"({text})"


def _u32_literal(v: int) -> str:
    return f"{v & 0xFFFFFFFF}u"


def _i32_literal(v: int) -> str:
    if v == -2**31:
        return "int(0x80000000u)"  # 2147483648 is not an int literal
    return str(v) if v >= 0 else f"({v})"


_ZERO = {U32: "0u", I32: "0", F32: "0.0", BOOL: "false"}


def _unwrap(code: str) -> str:
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


def _tkey(t: DataType) -> str:
    return t.value  # "u32", "i32", "f32", "bool": the keys of the table's glsl dicts


def _fill(template: str, **ops: str) -> str:
    return template.format(**ops)


def _assigned_names(nodes) -> set:
    """Every variable some `Assign` writes (their ranges are not tracked)."""
    out: set = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if isinstance(n, N.Assign):
            out.add(n.name)
        for _, body in N.node_bodies(n):
            stack.extend(body)
    return out


# ----------------------------------------------------------------------------- the lowerer
class _Lowerer:
    def __init__(self, program: Program):
        self.p = program
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
        self.sg = _has_collective(program.entry)  # emulate width-32 subgroups (module docstring)
        self.sg_sites = 0                         # collectives emitted (temporaries' suffix)
        self.sg_helpers: dict[str, str] = {}      # scratch-reading functions, by name
        self.pred: Optional[str] = None           # predicate of the current statement (predicated if)
        self.iv: list[dict] = []                  # known u32 ranges by scope (bounds.py)
        self.assigned = _assigned_names(program.entry)
        self.nloads: set[str] = set()             # buffers read through the unclamped accessor
        self._carries: dict[int, bool] = {}

    # ---- output
    def emit(self, text: str, path: Optional[str]) -> None:
        self.lines.append((_INDENT * self.depth + text, path))

    def var_type(self, name: str, path: str) -> DataType:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        raise LoweringError(path, f"variable `{name}` is not in scope.", "validate the program before lowering it.")

    def use(self, template: str) -> None:
        """Record the table helpers a filled template calls."""
        for m in re.findall(r"\bvyre_\w+", template):
            if m in GLSL_HELPERS:
                self.helpers.add(m)

    # ---- expressions: return (GLSL code, value type)
    def expr(self, e: E.Expr, path: str) -> tuple[str, DataType]:
        t = type(e)
        if t is E.LitU32:
            return _u32_literal(e.value), U32
        if t is E.LitI32:
            return _i32_literal(e.value), I32
        if t is E.LitF32:
            return f32_literal(e.bits), F32
        if t is E.LitBool:
            return ("true" if e.value else "false"), BOOL
        if t is E.Var:
            return self.var[e.name], self.var_type(e.name, path)
        if t is E.Load:
            d = self.buffer(e.buffer, path)
            if self.vector_index(e.buffer, e.index, self.vplan.loads if self.vplan else ()):
                lane = f"vk_vl_{self.stem[d.name]}.{component(self.vlane)}"
                if d.element is F32:
                    self.helpers.add("vyre_canon")
                    return f"vyre_canon({lane})", F32
                return (f"({lane} != 0u)" if d.element is BOOL else lane), d.element
            idx, _ = self.expr(e.index, path + ".index")
            r = self.interval(e.index) if self.pred is None and d.count > 0 else None
            if r is not None and r[1] < d.count:  # provably inside the declared (hence bound) length
                self.nloads.add(d.name)
                return f"vk_ldn_{self.stem[d.name]}({idx})", d.element
            self.loads.add(d.name)
            return f"vk_ld_{self.stem[d.name]}({idx})", d.element
        if t is E.BufLen:
            d = self.buffer(e.buffer, path)
            if d.is_workgroup:
                return _u32_literal(d.count), U32
            return f"uint({self.names.buf(d.name)}.length())", U32
        if t is E.InvocationId:
            return f"gl_GlobalInvocationID.{'xyz'[e.axis]}", U32
        if t is E.WorkgroupId:
            return f"gl_WorkGroupID.{'xyz'[e.axis]}", U32
        if t is E.LocalId:
            return f"gl_LocalInvocationID.{'xyz'[e.axis]}", U32
        if t is E.BinOpExpr:
            info = BINOPS[e.op]
            a, ta = self.expr(e.left, path + ".left")
            b, _ = self.expr(e.right, path + ".right")
            tpl = self.template(info.glsl, ta, f"binary op {info.name}", path)
            return _fill(tpl, a=a, b=b), info.result_type(ta)
        if t is E.UnOpExpr:
            info = UNOPS[e.op]
            a, ta = self.expr(e.operand, path + ".operand")
            tpl = self.template(info.glsl, ta, f"unary op {info.name}", path)
            return _fill(tpl, a=a), info.result_type(ta)
        if t is E.Select:
            c = self.cond(e.cond, path + ".cond")
            a, ta = self.expr(e.true_val, path + ".true_val")
            b, _ = self.expr(e.false_val, path + ".false_val")
            self.use(EXPR_GLSL["Select"])
            return _fill(EXPR_GLSL["Select"], c=c, t=a, f=b), ta
        if t is E.Cast:
            v, tv = self.expr(e.value, path + ".value")
            info = CASTS.get((tv, e.target))
            if info is None:
                raise LoweringError(path, f"no cast from {tv.value} to {e.target.value}.",
                                    "cast through u32 (see vyre_vk.ir.optable.CASTS).")
            self.use(info.glsl)
            return _fill(info.glsl, a=v), e.target
        if t is E.Fma:
            a, _ = self.expr(e.a, path + ".a")
            b, _ = self.expr(e.b, path + ".b")
            c, _ = self.expr(e.c, path + ".c")
            self.use(EXPR_GLSL["Fma"])
            return _fill(EXPR_GLSL["Fma"], a=a, b=b, c=c), F32
        if t is E.Atomic:
            info = ATOMICS[e.op]
            if not info.supported:
                raise LoweringError(path, f"atomic {info.name} is not supported by the Vulkan backend.",
                                    "use CompareExchange or a fetch-and-op from the AtomicOp table.")
            d = self.buffer(e.buffer, path)
            args = [self.expr(e.index, path + ".index")[0]]
            if e.expected is not None:
                args.append(self.expr(e.expected, path + ".expected")[0])
            args.append(self.expr(e.value, path + ".value")[0])
            self.atomics.add((info.name, d.name))
            self.features.add("atomics")
            return f"vk_at_{info.name.lower()}_{self.stem[d.name]}({', '.join(args)})", U32
        if t is E.SubgroupLocalId:
            return f"(gl_LocalInvocationIndex & {E.SUBGROUP_WIDTH - 1}u)", U32
        if t is E.SubgroupSize:
            return _u32_literal(E.SUBGROUP_WIDTH), U32
        if isinstance(e, E.SUBGROUP_COLLECTIVES):
            return self.collective(e, path)
        kind = E.EXPR_KIND.get(t, t.__name__)
        raise LoweringError(path, f"expression kind {kind} is not supported by the Vulkan backend yet.",
                            "inline called ops (Call has no Vulkan lowering).")

    # ---- subgroup emulation (module docstring)
    def guard(self, code: str, zero: str) -> str:
        """`code` evaluated only by lanes of the current predicate (others get `zero`)."""
        return f"({self.pred} ? {code} : {zero})" if self.pred else code

    def collective(self, e: E.Expr, path: str) -> tuple[str, DataType]:
        """Emit the exchange of one collective before the statement that uses it; return its value."""
        self.sg_sites += 1
        k = self.sg_sites
        if isinstance(e, E.SubgroupBallot):
            word, vt = self.guard(f"({self.cond(e.cond, path + '.cond')} ? 1u : 0u)", "0u"), BOOL
        else:
            val, vt = self.expr(e.value, path + ".value")
            word = self.guard(val if vt is U32 else f"floatBitsToUint({val})", "0u")
        self.emit(f"uint vk_sgw{k} = {word};", path)
        args = "vk_sgo"
        if isinstance(e, E.SubgroupShuffle):
            lane, _ = self.expr(e.lane, path + ".lane")
            self.emit(f"uint vk_sgl{k} = {self.guard(lane, '0u')};", path)
            args += f", vk_sgl{k}"
        self.emit(f"vk_sg[vk_sgo + gl_LocalInvocationIndex] = vk_sgw{k};", path)
        self.emit("memoryBarrierShared(); barrier();", path)
        fn, rt = self.sg_helper(e, vt)
        self.emit(f"{rt.glsl} vk_sgr{k} = {fn}({args});", path)
        self.emit(f"vk_sgo = {self.sg_lanes()}u - vk_sgo;  // the other scratch half next time", path)
        return f"vk_sgr{k}", rt

    def sg_lanes(self) -> int:
        sx, sy, sz = self.p.workgroup_size
        return sx * sy * sz

    def sg_helper(self, e: E.Expr, vt: DataType) -> tuple[str, DataType]:
        """Name and result type of the function reading this lane's 32-lane group from scratch half `o`."""
        head = (f"uint vk_b = gl_LocalInvocationIndex & ~{E.SUBGROUP_WIDTH - 1}u; "
                f"uint vk_n = min({E.SUBGROUP_WIDTH}u, {self.sg_lanes()}u - vk_b);")
        if isinstance(e, E.SubgroupBallot):
            name, rt = "vk_sg_ballot", U32
            body = (f"uint vk_sg_ballot(uint o) {{ {head} uint vk_r = 0u; "
                    "for (uint j = 0u; j < vk_n; j++) { vk_r |= (vk_sg[o + vk_b + j] & 1u) << j; } return vk_r; }")
        elif isinstance(e, E.SubgroupShuffle):
            name, rt = f"vk_sg_shuffle_{vt.value}", vt
            word = "vk_sg[o + vk_b + lane]"
            read = word if vt is U32 else f"uintBitsToFloat({word})"
            body = (f"{vt.glsl} {name}(uint o, uint lane) {{ {head} "
                    f"return lane < vk_n ? {read} : {_ZERO[vt]}; }}")
        else:
            name, rt = f"vk_sg_{e.op.lower()}_{vt.value}", vt
            binop = {"Add": BinOp.Add, "Mul": BinOp.Mul, "Min": BinOp.Min, "Max": BinOp.Max, "And": BinOp.BitAnd,
                     "Or": BinOp.BitOr, "Xor": BinOp.BitXor}[e.op]
            tpl = BINOPS[binop].glsl[_tkey(vt)]
            self.use(tpl)
            word = "vk_sg[o + vk_b + j]"
            ident = ({"Add": "0u", "Mul": "1u", "Min": "0xFFFFFFFFu", "Max": "0u", "And": "0xFFFFFFFFu", "Or": "0u",
                      "Xor": "0u"} if vt is U32 else
                     {"Add": "0.0", "Mul": "1.0", "Min": f32_literal(0x7F800000),
                      "Max": f32_literal(0xFF800000)})[e.op]
            lane = word if vt is U32 else f"uintBitsToFloat({word})"
            body = (f"{vt.glsl} {name}(uint o) {{ {head} {vt.glsl} vk_acc = {ident}; "
                    f"for (uint j = 0u; j < vk_n; j++) {{ vk_acc = {_fill(tpl, a='vk_acc', b=lane)}; }} return vk_acc; }}")
        self.sg_helpers[name] = body
        return name, rt

    def carries_sg(self, n: N.Node) -> bool:
        key = id(n)
        if key not in self._carries:
            self._carries[key] = self.sg and _has_collective((n,))
        return self._carries[key]

    def template(self, table: dict[str, str], t: DataType, what: str, path: str) -> str:
        tpl = table.get(_tkey(t), table.get("*"))
        if tpl is None:
            raise LoweringError(path, f"{what} has no GLSL form for {t.value} operands.",
                                "validate the program (the operator table lists the accepted types).")
        self.use(tpl)
        return tpl

    def cond(self, e: E.Expr, path: str) -> str:
        """A condition by truthiness (non-zero is true), as the table's cast to bool."""
        c, t = self.expr(e, path)
        if t is BOOL:
            return c
        tpl = CASTS[(t, BOOL)].glsl
        self.use(tpl)
        return _fill(tpl, a=c)

    def buffer(self, name: str, path: str) -> BufferDecl:
        d = self.decls.get(name)
        if d is None:
            raise LoweringError(path, f"unknown buffer `{name}`.", "declare it in the program's buffers.")
        return d

    def to_storage(self, code: str, t: DataType, elem: DataType) -> str:
        """Convert a value to a buffer's storage word type (validator-checked pairs only)."""
        st = elem.glsl_storage
        if t.glsl_storage == st and t is not BOOL:
            return code
        return f"{st}({code})"  # bool -> 0/1, i32 <-> u32 bit reinterpretation

    # ---- statements
    def block(self, nodes: tuple, path: str, header: str, hpath: Optional[str], bind: Optional[dict] = None,
              ranges: Optional[dict] = None) -> None:
        self.emit(header, hpath)
        self.depth += 1
        self.scopes.append(dict(bind or {}))
        self.iv.append(dict(ranges or {}))
        for i, n in enumerate(nodes):
            self.stmt(n, f"{path}[{i}]")
        self.iv.pop()
        self.scopes.pop()
        self.depth -= 1

    def range_of(self, key: str):
        """Known range under a bounds.py key (bounds.var_key / bounds.gid_key), or None."""
        for s in reversed(self.iv):
            if key in s:
                return s[key]
        return None

    def interval(self, e: E.Expr):
        return bounds.interval(e, self.range_of)

    def stmt(self, n: N.Node, path: str) -> None:
        if self.pred is not None and not isinstance(n, (N.Let, N.Assign)) and not self.carries_sg(n):
            # Predicated if (module docstring): a statement without collectives is simply skipped.
            self.emit(f"if ({self.pred}) {{", path)
            self.depth += 1
            pred, self.pred = self.pred, None
            self.stmt(n, path)
            self.pred = pred
            self.depth -= 1
            self.emit("}", path)
            return
        t = type(n)
        if t is N.Let:
            v, vt = self.expr(n.value, path + ".value")
            self.emit(f"{vt.glsl} {self.var[n.name]} = {self.guard(v, _ZERO[vt])};", path)
            self.scopes[-1][n.name] = vt
            if vt is U32 and self.pred is None and n.name not in self.assigned:
                r = self.interval(n.value)
                if r is not None:
                    self.iv[-1][bounds.var_key(n.name)] = r
        elif t is N.Assign:
            v, _ = self.expr(n.value, path + ".value")
            assign = f"{self.var[n.name]} = {v};"
            self.emit(f"if ({self.pred}) {{ {assign} }}" if self.pred else assign, path)
        elif t is N.If and self.carries_sg(n):
            self.predicated_if(n, path)
        elif t is N.Store and self.pred is not None:  # a store whose value or index holds a collective
            d = self.buffer(n.buffer, path)
            idx, _ = self.expr(n.index, path + ".index")
            v, vt = self.expr(n.value, path + ".value")
            self.stores.add(d.name)
            self.emit(f"if ({self.pred}) {{ vk_st_{self.stem[d.name]}({idx}, {self.to_storage(v, vt, d.element)}); }}",
                      path)
        elif t is N.Store:
            d = self.buffer(n.buffer, path)
            if self.vector_index(n.buffer, n.index, self.vplan.stores if self.vplan else ()):
                v, vt = self.expr(n.value, path + ".value")
                v = self.to_storage(v, vt, d.element)
                if d.element is F32:
                    self.helpers.add("vyre_canon")
                    v = f"vyre_canon({v})"
                name = self.stem[d.name]
                self.emit(f"vk_vs_{name}.{component(self.vlane)} = {v}; vk_vm_{name} |= {1 << self.vlane}u;", path)
                return
            idx, _ = self.expr(n.index, path + ".index")
            v, vt = self.expr(n.value, path + ".value")
            self.stores.add(d.name)
            self.emit(f"vk_st_{self.stem[d.name]}({idx}, {self.to_storage(v, vt, d.element)});", path)
        elif t is N.If:
            c = _unwrap(self.cond(n.cond, path + ".cond"))
            self.block(n.then, path + ".if.then", f"if ({c}) {{", path,
                       ranges=bounds.refinements(n.cond, self.range_of, self.assigned, True))
            if n.otherwise:
                self.block(n.otherwise, path + ".if.else", "} else {", path,
                           ranges=bounds.refinements(n.cond, self.range_of, self.assigned, False))
            self.emit("}", path)
        elif t is N.Loop:
            lo, _ = self.expr(n.from_, path + ".from")
            hi, _ = self.expr(n.to, path + ".to")
            self.tmp += 1
            end, var = f"vk_end{self.tmp}", self.var[n.var]
            lo_r, hi_r = self.interval(n.from_), self.interval(n.to)
            ranges = ({bounds.var_key(n.var): (lo_r[0], hi_r[1] - 1)} if lo_r and hi_r and lo_r[0] <= hi_r[1] - 1
                      and n.var not in self.assigned else {})
            # Both bounds evaluated once, `from` first; var < end keeps var++ from wrapping.
            self.block(n.body, f"{path}.loop({n.var}).body",
                       f"for (uint {var} = {lo}, {end} = {hi}; {var} < {end}; {var}++) {{", path, {n.var: U32},
                       ranges)
            self.emit("}", path)
        elif t is N.Block:
            self.block(n.body, path + ".block.body", "{", path)
            self.emit("}", path)
        elif t is N.Region:
            self.block(n.body, path + ".region.body", f"{{  // region {_comment(n.generator)}", path)
            self.emit("}", path)
        elif t is N.Barrier:
            self.features.add("barrier")
            wg = any(b.is_workgroup for b in self.p.buffers)
            fences = ("memoryBarrierShared(); " if wg else "") + "memoryBarrierBuffer(); "
            self.emit(f"{fences}barrier();", path)
        elif t is N.Return:
            self.emit("return;", path)
        elif t is N.Trap:
            a, at = self.expr(n.address, path + ".address")
            word = {U32: a, I32: f"uint({a})", BOOL: f"uint({a})", F32: f"floatBitsToUint({a})"}[at]
            code = self.trap_tags.setdefault(str(n.tag), TRAP_CODE_DIVISION + 1 + len(self.trap_tags))
            self.features.add("trap")
            trap = f"vk_trap_at({code}u, {word});"
            self.emit(f"if ({self.pred}) {{ {trap} }}" if self.pred else trap, path)  # pred: address has a collective
            if not self.sg:  # with collectives every lane must still reach their barriers (the run raises anyway)
                self.emit("return;", path)
        else:
            raise LoweringError(path, f"node kind {type(n).__name__} is not supported by the Vulkan backend yet.",
                                "express it with loads, stores and loops.")

    def predicated_if(self, n: N.If, path: str) -> None:
        """An if whose body holds a collective: every lane runs both arms under a predicate."""
        c = _unwrap(self.cond(n.cond, path + ".cond"))
        self.tmp += 1
        p = f"vk_p{self.tmp}"
        self.emit(f"bool {p} = {self.guard(c, 'false')};", path)
        outer = self.pred
        for body, label, pred in ((n.then, ".if.then", p), (n.otherwise, ".if.else", f"vk_q{self.tmp}")):
            if not body:
                continue
            self.pred = outer
            if label == ".if.else":
                self.emit(f"bool {pred} = {self.guard(f'!{p}', 'false')};", path)
            self.pred = pred
            self.block(body, path + label, f"{{  // {'if' if label == '.if.then' else 'else'}, predicated", path)
            self.emit("}", path)
        self.pred = outer

    # ---- the vector fast path of a coarsened elementwise region (vector.py)
    def vector_index(self, buffer: str, index: E.Expr, bufs: tuple) -> bool:
        return (self.vlane is not None and buffer in bufs and isinstance(index, E.Var)
                and index.name in self.vplan.aliases)

    def vector_region(self, plan: VectorPlan, path: str) -> None:
        region = plan.region
        self.emit(f"{{  // region {_comment(region.generator)} (16-byte loads/stores when all four elements are in bounds)", path)
        self.depth += 1
        self.scopes.append({})
        rb = path + ".region.body"
        self.stmt(region.body[0], rb + "[0]")  # let base = gid.x * 4
        lp = rb + "[1]"
        inner = f"{lp}.loop({plan.lane}).body"
        base, var, stems = self.var[plan.base], self.var, self.stem
        tot, _ = self.expr(plan.total, inner + "[1].cond.right")
        self.emit(f"uint vk_vtot = {tot};", lp)
        q = f"({base} >> 2u)"
        conds = ["vk_vtot >= 4u", f"{base} <= vk_vtot - 4u"]
        conds += [f"{q} < uint(vk_v4_{stems[b]}.length())" for b in plan.loads + plan.stores]
        self.emit(f"if ({' && '.join(conds)}) {{", lp)
        self.depth += 1
        for b in plan.loads:
            vt = vec_type(self.decls[b].element.glsl_storage)
            self.emit(f"{vt} vk_vl_{stems[b]} = vk_v4_{stems[b]}[{q}];", lp)
        for b in plan.stores:
            vt = vec_type(self.decls[b].element.glsl_storage)
            self.emit(f"{vt} vk_vs_{stems[b]} = {vt}(0); uint vk_vm_{stems[b]} = 0u;", lp)
        self.vplan = plan
        for c in range(4):
            self.vlane = c
            self.emit("{", lp)
            self.depth += 1
            self.scopes.append({plan.lane: U32, plan.elem: U32})
            self.emit(f"uint {var[plan.lane]} = {c}u;", lp)
            self.emit(f"uint {var[plan.elem]} = ({base} + {var[plan.lane]});", inner + "[0]")
            for i, n in enumerate(plan.body):
                self.stmt(n, f"{inner}[1].if.then[{i}]")
            self.scopes.pop()
            self.depth -= 1
            self.emit("}", lp)
        self.vlane = self.vplan = None
        for b in plan.stores:
            n, member = stems[b], self.names.buf(b)
            self.emit(f"if (vk_vm_{n} == 15u) {{", lp)
            self.emit(f"    vk_v4_{n}[{q}] = vk_vs_{n};", lp)
            self.emit("} else {", lp)
            for c in range(4):
                self.emit(f"    if ((vk_vm_{n} & {1 << c}u) != 0u) {{ {member}[{base} + {c}u] = vk_vs_{n}.{component(c)}; }}", lp)
            self.emit("}", lp)
        self.depth -= 1
        self.emit("} else {", lp)
        self.depth += 1
        self.stmt(region.body[1], lp)  # the scalar loop, as written
        self.depth -= 1
        self.emit("}", lp)
        self.scopes.pop()
        self.depth -= 1
        self.emit("}", path)

    # ---- assembly
    def helper_order(self) -> list[str]:
        """Used helpers plus their dependencies, each after what it calls (table order)."""
        order: list[str] = []
        seen: set[str] = set()

        def visit(h: str) -> None:
            if h in seen:
                return
            seen.add(h)
            for dep in re.findall(r"\bvyre_\w+", GLSL_HELPERS[h]):
                if dep in GLSL_HELPERS and dep != h:
                    visit(dep)
            order.append(h)

        for h in GLSL_HELPERS:  # table order: deterministic
            if h in self.helpers:
                visit(h)
        return order

    def run(self) -> Lowered:
        p = self.p
        self.scopes.append({})
        plan = vector_plan(p) if not self.sg else None
        if plan is not None:
            self.vector_region(plan, "entry[0]")
        else:
            for i, n in enumerate(p.entry):
                self.stmt(n, f"entry[{i}]")
        accessors = self.accessors()  # may add helpers (vyre_canon), so before helper_order
        helpers = self.helper_order()
        needs_trap = "trap" in self.features or any("vyre_trap" in GLSL_HELPERS[h] for h in helpers)
        storage = sorted((b for b in p.buffers if not b.is_workgroup), key=lambda b: b.binding)
        workgroup = [b for b in p.buffers if b.is_workgroup]
        trap_binding = (max((b.binding for b in storage), default=-1) + 1) if needs_trap else None
        if needs_trap:
            self.features.add("trap")
        if workgroup:
            self.features.add("workgroup_memory")
        barrier = "barrier" in self.features

        out: list[tuple[str, Optional[str]]] = []
        add = lambda text, path=None: out.append((text, path))  # noqa: E731
        op_id = p.entry_op_id or next((n.generator for n in p.entry if isinstance(n, N.Region)), "?")
        sx, sy, sz = p.workgroup_size
        add("#version 450")
        add(f"// vyre op: {_comment(op_id)}")
        add(f"// program content hash: {p.content_hash()}")
        add("// generated by vyre_vk.lower from vyre IR; do not edit")
        add(f"layout(local_size_x = {sx}, local_size_y = {sy}, local_size_z = {sz}) in;")
        add("")
        for b in storage:
            name, st = self.names.buf(b.name), self.stem[b.name]
            quals = []
            if b.access in (BufferAccess.ReadOnly, BufferAccess.Uniform):
                quals.append("readonly")
            elif barrier:
                quals.append("coherent")  # writes must be visible to the workgroup after a barrier
            q = " ".join(quals) + (" " if quals else "")
            add(f"layout(std430, set = 0, binding = {b.binding}) {q}buffer vk_buf_{st} "
                f"{{ {b.element.glsl_storage} {name}[]; }};  // {b.element.value}, {b.access.value}")
            if plan is not None and b.name in plan.loads + plan.stores:  # same binding, 16-byte view
                add(f"layout(std430, set = 0, binding = {b.binding}) {q}buffer vk_buf4_{st} "
                    f"{{ {vec_type(b.element.glsl_storage)} vk_v4_{st}[]; }};  // {name} as 4-word vectors")
        for b in workgroup:
            add(f"shared {b.element.glsl_storage} {self.names.buf(b.name)}[{b.count}];  // {b.element.value}, workgroup")
        if self.sg:
            self.features.add("subgroup_emulation")
            add(f"shared uint vk_sg[{2 * self.sg_lanes()}];  // width-32 subgroup exchange, two halves")
        if needs_trap:
            add(f"layout(std430, set = 0, binding = {trap_binding}) buffer vk_trapbuf {{ uint vk_trap[]; }};")
            add("")
            add("// Record the first trap (flag, code, invocation, address); the runtime raises on it.")
            add("void vk_trap_at(uint code, uint address) {")
            add("    if (atomicCompSwap(vk_trap[0], 0u, 1u) == 0u) {")
            add("        vk_trap[1] = code;")
            add("        vk_trap[2] = gl_GlobalInvocationID.x;")
            add("        vk_trap[3] = address;")
            add("    }")
            add("}")
            add("void vyre_trap(uint code) { vk_trap_at(code, 0u); }")
        if helpers:
            add("")
            for h in helpers:
                for line in GLSL_HELPERS[h].split("\n"):
                    add(line)
        if accessors:
            add("")
            for line in accessors:
                add(line)
        if self.sg_helpers:
            add("")
            add(f"// This lane's {E.SUBGROUP_WIDTH}-lane group (vk_b: first lane, vk_n: lanes) in scratch half o.")
            for name in sorted(self.sg_helpers):
                add(self.sg_helpers[name])
        add("")
        add("void main() {")
        if workgroup:
            lanes = sx * sy * sz
            for b in workgroup:
                name = self.names.buf(b.name)
                zero = {"uint": "0u", "int": "0", "float": "0.0"}[b.element.glsl_storage]
                add(f"    for (uint vk_z = gl_LocalInvocationIndex; vk_z < {b.count}u; vk_z += {lanes}u) "
                    f"{{ {name}[vk_z] = {zero}; }}")
            add("    barrier();  // workgroup memory starts zeroed, as in the reference")
        if self.sg:
            add("    uint vk_sgo = 0u;  // scratch half of the next subgroup exchange")
        out.extend(self.lines)
        add("}")
        text = "\n".join(line for line, _ in out) + "\n"
        line_map = {i + 1: path for i, (_, path) in enumerate(out) if path is not None}
        codes = {TRAP_CODE_DIVISION: _TRAP_DIVISION_MESSAGE} if needs_trap else {}
        codes.update({c: f"Trap node, tag {tag!r}" for tag, c in self.trap_tags.items()})
        return Lowered(glsl=text, workgroup_size=(sx, sy, sz), bindings=tuple(storage), line_map=line_map,
                       features=frozenset(self.features), target_env="vulkan1.0",
                       trap_binding=trap_binding, trap_codes=codes)

    def accessors(self) -> list[str]:
        """Bounds-checked load/store/atomic functions for the buffers the program touches, named
        ``vk_<kind>_<stem>`` (parameters are `vk_` names too; program names are all `b_`/`v_`)."""
        lines: list[str] = []
        for b in self.p.buffers:  # declaration order: deterministic
            name, sm = self.names.buf(b.name), self.stem[b.name]
            st, el = b.element.glsl_storage, b.element
            length = f"{b.count}u" if b.is_workgroup else f"uint({name}.length())"
            if b.name in self.loads or b.name in self.nloads:
                # Branch-free: load at the index clamped into the buffer (never empty: the runtime
                # binds at least one element), then select. A load under a branch is not hoisted by
                # GPU compilers, which serialised every iteration of a long loop on its latency.
                raw = "vk_x"
                if el is BOOL:
                    val = f"{raw} != 0u"
                elif el is F32 and not b.is_workgroup:
                    val = f"vyre_canon({raw})"  # storage may hold NaN payloads or subnormals from the host
                    self.helpers.add("vyre_canon")
                else:
                    val = raw
                if b.name in self.loads:
                    lines.append(f"{el.glsl} vk_ld_{sm}(uint vk_i) {{ uint vk_n = {length}; "
                                 f"{st} vk_x = {name}[min(vk_i, vk_n - 1u)]; "
                                 f"return vk_i < vk_n ? {val} : {_ZERO[el]}; }}")
                if b.name in self.nloads:  # index proven < declared count (bounds.py)
                    lines.append(f"{el.glsl} vk_ldn_{sm}(uint vk_i) {{ {st} vk_x = {name}[vk_i]; return {val}; }}")
            if b.name in self.stores:
                val = "vyre_canon(vk_v)" if el is F32 else "vk_v"
                if el is F32:
                    self.helpers.add("vyre_canon")
                lines.append(f"void vk_st_{sm}(uint vk_i, {st} vk_v) {{ if (vk_i < {length}) {name}[vk_i] = {val}; }}")
            for op, buf in sorted(self.atomics):
                if buf != b.name:
                    continue
                info = next(a for a in ATOMICS.values() if a.name == op)
                if info.needs_expected:
                    sig, call = "uint vk_i, uint vk_e, uint vk_v", f"{info.glsl}({name}[vk_i], vk_e, vk_v)"
                else:
                    sig, call = "uint vk_i, uint vk_v", f"{info.glsl}({name}[vk_i], vk_v)"
                lines.append(f"uint vk_at_{op.lower()}_{sm}({sig}) {{ return vk_i < {length} ? {call} : 0u; }}")
        return lines


# ----------------------------------------------------------------------------- public API
def lower(program: Program, *, check: bool = True) -> Lowered:
    """Lower a valid vyre IR program to a GLSL 450 compute shader.

    The program is validated first (``check=False`` skips that when the caller already
    did); anything the Vulkan backend cannot express raises :class:`LoweringError`.
    The same program always gives byte-identical GLSL.

    >>> from vyre_vk import ops
    >>> low = lower(ops.get("vyre-libs::nn::mlp_backward").build())
    >>> low.workgroup_size, [b.name for b in low.bindings][:2], low.glsl.splitlines()[0]
    ((64, 1, 1), ['x', 'w1'], '#version 450')
    """
    if not isinstance(program, Program):
        raise LoweringError("program", f"expected a Program, got {type(program).__name__}.",
                            "build one with Program.wrapped(buffers, workgroup_size, entry).")
    if check:
        try:
            validate(program)
        except ValidationError as err:
            raise LoweringError(err.path, f"the program is not valid: {err.message}", err.fix) from err
    return _Lowerer(program).run()
