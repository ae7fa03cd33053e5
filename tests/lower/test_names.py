"""Issue 13: program names never collide with anything the lowering generates.

Buffers are spelled ``b_<stem>``, variables ``v_<stem>`` (vyre_vk/lower/names.py); every
name the lowering itself writes stays out of those prefixes. These tests lower and run, on the
device and against the reference, programs whose buffers and variables are named after every GLSL
keyword and reserved word (glslang's list), every identifier the lowering emits (harvested from its
own output, so the list follows the lowering as it changes), ``gl_`` and ``__`` names, a buffer and
a let of the same name, names that differ only by underscores, and random strings the validator
accepts (any non-empty string).
"""
from __future__ import annotations

import re
from typing import Callable, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vyre_vk import ops, reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.lower.helpers import GLSL_HELPERS
from vyre_vk.lower import glsl_names, lower, stem
from vyre_vk.opt import optimize
from vyre_vk.spirv import compile_glsl

U32, I32, F32 = DataType.U32, DataType.I32, DataType.F32
Names = Callable[[str], str]  # role -> program name

_SETTINGS = settings(deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                            HealthCheck.filter_too_much])

# ----------------------------------------------------------------------------- hostile names
# glslang's KeywordMap and ReservedSet (MachineIndependent/Scan.cpp), the spelled-out part; the
# type families (vectors, matrices, samplers, images, textures) are generated below.
_GLSLANG_WORDS = """
const uniform tileImageEXT buffer in out smooth flat centroid invariant packed resource inout struct
break continue do for while switch case default if else discard terminateInvocation terminateRayEXT
ignoreIntersectionEXT return void bool float int uint double true false layout shared highp mediump
lowp superp precision nonuniformEXT demote attribute varying noperspective coherent devicecoherent
queuefamilycoherent workgroupcoherent subgroupcoherent shadercallcoherent nonprivate restrict readonly
writeonly atomic_uint volatile nontemporal patch sample subroutine int64_t uint64_t int8_t uint8_t
int16_t uint16_t int32_t uint32_t float16_t bfloat16_t floate5m2_t floate4m3_t float32_t float64_t
spirv_instruction spirv_execution_mode spirv_execution_mode_id spirv_decorate spirv_decorate_id
spirv_decorate_string spirv_type spirv_storage_class spirv_by_reference spirv_literal sampler
samplerShadow samplerExternalOES __samplerExternal2DY2YEXT attachmentEXT iattachmentEXT uattachmentEXT
subpassInput subpassInputMS isubpassInput isubpassInputMS usubpassInput usubpassInputMS f16subpassInput
f16subpassInputMS __explicitInterpAMD pervertexNV pervertexEXT precise rayPayloadNV rayPayloadEXT
rayPayloadInNV rayPayloadInEXT hitAttributeNV hitAttributeEXT callableDataNV callableDataEXT
callableDataInNV callableDataInEXT accelerationStructureNV accelerationStructureEXT rayQueryEXT
perprimitiveNV perviewNV taskNV perprimitiveEXT taskPayloadSharedEXT fcoopmatNV icoopmatNV ucoopmatNV
coopmat hitObjectNV hitObjectAttributeNV tensorARM hitObjectEXT hitObjectAttributeEXT __function
tensorLayoutNV tensorViewNV coopvecNV vector resourceheap samplerheap
common partition active asm class union enum typedef template this goto inline noinline public static
extern external interface long short half fixed unsigned input output hvec2 hvec3 hvec4 fvec2 fvec3
fvec4 sampler3DRect filter sizeof cast namespace using
main defined __LINE__ __FILE__ __VERSION__ GL_core_profile GL_SPIRV VULKAN GL_ES
gl_GlobalInvocationID gl_LocalInvocationID gl_LocalInvocationIndex gl_WorkGroupID gl_NumWorkGroups
gl_WorkGroupSize gl_SubgroupSize gl_SubgroupInvocationID gl_x gl_ gl
length radians sin cos exp log sqrt abs min max clamp mix fma floatBitsToUint uintBitsToFloat
atomicAdd atomicCompSwap barrier memoryBarrierShared memoryBarrierBuffer findLSB findMSB bitCount
"""


def _glslang_keywords() -> set[str]:
    words = set(_GLSLANG_WORDS.split())
    scalars = ["", "b", "i", "u", "d", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16",
               "fe5m2", "fe4m3", "f32", "f64"]
    words |= {f"{p}vec{n}" for p in scalars for n in (2, 3, 4)}
    for p in ("", "d", "f16", "f32", "f64"):
        words |= {f"{p}mat{n}" for n in (2, 3, 4)} | {f"{p}mat{a}x{b}" for a in (2, 3, 4) for b in (2, 3, 4)}
    dims = ["1D", "2D", "3D", "Cube", "2DRect", "1DArray", "2DArray", "CubeArray", "Buffer", "2DMS", "2DMSArray"]
    for p in ("", "i", "u", "f16", "i64", "u64"):
        for kind in ("sampler", "image", "texture"):
            words |= {f"{p}{kind}{d}" for d in dims}
        words |= {f"{p}sampler{d}Shadow" for d in ("1D", "2D", "Cube", "2DRect", "1DArray", "2DArray", "CubeArray")}
    return words


def _p(gen: str, bufs: list, body: list, wg: int = 64) -> Program:
    return Program.wrapped(bufs, (wg, 1, 1), [wrap_anonymous(gen, body)])


# Small programs that between them reach every kind of name the lowering writes: accessors (clamped
# and unclamped loads, stores, atomics), traps (i32 division, Trap nodes), f32 helpers, loops,
# workgroup memory and barriers, emulated subgroups (scratch, helpers, predicated ifs) and the
# coarsened vector path. Each takes its buffer/variable names from `n` (a role -> name map), so the
# same shapes are first lowered with plain names (to harvest generated identifiers) and then run
# with hostile ones.
def _trap_i32(n: Names) -> Program:
    i, a, o = Expr.var(n("i")), n("a"), n("o")
    return _p("names::trap", [BufferDecl.read(a, 0, I32).with_count(8), BufferDecl.output(o, 1, I32).with_count(8)], [
        Node.let_bind(n("i"), Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.u32(8)), [
            Node.let_bind(n("q"), Expr.div(Expr.load(a, i), Expr.i32(3))),
            Node.if_then(Expr.gt(i, Expr.u32(1000)), [Node.trap(i, "never")]),
            Node.store(o, i, Expr.add(Expr.var(n("q")), Expr.rem(Expr.load(a, Expr.u32(7)), Expr.i32(5))))])])


def _f32_loop_atomics(n: Names) -> Program:
    i, x, y, c = Expr.var(n("i")), n("a"), n("o"), n("c")
    acc, k = n("q"), n("k")
    return _p("names::f32", [BufferDecl.read(x, 0, F32).with_count(8), BufferDecl.output(y, 1, F32).with_count(8),
                                BufferDecl.read_write(c, 2, U32).with_count(2)], [
        Node.let_bind(n("i"), Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.u32(8)), [
            Node.let_bind(acc, Expr.f32(0.5)),
            Node.loop_for(k, Expr.u32(0), Expr.u32(3), [
                Node.assign(acc, Expr.add(Expr.var(acc), Expr.div(Expr.load(x, Expr.var(k)), Expr.f32(3.0))))]),
            Node.store(y, i, Expr.sqrt(Expr.abs(Expr.mul(Expr.var(acc), Expr.load(x, i))))),
            Node.let_bind(n("t"), Expr.atomic_add(c, Expr.u32(0), Expr.u32(1))),
            Node.let_bind(n("u"), Expr.atomic_max(c, Expr.u32(1), i))])])


def _workgroup_subgroup(n: Names) -> Program:
    lid, a, w, o = Expr.local_x(), n("a"), n("w"), n("o")
    v = Expr.var(n("q"))
    return _p("names::sg", [BufferDecl.read(a, 0, U32).with_count(64), BufferDecl.workgroup(w, 64, U32),
                               BufferDecl.output(o, 1, U32).with_count(64)], [
        Node.let_bind(n("i"), Expr.gid_x()),
        Node.store(w, lid, Expr.load(a, Expr.var(n("i")))),
        Node.barrier(),
        Node.let_bind(n("q"), Expr.load(w, Expr.rem(Expr.add(lid, Expr.u32(1)), Expr.u32(64)))),
        Node.let_bind(n("t"), Expr.subgroup_add(v)),
        Node.let_bind(n("u"), Expr.subgroup_ballot(Expr.gt(v, Expr.u32(100)))),
        Node.let_bind(n("k"), Expr.subgroup_shuffle(v, Expr.u32(3))),
        Node.if_then(Expr.gt(Expr.load(a, Expr.u32(0)), Expr.u32(7)), [  # uniform: predicated
            Node.let_bind(n("c"), Expr.subgroup_max(v)),
            Node.store(o, Expr.var(n("i")), Expr.bitxor(Expr.var(n("c")), Expr.var(n("k"))))]),
        Node.store(o, Expr.add(Expr.var(n("i")), Expr.u32(0)),
                   Expr.add(Expr.load(o, Expr.var(n("i"))), Expr.add(Expr.var(n("t")), Expr.var(n("u")))))])


def _elementwise(n: Names) -> Program:
    i = Expr.var(n("i"))
    a, b, o = n("a"), n("c"), n("o")
    return _p("names::ew", [BufferDecl.read(a, 0, U32).with_count(37), BufferDecl.read(b, 1, F32).with_count(37),
                               BufferDecl.output(o, 2, U32).with_count(37)], [
        Node.let_bind(n("i"), Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.buf_len(o)), [
            Node.store(o, i, Expr.add(Expr.load(a, i), Expr.cast(U32, Expr.load(b, i))))])])


FEATURES = (_trap_i32, _f32_loop_atomics, _workgroup_subgroup, _elementwise)
ROLES = ("i", "a", "o", "q", "k", "c", "t", "u", "w")
_COARSEN = {"workgroup_size", "coarsen"}


def _plain(role: str) -> str:
    return {"i": "i", "a": "x", "o": "out", "q": "acc", "k": "k", "c": "cnt", "t": "t", "u": "u", "w": "tile"}[role]


def _user_names(p: Program) -> set[str]:
    names = glsl_names(p)
    return {names.buf(b) for b in names.buffers} | set(names.variables.values())


def _identifiers(glsl: str) -> set[str]:
    return set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*", glsl))


def _stages(p: Program) -> list[Program]:
    graph, _ = optimize(p, _COARSEN)
    return [p, *graph.stages]


def _harvest() -> tuple[set[str], set[str]]:
    """(identifiers the lowering generated, identifiers it spelled for program names) over every
    registered op and the feature programs (unoptimised and coarsened); plus the helper table."""
    generated, user = set(), set()
    programs = [e.build() for e in ops.all_ops()] + [s for f in FEATURES for s in _stages(f(_plain))]
    for p in programs:
        mine = _user_names(p)
        found = _identifiers(lower(p).glsl)
        user |= found & mine
        generated |= found - mine
    for text in GLSL_HELPERS.values():
        generated |= _identifiers(text)
    return generated, user


GENERATED, USER_SPELLED = _harvest()
KEYWORDS = _glslang_keywords()
HOSTILE = sorted(KEYWORDS | GENERATED | {n for n in USER_SPELLED if len(n) < 24} | {
    "b", "v", "b_", "v_", "b_x", "v_i", "b_b_x", "vk", "vk_", "vyre", "Z", "ZZ", "ZZ0", "Z5f", "x_Z", "__", "_",
    "trap", "trapbuf", "buf_trap", "vk_buf_trap", "vk_trapbuf", "ld_x", "4_x", "add_x", "gid.0", "<gid.0>",
})


# ----------------------------------------------------------------------------- the stem itself
def _decode(s: str) -> str:
    """Left inverse of `stem` (the decoding rules in glsl.py's notes): proves it injective."""
    if s == "ZZ":
        return ""
    out: list[str] = []
    prev_literal = False
    for w in s.split("_"):
        assert re.fullmatch(r"[A-Za-z0-9]+", w), s
        if w[0] == "Z":
            out.append("_" if w == "Z" else chr(int(w[1:], 16)))
            prev_literal = False
        else:
            out.append(("_" if prev_literal else "") + w)
            prev_literal = True
    return "".join(out)


_WORDS = re.compile(r"[A-Za-z0-9]+(_[A-Za-z0-9]+)*")


@_SETTINGS
@given(st.text(max_size=40) | st.text(alphabet="_aZ5f0", max_size=12))
def test_stem_is_injective_and_a_safe_identifier_tail(name):
    s = stem(name)
    assert _WORDS.fullmatch(s) and "__" not in s
    assert _decode(s) == name


def test_stem_keeps_plain_names_readable_and_underscore_variants_apart():
    assert [stem(x) for x in ("x", "i", "acc_sum", "out2")] == ["x", "i", "acc_sum", "out2"]
    variants = ["a_b", "a__b", "a___b", "ab", "_ab", "ab_", "_a_b", "a_b_", "_", "__", "___", "a_Zb", "aZ_b",
                "Z", "Z_", "_Z", "Z_a", "ZZ", "ZZ0", "Z5f", "a-b", "a b", "a\nb"]
    stems = [stem(v) for v in variants]
    assert len(set(stems)) == len(variants), dict(zip(variants, stems))


def test_long_names_are_cut_numbered_and_distinct():
    long_a, long_b = "q" * 3000, "q" * 2999 + "r"
    i = Expr.var(long_a)
    p = _p("names::long", [BufferDecl.read(long_a, 0, U32).with_count(4),
                                   BufferDecl.output(long_b, 1, U32).with_count(4)], [
        Node.let_bind(long_a, Expr.gid_x()), Node.let_bind(long_b, Expr.load(long_a, i)),
        Node.store(long_b, i, Expr.add(Expr.var(long_b), i))])
    names = glsl_names(p)
    spelled = [names.buf(long_a), names.buf(long_b), names.variables[long_a], names.variables[long_b]]
    assert len(set(spelled)) == 4 and max(map(len, spelled)) < 80
    compile_glsl(lower(p).glsl)


# ----------------------------------------------------------------------------- generated names
def test_generated_names_never_enter_the_program_namespaces():
    assert GENERATED and USER_SPELLED
    leaked = sorted(g for g in GENERATED | KEYWORDS if g.startswith(("b_", "v_")))
    assert not leaked, f"generated identifiers in the program-name namespaces: {leaked[:20]}"
    assert all(u.startswith(("b_", "v_")) and "__" not in u for u in USER_SPELLED)


def test_a_buffer_and_a_let_of_the_same_name_get_different_spellings():
    p = _batch(["i", "x", "y"])
    names = glsl_names(p)
    assert (names.buf("i"), names.variables["i"], names.buf("x"), names.variables["x"]) == ("b_i", "v_i", "b_x", "v_x")


def test_a_variable_named_like_a_range_key_proves_no_bounds():
    """bounds.py keeps gid's refined range under its own key: a let spelled like one (any string is
    a valid name) must not make a load at gid look in bounds."""
    gid = Expr.gid_x()
    bufs = [BufferDecl.read("a", 0, U32).with_count(4), BufferDecl.output("y", 1, U32).with_count(64)]
    for key in ("<gid.0>", "gid.0", "gid"):
        p = _p("names::key", bufs, [
            Node.let_bind(key, Expr.u32(1)), Node.store("y", gid, Expr.add(Expr.load("a", gid), Expr.var(key)))])
        glsl = lower(p).glsl
        assert "vk_ld_a(" in glsl and "vk_ldn_a(" not in glsl, key
        # ... nor take gid's refined range ([0, 3] under the guard) for its own value
        p = _p("names::key", bufs, [
            Node.if_then(Expr.lt(gid, Expr.u32(4)), [
                Node.let_bind(key, Expr.u32(100)), Node.store("y", gid, Expr.load("a", Expr.var(key)))])])
        glsl = lower(p).glsl
        assert "vk_ld_a(" in glsl and "vk_ldn_a(" not in glsl, key


# ----------------------------------------------------------------------------- runs on the device
_COUNT = 8


def _batch(names: Sequence[str]) -> Program:
    """names[0] is the output buffer and the index let; every other name is both a read buffer and
    a let that folds that buffer into a chain; names[1] is also a loop variable in a sibling scope."""
    n0, rest = names[0], list(names[1:])
    idx = Expr.var(n0)
    bufs = [BufferDecl.output(n0, 0, U32).with_count(_COUNT)]
    bufs += [BufferDecl.read(x, k + 1, U32).with_count(_COUNT) for k, x in enumerate(rest)]
    chain, prev = [], None
    for k, x in enumerate(rest):
        v = Expr.load(x, idx)
        chain.append(Node.let_bind(x, v if prev is None else Expr.bitxor(v, Expr.mul(Expr.var(prev), Expr.u32(k + 3)))))
        prev = x
    chain.append(Node.store(n0, idx, Expr.var(prev)))
    side = Node.block([Node.loop_for(rest[0], Expr.u32(0), Expr.u32(2), [  # own element: no race
        Node.store(n0, idx, Expr.var(rest[0]))])])
    return _p("names::batch", bufs, [
        Node.let_bind(n0, Expr.gid_x()),
        Node.if_then(Expr.lt(idx, Expr.u32(_COUNT)), [side, *chain])])


def _inputs(p: Program, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for b in p.input_buffers:
        if b.element is F32:
            out[b.name] = rng.uniform(-4, 4, b.count).astype(np.float32)
        elif b.element is I32:
            out[b.name] = rng.integers(-1000, 1000, b.count, dtype=np.int32)
        else:
            out[b.name] = rng.integers(0, 2**32, b.count, dtype=np.uint32)
    return out


def _check(dev, p: Program, seed: int = 0) -> None:
    validate(p)
    inputs = _inputs(p, seed)
    want = reference.run(p, inputs)
    for opt in (False, True):
        got = dev.compile(p, optimize=opt).run(inputs)
        for name in want:
            assert got[name].tobytes() == want[name].tobytes(), (opt, name, want[name][:8], got[name][:8])


_PER_BATCH = 63  # the runtime binds at most 64 storage buffers
_BATCHES = [HOSTILE[k:k + _PER_BATCH] for k in range(0, len(HOSTILE), _PER_BATCH)]


@pytest.mark.parametrize("batch", range(len(_BATCHES)))
def test_hostile_names_as_buffers_and_lets(vk_device, batch):
    _check(vk_device, _batch(_BATCHES[batch]), seed=batch)


def test_names_that_differ_only_by_underscores(vk_device):
    _check(vk_device, _batch(["_", "a_b", "a__b", "a___b", "ab", "_ab", "ab_", "_a_b", "a_b_", "__", "___",
                              "a_Zb", "aZ_b", "Z", "Z_", "_Z", "Z_a", "ZZ", "Z5f", "a-b", "a b"]))


_HOSTILE_ROLES = [
    dict(zip(ROLES, ("vk_i", "vk_x", "vk_trap", "vk_sg", "j", "o", "lane", "vk_n", "vk_buf_trap"))),
    dict(zip(ROLES, ("main", "trap", "vk_sgo", "vyre_fdiv", "gl_GlobalInvocationID", "vk_end1", "vk_p1", "vk_v",
                     "vk_z"))),
    dict(zip(ROLES, ("input", "output", "buffer", "__x", "filter", "sample", "shared", "common", "partition"))),
    dict(zip(ROLES, ("i", "i_", "x\\", "a\nb", "*/", "uint", "vk_vtot", "vk_vl_x", "b_x"))),
]


@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("roles", range(len(_HOSTILE_ROLES)))
def test_hostile_names_in_every_generated_context(vk_device, feature, roles):
    p = feature(_HOSTILE_ROLES[roles].__getitem__)
    _check(vk_device, p, seed=roles)


def test_region_generators_and_comments_cannot_break_lines():
    gen = "evil\\\n#error injected */ \u2028 //"
    p = _p(gen, [BufferDecl.output("y\\", 0, U32).with_count(4)], [
        Node.let_bind("i\n#error x", Expr.gid_x()), Node.store("y\\", Expr.var("i\n#error x"), Expr.u32(1))])
    for stage in _stages(p):
        compile_glsl(lower(stage).glsl)


def test_line_map_points_at_the_nodes_of_hostile_names():
    p = _batch(["out", "input", "a__b", "gl_x"])
    low = lower(p)
    lines = low.glsl.splitlines()
    for name, path in (("input", "entry[0].region.body[1].if.then[1]"), ("gl_x", "entry[0].region.body[1].if.then[3]")):
        spelled = glsl_names(p).variables[name]
        (ln,) = [k + 1 for k, text in enumerate(lines) if text.strip().startswith(f"uint {spelled} =")]
        assert low.line_map[ln] == path


# Any non-empty string is a valid name (vyre_vk/ir/validate.py: _check_name), so draw from all text.
_NAME = st.text(min_size=1, max_size=12) | st.sampled_from(HOSTILE)


@settings(_SETTINGS, max_examples=10)
@given(st.lists(_NAME, min_size=3, max_size=6, unique=True), st.integers(0, 2**16))
def test_random_names_lower_compile_and_match_the_reference(vk_device, names, seed):
    _check(vk_device, _batch(names), seed)
