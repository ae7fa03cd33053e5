"""Every registered op: vectors present, a NumPy oracle, the ULP window vyre would use, the
buffer interface and workgroup of vyre's builder, a random run >= 10x its vector, and one
registration shape (params are the builder's signature defaults, written once).

Each per-op test is parametrised by op id, so ``pytest -k softmax`` selects that op's rows."""
import ast
import importlib
import inspect
from pathlib import Path

import numpy as np
import pytest

from vyre_vk import ops
from vyre_vk.ir import DataType as T
from vyre_vk.ops.registry import OpRegistrationError, builder_params
from vyre_vk.testing.parity import ulp_budget

from .interfaces import CATEGORY, CHILD_REGIONS, GENERATOR, INTERFACE, OUT, VYRE_EXPLICIT_ULP, WG
from .oracles import ORACLES

ALL = ops.all_ops()
OPS_DIR = Path(ops.__file__).parent
by_id = pytest.mark.parametrize("entry", ALL, ids=lambda e: e.id)


def missing_vectors_or_oracles(entries) -> list[str]:
    missing = []
    for e in entries:
        if e.test_inputs is None or e.expected_output is None or not e.test_inputs() or not e.expected_output():
            missing.append(f"{e.id}: no test vectors")
        if e.id not in ORACLES:
            missing.append(f"{e.id}: no NumPy oracle in tests/ops/oracles")
        if e.id not in INTERFACE:
            missing.append(f"{e.id}: no interface row in tests/ops/interfaces.py")
    return missing


def test_every_registered_op_has_vectors_an_oracle_and_an_interface_row():
    assert not missing_vectors_or_oracles(ALL), "\n".join(missing_vectors_or_oracles(ALL))
    assert set(ORACLES) <= {e.id for e in ALL}, set(ORACLES) - {e.id for e in ALL}


def test_the_check_catches_an_op_without_vectors_or_oracle():
    bare = ops.OpEntry(id="vyre-libs::test::bare", build=lambda: None)
    empty = ops.OpEntry(id="vyre-libs::test::empty", build=lambda: None, test_inputs=lambda: [],
                        expected_output=lambda: [])
    assert missing_vectors_or_oracles([bare, empty]) == [
        f"{i}: {why}" for i in ("vyre-libs::test::bare", "vyre-libs::test::empty")
        for why in ("no test vectors", "no NumPy oracle in tests/ops/oracles",
                    "no interface row in tests/ops/interfaces.py")]


@by_id
def test_interface_matches_vyre(entry):
    wg, rows = INTERFACE[entry.id]
    p = entry.build()
    assert p.workgroup_size == wg
    got = []
    for b in p.buffers:
        access = WG if b.is_workgroup else OUT if b.is_output else b.access
        got.append((b.name, 0 if b.is_workgroup else b.binding, access, b.element, b.count))
    assert got == rows
    assert p.entry[0].generator == GENERATOR.get(entry.id, entry.id)
    assert entry.category == CATEGORY.get(entry.id, "math" if entry.id.startswith("vyre-libs::math::") else "nn")


@pytest.mark.parametrize("op_id", sorted(CHILD_REGIONS))
def test_child_regions_are_vyres(op_id):
    outer = ops.get(op_id).build().entry
    assert [r.generator for r in outer] == [op_id] and outer[0].source_region is None
    child = outer[0].body[0]
    assert (child.generator, child.source_region) == CHILD_REGIONS[op_id]


@by_id
def test_ulp_window_is_vyres_effective_tolerance_and_stated_in_the_module(entry):
    p = entry.build()
    has_f32_result = any(b.is_result and b.element is T.F32 for b in p.buffers)
    want = max(VYRE_EXPLICIT_ULP.get(entry.id, 0), ulp_budget(p)) if has_f32_result else None
    assert entry.ulp == want
    module = importlib.import_module(entry.build.__module__)
    assert getattr(module, "ULP", "missing") == entry.ulp


# (every op's random run is >= 10x its registered vector: checked on its seed-0 run in test_random.py,
# which has the reference's outputs at hand)


@by_id
def test_oracle_lives_in_the_module_of_the_ops_package(entry):
    """vyre_vk/ops/<area>/<group>[/...] -> tests/ops/oracles/<area>_<group>.py: find an oracle by op."""
    area, group = entry.build.__module__.split(".")[2:4]
    assert ORACLES[entry.id].module == f"tests.ops.oracles.{area}_{group}"


# ---------------------------------------------------------------- one registration shape
@by_id
def test_params_are_the_builders_signature_defaults(entry):
    """build() is the builder at its defaults, and params name exactly those defaults."""
    assert entry.builder is entry.build
    assert dict(entry.params) == builder_params(entry.builder)
    assert all(p.default is not p.empty for p in inspect.signature(entry.builder).parameters.values())


def repeated_params(source: str) -> list[str]:
    """Registrations in `source` that spell out params (``OpEntry(..., params=...)`` or any
    ``params=`` passed to a register call): the builder's signature is their one place."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name in ("OpEntry", "register", "register_op") and any(k.arg == "params" for k in node.keywords):
                found.append(f"line {node.lineno}: {name}(..., params=...)")
            elif name == "OpEntry":
                found.append(f"line {node.lineno}: OpEntry(...) (register through register_op)")
    return found


def test_no_op_module_repeats_its_builders_defaults():
    modules = sorted(p for area in ("math", "nn") for p in (OPS_DIR / area).rglob("*.py"))
    assert len(modules) > 50
    repeats = {str(p.relative_to(OPS_DIR)): r for p in modules if (r := repeated_params(p.read_text()))}
    assert not repeats, repeats


def test_the_check_catches_params_that_repeat_the_defaults():
    old_shape = ('def _build(n: int = 64):\n    return None\n\n'
                 'ENTRY = register(OpEntry(id="x", build=_build, builder=_build, params={"n": 64}))\n')
    assert repeated_params(old_shape) == ["line 4: OpEntry(..., params=...)"]
    assert repeated_params('ENTRY = register(OpEntry(id="x", build=_build))\n') == [
        "line 1: OpEntry(...) (register through register_op)"]
    assert repeated_params('ENTRY = register_op("x", _build, category="nn", ulp=None, test_inputs=f,'
                           ' expected_output=g)\n') == []


def test_register_rejects_params_that_differ_from_the_builder():
    def build(n: int = 4):
        return None
    with pytest.raises(ValueError, match=r"registers params n=8 but its builder's defaults are n=4"):
        ops.register(ops.OpEntry(id="vyre-libs::test::drift", build=build, builder=build, params={"n": 8}))
    with pytest.raises(OpRegistrationError, match="no default for `n`"):
        builder_params(lambda n: None)
    assert "vyre-libs::test::drift" not in {e.id for e in ops.all_ops()}
