"""Expressions -> GLSL: one method per expression kind, chosen through :data:`EXPR_RULES`.

Each method returns ``(GLSL code, value type)``. Operators, casts, Select and Fma are
filled in from the spelling table (spelling.py); subgroup collectives are emulated at
vyre's width 32 through workgroup scratch (glsl.py's notes).
"""
from __future__ import annotations

from typing import Any, Callable, ClassVar

from ..ir import expr as E
from ..ir.optable import ATOMICS, BINOPS, UNOPS, BinOp
from ..ir.types import DataType
from .base import BOOL, F32, I32, U32, LowererBase, fill
from .bytes import byte_len_expr
from .result import LoweringError
from .spelling import (BINOP_GLSL, CAST_GLSL, FMA_GLSL, SELECT_GLSL, UNOP_GLSL, VALUE_TYPE, ZERO, f32_literal,
                       i32_literal, u32_literal)
from .vector import component

Code = tuple[str, DataType]
_AXES = "xyz"
#: SubgroupReduce op -> the BinOp that folds it, and its identity per value type.
_REDUCE_BINOP = {"Add": BinOp.Add, "Mul": BinOp.Mul, "Min": BinOp.Min, "Max": BinOp.Max, "And": BinOp.BitAnd,
                 "Or": BinOp.BitOr, "Xor": BinOp.BitXor}
_REDUCE_IDENTITY = {
    U32: {"Add": "0u", "Mul": "1u", "Min": "0xFFFFFFFFu", "Max": "0u", "And": "0xFFFFFFFFu", "Or": "0u", "Xor": "0u"},
    F32: {"Add": "0.0", "Mul": "1.0", "Min": f32_literal(0x7F800000), "Max": f32_literal(0xFF800000)},
}


class ExprLowerer(LowererBase):
    """The expression layer of the lowerer."""

    #: Expression class -> method (filled in below the class, like tinygrad's ``code_for_op``).
    EXPR_RULES: ClassVar[dict[type, Callable[[Any, Any, str], Code]]] = {}

    def expr(self, e: E.Expr, path: str) -> Code:
        rule = self.EXPR_RULES.get(type(e))
        if rule is None:
            kind = E.EXPR_KIND.get(type(e), type(e).__name__)
            raise LoweringError(path, f"expression kind {kind} is not supported by the Vulkan backend yet.",
                                "inline called ops (Call has no Vulkan lowering).")
        return rule(self, e, path)

    def cond(self, e: E.Expr, path: str) -> str:
        """A condition by truthiness (non-zero is true), as the cast to bool."""
        return self.truthy(*self.expr(e, path))

    # ---- leaves
    def lit_u32(self, e: E.LitU32, path: str) -> Code:
        return u32_literal(e.value), U32

    def lit_i32(self, e: E.LitI32, path: str) -> Code:
        return i32_literal(e.value), I32

    def lit_f32(self, e: E.LitF32, path: str) -> Code:
        return f32_literal(e.bits), F32

    def lit_bool(self, e: E.LitBool, path: str) -> Code:
        return ("true" if e.value else "false"), BOOL

    def variable(self, e: E.Var, path: str) -> Code:
        t = self.var_type(e.name, path)  # first: an unbound name (an unvalidated program) is a LoweringError
        return self.var[e.name], t

    def invocation_id(self, e: E.InvocationId, path: str) -> Code:
        return f"gl_GlobalInvocationID.{_AXES[e.axis]}", U32

    def workgroup_id(self, e: E.WorkgroupId, path: str) -> Code:
        return f"gl_WorkGroupID.{_AXES[e.axis]}", U32

    def local_id(self, e: E.LocalId, path: str) -> Code:
        return f"gl_LocalInvocationID.{_AXES[e.axis]}", U32

    def subgroup_local_id(self, e: E.SubgroupLocalId, path: str) -> Code:
        return f"(gl_LocalInvocationIndex & {E.SUBGROUP_WIDTH - 1}u)", U32

    def subgroup_size(self, e: E.SubgroupSize, path: str) -> Code:
        return u32_literal(E.SUBGROUP_WIDTH), U32

    # ---- memory
    def load(self, e: E.Load, path: str) -> Code:
        d = self.buffer(e.buffer, path)
        if self.vector_index(e.buffer, e.index, self.vplan.loads if self.vplan else ()):
            lane = f"vk_vl_{self.stem[d.name]}.{component(self.vlane)}"
            if d.element is F32:
                self.helpers.add("vyre_canon")
                return f"vyre_canon({lane})", F32
            return (f"({lane} != 0u)" if d.element is BOOL else lane), d.element
        raw = self.spec is not None and self.spec.raw_load is e and d.element is F32 and not d.is_workgroup
        if raw:  # only a chain add/sub operand (speculate.raw_loads): no vyre_canon, the loop's check raised
            self.spec.raw_load, self.spec.absorbed = None, True
        idx, _ = self.expr(e.index, path + ".index")
        if self.inside(d, e.index):
            (self.nrloads if raw else self.nloads).add(d.name)
            return f"vk_ldn{'r' if raw else ''}_{self.stem[d.name]}({idx})", d.element
        (self.rloads if raw else self.loads).add(d.name)
        return f"vk_ld{'r' if raw else ''}_{self.stem[d.name]}({idx})", d.element

    def buf_len(self, e: E.BufLen, path: str) -> Code:
        d = self.buffer(e.buffer, path)
        if d.is_workgroup:
            return u32_literal(d.count), U32
        if d.element.is_byte:  # the byte count, not the words (bytes.py)
            return byte_len_expr(self.names.buf(d.name), self.stem[d.name], self.storage_8bit), U32
        return f"uint({self.names.buf(d.name)}.length())", U32

    def atomic(self, e: E.Atomic, path: str) -> Code:
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

    # ---- operators (the spelling table)
    def binop(self, e: E.BinOpExpr, path: str) -> Code:
        info = BINOPS[e.op]
        spec = self.spec
        side = spec.absorbed_side(e) if spec is not None else None
        a, ta = self.operand(e.left, path + ".left", side == 0, spec is not None and spec.raw_operand(e, e.left))
        b, _ = self.operand(e.right, path + ".right", side == 1, spec is not None and spec.raw_operand(e, e.right))
        if self.spec is not None and ta is F32:
            fn = self.spec.helper(e, self.table, lambda: self.expr(e.right.value, path + ".right.value")[1])
            if fn is not None:  # a speculative chain's operation (speculate.py)
                self.helpers.add(fn)
                return f"{fn}({a}, {b}{self.spec.take_arg()})", F32
        tpl = self.template(BINOP_GLSL[e.op], ta, f"binary op {info.name}", path)
        return fill(tpl, a=a, b=b), info.result_type(ta)

    def operand(self, x: E.Expr, path: str, absorbed: bool, raw: bool = False) -> Code:
        """`x` lowered; `absorbed`: it is a product the speculative chain's add absorbs (plain a * b);
        `raw`: a load read without vyre_canon (speculate.raw_loads)."""
        if raw:
            self.spec.raw_load = x
        if not absorbed:
            return self.expr(x, path)
        self.spec.pending = x
        try:
            return self.expr(x, path)
        finally:
            self.spec.pending = None

    def unop(self, e: E.UnOpExpr, path: str) -> Code:
        info = UNOPS[e.op]
        a, ta = self.expr(e.operand, path + ".operand")
        tpl = self.template(UNOP_GLSL[e.op], ta, f"unary op {info.name}", path)
        return fill(tpl, a=a), info.result_type(ta)

    def select(self, e: E.Select, path: str) -> Code:
        c = self.cond(e.cond, path + ".cond")
        a, ta = self.expr(e.true_val, path + ".true_val")
        b, _ = self.expr(e.false_val, path + ".false_val")
        self.use(SELECT_GLSL)
        return fill(SELECT_GLSL, c=c, t=a, f=b), ta

    def cast(self, e: E.Cast, path: str) -> Code:
        v, tv = self.expr(e.value, path + ".value")
        tpl = CAST_GLSL.get((tv, e.target))
        if tpl is None:
            raise LoweringError(path, f"no cast from {tv.value} to {e.target.value}.",
                                "cast through u32 (see vyre_vk.ir.optable.CASTS).")
        self.use(tpl)
        return fill(tpl, a=v), e.target

    def fma(self, e: E.Fma, path: str) -> Code:
        a, _ = self.expr(e.a, path + ".a")
        b, _ = self.expr(e.b, path + ".b")
        c, _ = self.expr(e.c, path + ".c")
        self.use(FMA_GLSL)
        return fill(FMA_GLSL, a=a, b=b, c=c), F32

    # ---- subgroup collectives (glsl.py's notes)
    def collective(self, e: E.Expr, path: str) -> Code:
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
        self.emit(f"{VALUE_TYPE[rt]} vk_sgr{k} = {fn}({args});", path)
        self.emit(f"vk_sgo = {self.sg_lanes()}u - vk_sgo;  // the other scratch half next time", path)
        return f"vk_sgr{k}", rt

    def sg_helper(self, e: E.Expr, vt: DataType) -> Code:
        """Name and result type of the function reading this lane's 32-lane group from scratch half `o`."""
        head = (f"uint vk_b = gl_LocalInvocationIndex & ~{E.SUBGROUP_WIDTH - 1}u; "
                f"uint vk_n = min({E.SUBGROUP_WIDTH}u, {self.sg_lanes()}u - vk_b);")
        vtype = VALUE_TYPE[vt]
        if isinstance(e, E.SubgroupBallot):
            name, rt = "vk_sg_ballot", U32
            body = (f"uint vk_sg_ballot(uint o) {{ {head} uint vk_r = 0u; "
                    "for (uint j = 0u; j < vk_n; j++) { vk_r |= (vk_sg[o + vk_b + j] & 1u) << j; } return vk_r; }")
        elif isinstance(e, E.SubgroupShuffle):
            name, rt = f"vk_sg_shuffle_{vt.value}", vt
            word = "vk_sg[o + vk_b + lane]"
            read = word if vt is U32 else f"uintBitsToFloat({word})"
            body = (f"{vtype} {name}(uint o, uint lane) {{ {head} "
                    f"return lane < vk_n ? {read} : {ZERO[vt]}; }}")
        else:
            name, rt = f"vk_sg_{e.op.lower()}_{vt.value}", vt
            tpl = BINOP_GLSL[_REDUCE_BINOP[e.op]][vt]
            self.use(tpl)
            word = "vk_sg[o + vk_b + j]"
            lane = word if vt is U32 else f"uintBitsToFloat({word})"
            fold = fill(tpl, a="vk_acc", b=lane)
            body = (f"{vtype} {name}(uint o) {{ {head} {vtype} vk_acc = {_REDUCE_IDENTITY[vt][e.op]}; "
                    f"for (uint j = 0u; j < vk_n; j++) {{ vk_acc = {fold}; }} return vk_acc; }}")
        self.sg_helpers[name] = body
        return name, rt


ExprLowerer.EXPR_RULES = {
    E.LitU32: ExprLowerer.lit_u32,
    E.LitI32: ExprLowerer.lit_i32,
    E.LitF32: ExprLowerer.lit_f32,
    E.LitBool: ExprLowerer.lit_bool,
    E.Var: ExprLowerer.variable,
    E.Load: ExprLowerer.load,
    E.BufLen: ExprLowerer.buf_len,
    E.InvocationId: ExprLowerer.invocation_id,
    E.WorkgroupId: ExprLowerer.workgroup_id,
    E.LocalId: ExprLowerer.local_id,
    E.BinOpExpr: ExprLowerer.binop,
    E.UnOpExpr: ExprLowerer.unop,
    E.Select: ExprLowerer.select,
    E.Cast: ExprLowerer.cast,
    E.Fma: ExprLowerer.fma,
    E.Atomic: ExprLowerer.atomic,
    E.SubgroupLocalId: ExprLowerer.subgroup_local_id,
    E.SubgroupSize: ExprLowerer.subgroup_size,
    **{t: ExprLowerer.collective for t in E.SUBGROUP_COLLECTIVES},
}
