"""vyre IR Program -> GLSL 450 compute shader text.

Table-driven: the IR's operator table (:mod:`vyre_vk.ir.optable`) says what each operator
means and what type it yields; the lowering's own tables say how GLSL spells it
(:mod:`.spelling`: operators, casts, types and literals keyed by the IR's enums;
:mod:`.helpers`: the helper functions they call). Expressions and statements are lowered
by one method per kind, picked from a type -> method table (:mod:`.exprs`, :mod:`.stmts`);
this module lays out the shader around them. Decisions that keep GPU results identical to the
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
* U8/I8 buffers pack four bytes per word; their byte counts come from specialization
  constants the runtime sets (``Lowered.byte_lengths``), byte stores are compare-and-swap
  loops (bytes.py), or single ``uint8_t`` stores where the device has 8-bit storage.
* Traps (``Trap`` nodes, i32 division by zero or MIN/-1) set a flag word in an extra
  storage buffer at binding ``Lowered.trap_binding``; the runtime raises when it is set.
* Subgroup collectives get vyre's simulated width 32 on any device (hardware subgroups are
  8 wide on lavapipe, 32 on NVIDIA, up to 128 elsewhere, and cannot be requested through kp):
  each lane writes its operand word to a workgroup scratch array, a barrier, then every lane
  folds its own 32-lane group in lane order (bit-identical f32 folds, the spelling table's f32 ops). Two
  scratch halves alternate, so one barrier per collective suffices: a half is rewritten only
  after the next collective's barrier, which every lane reaches after its reads. Barriers need
  every lane of the workgroup, so an ``if`` whose body holds a collective is predicated (a
  ``bool vk_pN``: lets become ``p ? value : 0``, assigns/stores/other statements are guarded by
  ``if (p)``) instead of branched; validation guarantees subgroup-uniform conditions,
  workgroup-uniform loop bounds and no divergent return before a collective.
"""
from __future__ import annotations

from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import ATOMICS, AtomicOp
from ..ir.program import Program
from ..ir.types import BufferAccess
from ..ir.validate import ValidationError, validate
from .base import BOOL, F32, helper_calls, store_accessor
from .bytes import byte_accessors, spec_constant_decl, words
from .helpers import GLSL_HELPERS
from .names import comment
# TRAP_WORDS is re-exported: vyre_vk.lower.glsl is an import path callers use.
from .result import TRAP_CODE_DIVISION, TRAP_DIVISION_MESSAGE, TRAP_WORDS, Lowered, LoweringError  # noqa: F401
from .spelling import ATOMIC_GLSL, STORAGE_TYPE, VALUE_TYPE, ZERO
from .stmts import StmtLowerer
from .vector import vec_type, vector_plan


class _Lowerer(StmtLowerer):
    """The whole lowerer: statements and expressions (stmts.py, exprs.py) plus the shader around them."""

    def helper_order(self) -> list[str]:
        """Used helpers plus their dependencies, each after what it calls (table order)."""
        order: list[str] = []
        seen: set[str] = set()

        def visit(h: str) -> None:
            if h in seen:
                return
            seen.add(h)
            for dep in helper_calls(self.table[h], self.table):
                if dep != h:
                    visit(dep)
            order.append(h)

        for h in self.table:  # table order: deterministic
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
        needs_trap = "trap" in self.features or any("vyre_trap" in self.table[h] for h in helpers)
        storage = sorted((b for b in p.buffers if not b.is_workgroup), key=lambda b: b.binding)
        workgroup = [b for b in p.buffers if b.is_workgroup]
        byte_lengths = tuple(b.name for b in storage if b.element.is_byte)  # constant_id = position
        if byte_lengths or any(b.element.is_byte for b in workgroup):
            self.features.add("byte_buffers")
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
        if byte_lengths and self.storage_8bit:
            add("#extension GL_EXT_shader_8bit_storage : require")
        add(f"// vyre op: {comment(op_id)}")
        add(f"// program content hash: {p.content_hash()}")
        add("// generated by vyre_vk.lower from vyre IR; do not edit")
        add(f"layout(local_size_x = {sx}, local_size_y = {sy}, local_size_z = {sz}) in;")
        add("")
        for b in storage:
            name, st = self.names.buf(b.name), self.stem[b.name]
            quals = []
            if b.access in (BufferAccess.ReadOnly, BufferAccess.Uniform):
                quals.append("readonly")
            elif barrier and b.name in self.exchanged:
                quals.append("coherent")  # writes must be visible to the workgroup after a barrier
            q = " ".join(quals) + (" " if quals else "")
            elem = "uint8_t" if b.element.is_byte and self.storage_8bit else STORAGE_TYPE[b.element]
            add(f"layout(std430, set = 0, binding = {b.binding}) {q}buffer vk_buf_{st} "
                f"{{ {elem} {name}[]; }};  // {b.element.value}, {b.access.value}")
            if plan is not None and b.name in plan.loads + plan.stores:  # same binding, 16-byte view
                add(f"layout(std430, set = 0, binding = {b.binding}) {q}buffer vk_buf4_{st} "
                    f"{{ {vec_type(STORAGE_TYPE[b.element])} vk_v4_{st}[]; }};  // {name} as 4-word vectors")
        for k, name in enumerate(byte_lengths):
            add(spec_constant_decl(k, self.stem[name], name))
        for b in workgroup:
            n = words(b.count) if b.element.is_byte else b.count
            add(f"shared {STORAGE_TYPE[b.element]} {self.names.buf(b.name)}[{n}];  // {b.element.value}, workgroup")
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
                for line in self.table[h].split("\n"):
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
                zero = {"uint": "0u", "int": "0", "float": "0.0"}[STORAGE_TYPE[b.element]]
                n = words(b.count) if b.element.is_byte else b.count
                add(f"    for (uint vk_z = gl_LocalInvocationIndex; vk_z < {n}u; vk_z += {lanes}u) "
                    f"{{ {name}[vk_z] = {zero}; }}")
            add("    barrier();  // workgroup memory starts zeroed, as in the reference")
        if self.sg:
            add("    uint vk_sgo = 0u;  // scratch half of the next subgroup exchange")
        out.extend(self.lines)
        add("}")
        text = "\n".join(line for line, _ in out) + "\n"
        line_map = {i + 1: path for i, (_, path) in enumerate(out) if path is not None}
        codes = {TRAP_CODE_DIVISION: TRAP_DIVISION_MESSAGE} if needs_trap else {}
        codes.update({c: f"Trap node, tag {tag!r}" for tag, c in self.trap_tags.items()})
        return Lowered(glsl=text, workgroup_size=(sx, sy, sz), bindings=tuple(storage), line_map=line_map,
                       # uint8_t storage buffers need SPIR-V's StorageBuffer class (Vulkan 1.1): under 1.0
                       # glslang makes them Uniform+BufferBlock, which asks for uniformAndStorageBuffer8BitAccess
                       features=frozenset(self.features),
                       target_env="vulkan1.1" if byte_lengths and self.storage_8bit else "vulkan1.0",
                       trap_binding=trap_binding, trap_codes=codes, byte_lengths=byte_lengths,
                       shared_extra=self.shared_extra)

    def accessors(self) -> list[str]:
        """Bounds-checked load/store/atomic functions for the buffers the program touches, named
        ``vk_<kind>_<stem>`` (parameters are `vk_` names too; program names are all `b_`/`v_`)."""
        lines: list[str] = []
        for b in self.p.buffers:  # declaration order: deterministic
            name, sm = self.names.buf(b.name), self.stem[b.name]
            st, el = STORAGE_TYPE[b.element], b.element
            if el.is_byte:  # no atomics on them (validation: V014)
                lines += byte_accessors(b, name, sm, b.name in self.loads, b.name in self.nloads, b.name in self.stores,
                                        native=self.storage_8bit)
                continue
            length = f"{b.count}u" if b.is_workgroup else f"uint({name}.length())"
            # Branch-free: load at the index clamped into the buffer (never empty: the runtime binds at
            # least one element), then select. A load under a branch is not hoisted by GPU compilers,
            # which serialised every iteration of a long loop on its latency.
            stored_f32 = el is F32 and not b.is_workgroup  # may hold NaN payloads or subnormals from the host
            val = "vk_x != 0u" if el is BOOL else "vyre_canon(vk_x)" if stored_f32 else "vk_x"
            # vk_ld_ clamps, vk_ldn_ has its index proven < the declared count (bounds.py); the r
            # variants read a value as stored, for a speculative chain's summands (speculate.raw_loads)
            variants = [(self.rloads, self.nrloads, "r", "vk_x")] if stored_f32 else []
            variants.append((self.loads, self.nloads, "", val))
            for clamped, proven, r, v in variants:
                if b.name in clamped or b.name in proven:
                    self.helpers.update(helper_calls(v, self.table))
                if b.name in clamped:
                    lines.append(f"{VALUE_TYPE[el]} vk_ld{r}_{sm}(uint vk_i) {{ uint vk_n = {length}; "
                                 f"{st} vk_x = {name}[min(vk_i, vk_n - 1u)]; "
                                 f"return vk_i < vk_n ? {v} : {ZERO[el]}; }}")
                if b.name in proven:
                    lines.append(f"{VALUE_TYPE[el]} vk_ldn{r}_{sm}(uint vk_i) {{ {st} vk_x = {name}[vk_i]; "
                                 f"return {v}; }}")
            for buf, checked, canon in sorted(self.stores_as):
                if buf != b.name:
                    continue
                val = "vyre_canon(vk_v)" if el is F32 and canon else "vk_v"
                if val != "vk_v":
                    self.helpers.add("vyre_canon")
                fn = store_accessor(sm, el, checked, canon)
                body = f"if (vk_i < {length}) {name}[vk_i] = {val};" if checked else f"{name}[vk_i] = {val};"
                lines.append(f"void {fn}(uint vk_i, {st} vk_v) {{ {body} }}")
            for op, buf in sorted(self.atomics):
                if buf != b.name:
                    continue
                fn = ATOMIC_GLSL[AtomicOp[op]]
                if ATOMICS[AtomicOp[op]].needs_expected:
                    sig, call = "uint vk_i, uint vk_e, uint vk_v", f"{fn}({name}[vk_i], vk_e, vk_v)"
                else:
                    sig, call = "uint vk_i, uint vk_v", f"{fn}({name}[vk_i], vk_v)"
                lines.append(f"uint vk_at_{op.lower()}_{sm}({sig}) {{ return vk_i < {length} ? {call} : 0u; }}")
        return lines


# ----------------------------------------------------------------------------- public API
def lower(program: Program, *, check: bool = True, fused_fma: bool = False, latency_bound: bool = False,
          float64: bool = False, storage_8bit: bool = False, fast: bool = False,
          native_math: tuple[str, ...] = ()) -> Lowered:
    """Lower a valid vyre IR program to a GLSL 450 compute shader.

    The program is validated first (``check=False`` skips that when the caller already
    did); anything the Vulkan backend cannot express raises :class:`LoweringError`.
    The same program always gives byte-identical GLSL. ``fused_fma``: the device's fma()
    is fused (its probe passed), so division takes the fast exact path (ieee.FUSED);
    ``latency_bound``: few invocations run long loops, so the f32 helpers are the branch-free
    ones (helpers.BRANCHLESS); ``float64``: the device has shaderFloat64 (its probe passed), so
    exp and tanh are evaluated in double (ffmath64.py); ``storage_8bit``: the device has
    storageBuffer8BitAccess, so storage byte buffers are ``uint8_t`` arrays (bytes.py). None changes
    a result bit. ``fast``: the fast precision (fastmath.py): f32 arithmetic may be contracted and is
    not canonicalised, and the builtins named in ``native_math`` replace the exact helpers.

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
    return _Lowerer(program, fused_fma, latency_bound, float64, storage_8bit, fast, native_math).run()
