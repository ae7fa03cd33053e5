"""Random valid programs: reference vs Vulkan, and the lowering is total.

Programs are race free (vyre_vk.testing.strategies; checked dynamically below) and every
case runs twice on Vulkan: compiled as written (optimize=False) and optimised
(optimize=True, the Device.compile default). Assertions (vyre_vk.testing.fuzz.check_case,
for both): integer/bool buffers exact; F32 within 4 ULP
(128 ULP when Exp/Log/Sqrt/InverseSqrt/Sin/Cos/Tanh/Sinh/Cosh appear); where the reference
raises EvalError (unguarded i32 Div/Mod by zero or MIN/-1, a reached Trap node) Vulkan must
raise KernelTrapError and no output is compared. Longer runs: tools/fuzz --count N.
"""
import collections

import pytest
from hypothesis import given, settings

from vyre_vk.ir import validate
from vyre_vk.lower import lower
from vyre_vk.spirv import compile_glsl
from vyre_vk.testing import fuzz
from vyre_vk.testing.strategies import cases, programs
from vyre_vk.ir.walk import node_exprs, walk_expr
from vyre_vk.ir.paths import labelled_bodies

SEEN = collections.Counter()


@settings(settings.get_profile("reliability"), max_examples=200)  # x2 compile modes; tools/fuzz for more
@given(cases(allow_traps=True))
def test_vulkan_matches_reference(vk_device, case):
    program, inputs = case
    outcome = fuzz.check_case(program, inputs, vk_device)
    SEEN[outcome.status] += 1
    assert not outcome.failed, outcome.detail


def test_the_differential_run_exercised_traps_and_passes():
    # runs after test_vulkan_matches_reference (same module, file order)
    if not SEEN:
        pytest.skip("differential test did not run")
    assert SEEN["ok"] > 120 and SEEN["trap"] > 5, SEEN


@settings(settings.get_profile("reliability"), max_examples=300)
@given(programs(max_statements=8, allow_traps=True, race_free=False))  # any index: lowering is total
def test_every_valid_program_lowers_and_compiles(program):
    validate(program)
    low = lower(program)
    words = compile_glsl(low.glsl, target_env=low.target_env)
    assert len(words) > 20 and len(words) % 4 == 0


def test_strategies_cover_every_kind():
    """The generator reaches every Expr/Node kind the backend supports (over a fixed sample)."""
    from hypothesis import find  # noqa: F401
    from vyre_vk.ir import expr as E, node as N
    from vyre_vk.testing.parity import program_exprs

    kinds = collections.Counter()
    from hypothesis import strategies as st

    @settings(settings.get_profile("reliability"), max_examples=200)
    @given(programs(allow_traps=True))
    def collect(p):
        stack = list(p.entry)
        while stack:
            n = stack.pop()
            kinds[type(n).__name__] += 1
            for _, body in labelled_bodies(n):
                stack.extend(body)
        for e in program_exprs(p):
            kinds[type(e).__name__] += 1
        for b in p.buffers:
            kinds[f"buf:{b.access.name}:{b.element.name}"] += 1

    collect()
    want_nodes = {"Let", "Assign", "Store", "If", "Loop", "Block", "Region", "Barrier", "Return", "Trap"}
    want_exprs = {"LitU32", "LitI32", "LitF32", "LitBool", "Var", "Load", "BufLen", "InvocationId", "WorkgroupId",
                  "LocalId", "BinOpExpr", "UnOpExpr", "Select", "Cast", "Fma", "Atomic"}
    missing = (want_nodes | want_exprs) - set(kinds)
    assert not missing, missing
    for t in ("U32", "I32", "F32", "Bool", "U8", "I8"):
        assert any(k.startswith("buf:") and k.endswith(t) for k in kinds), t


@settings(settings.get_profile("reliability"), max_examples=150)
@given(cases(allow_traps=True))
def test_generated_programs_are_race_free(case):
    """Dynamic check of the generator's race freedom (strategies module doc): evaluated over
    every invocation of the reference grid, the in-bounds indices at which a stored-to buffer
    is stored or loaded, or the counter is hit by a non-commutative or value-used atomic,
    are distinct between invocations (per workgroup for workgroup memory). Contended atomics
    use one commutative op per program. The reference's one invocation order is then the
    only outcome a GPU can produce."""
    import numpy as np

    from vyre_vk.ir import expr as E, node as N
    from vyre_vk.reference.eval import _bind_inputs, _Machine, dispatch_grid

    program, inputs = case
    mem = _bind_inputs(program, inputs)
    mach = _Machine(program, mem, dispatch_grid(program, {k: v.shape[0] for k, v in mem.items()}))
    everyone = np.ones(mach.n, bool)
    accesses, _ = fuzz.access_pattern(program)
    atomic_ops = {x.op for n in fuzz._walk_nodes(program.entry) for e in node_exprs(n) for x in walk_expr(e)
                  if isinstance(x, E.Atomic)}
    commutative = {E.AtomicOp.Add, E.AtomicOp.Or, E.AtomicOp.Xor, E.AtomicOp.Max, E.AtomicOp.Min}
    lets = [n for n in fuzz._walk_nodes(program.entry) if isinstance(n, N.Let)]
    atomic_lets = {n.name for n in lets if isinstance(n.value, E.Atomic)}
    used = {x.name for n in fuzz._walk_nodes(program.entry) for e in node_exprs(n) for x in walk_expr(e)
            if isinstance(x, E.Var)}
    between_barriers = set()
    for lst in [program.entry] + [b for n in fuzz._walk_nodes(program.entry) for _, b in labelled_bodies(n)]:
        for prev, n in zip(lst, lst[1:]):
            if isinstance(prev, N.Barrier) and isinstance(n, N.Let) and isinstance(n.value, E.Load):
                between_barriers.add(n.value.index)
    stored = {n.buffer for n in fuzz._walk_nodes(program.entry) if isinstance(n, N.Store)}
    for name, indices in accesses.items():
        decl = next(b for b in program.buffers if b.name == name)
        if name == "counter" and len(atomic_ops) == 1 and atomic_ops <= commutative and not (atomic_lets & used):
            continue  # contended: one commutative op, results unused -> the final counter is order free
        if name not in stored and name != "counter":
            continue  # workgroup memory that is never stored
        for idx in indices:
            if decl.is_workgroup and idx in between_barriers:
                continue  # the scratch statement's load, right after a barrier (stores are before it)
            v = np.broadcast_to(np.asarray(mach.ev(idx, everyone)), (mach.n,)).astype(np.int64)
            key = v + (mach.wg_lin << 32 if decl.is_workgroup else 0)
            inb = key[v < decl.count]
            assert np.unique(inb).size == inb.size, (name, idx)


def test_generated_programs_make_the_optimiser_passes_fire():
    """optimize=True is only tested where passes change something: over a fixed sample the
    generator's elementwise and reduction shapes reach coarsen, hoist_invariant (multi-kernel
    graphs), unroll and licm, besides fold/dce/cse/workgroup_size."""
    from vyre_vk.opt import optimize

    fired, stages = collections.Counter(), collections.Counter()

    @settings(settings.get_profile("reliability"), max_examples=120)
    @given(programs(allow_traps=True))
    def collect(p):
        graph, reports = optimize(p)
        fired.update(r.name for r in reports if r.changed)
        stages[len(graph.stages) > 1] += 1

    collect()
    for name in ("constant_fold", "dce", "cse", "licm", "hoist_invariant", "unroll", "coarsen", "workgroup_size"):
        assert fired[name] >= 3, (name, fired)
    assert stages[True] >= 5, stages
