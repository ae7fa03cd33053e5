"""Malformed programs and malformed inputs: always a typed error, never a crash or a driver call.

Programs: 1,000 mutations of valid generated programs (wrong types, undeclared and shadowed
names, duplicate names/bindings, bad bindings, stores to ReadOnly/Uniform buffers, zero and
huge workgroup sizes, deep nesting, deep expressions, huge counts, unsupported types / nodes /
expressions, non-Region entries, divergent barriers, two outputs, corrupted JSON). Each must
raise a vyre_vk.ir.ValidationError subclass (or ProgramFormatError for JSON, LaunchError for
what is valid IR but over this runtime's limits) from Device.compile -- which validates
before lowering, so nothing reaches shaderc or the driver (asserted by making both explode).

Inputs: 1,000 mutations (8 per program) of valid inputs of valid programs (wrong dtype, short, empty,
missing, extra, output given, wrong sequence length, non-numeric, lossy lists, NaN/inf in
integer lists, None). Each must raise vyre_vk.runtime.InputError before any upload
(asserted by making kp_bridge.tensor explode). No op forbids NaN in f32 inputs (the
reference canonicalises them), so NaN is only malformed where it cannot convert exactly.
"""
import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vyre_vk import spirv
from vyre_vk.ir import (IRError, BinOp, BufferDecl, DataType, Expr, IndirectDispatch, Node, Program, ProgramFormatError,
                        ValidationError, validate, wrap_anonymous)
from vyre_vk.ir import expr as E
import importlib
V = importlib.import_module("vyre_vk.ir.validate")
from vyre_vk.runtime import InputError, LaunchError, kp_bridge
from vyre_vk.testing.strategies import cases, programs

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool
RESULTS = {"programs": 0, "inputs": 0}


def _body(p: Program) -> tuple:
    return p.entry[0].body


def _with_body(p: Program, body) -> Program:
    return dataclasses.replace(p, entry=(dataclasses.replace(p.entry[0], body=tuple(body)),))


def _nest(body, depth):
    for _ in range(depth):
        body = [Node.block(body)]
    return body


def _lit_of(p: Program, name: str):
    t = p.buffer(name).element
    return {U32: Expr.u32(0), I32: Expr.i32(0), F32: Expr.f32(0.0), BOOL: Expr.bool(False),
            DataType.U8: Expr.cast(DataType.U8, Expr.u32(0)), DataType.I8: Expr.cast(DataType.I8, Expr.i32(0))}[t]


def _deep_expr(depth):
    e = Expr.u32(1)
    for _ in range(depth):
        e = Expr.add(e, Expr.u32(1))
    return e


MUTATIONS = {
    "if-cond-f32": (V.TypeMismatch, lambda p, d: _with_body(p, [Node.if_then(Expr.f32(1.0), [])] + list(_body(p)))),
    "store-index-f32": (V.TypeMismatch, lambda p, d: _with_body(p, list(_body(p)) + [Node.store("out", Expr.f32(0.0), _lit_of(p, "out"))])),
    "binop-mixed": (V.TypeMismatch, lambda p, d: _with_body(p, [Node.let_bind("zz", Expr.add(Expr.u32(1), Expr.i32(1)))] + list(_body(p)))),
    "loop-bound-i32": (V.TypeMismatch, lambda p, d: _with_body(p, [Node.loop_for("zz", Expr.i32(0), Expr.u32(2), [])] + list(_body(p)))),
    "assign-undeclared": (V.UndeclaredName, lambda p, d: _with_body(p, list(_body(p)) + [Node.assign("nope", Expr.u32(1))])),
    "var-undeclared": (V.UndeclaredName, lambda p, d: _with_body(p, [Node.let_bind("zz", Expr.var("nope"))] + list(_body(p)))),
    "load-undeclared": (V.UndeclaredName, lambda p, d: _with_body(p, [Node.let_bind("zz", Expr.load("nobuf", Expr.u32(0)))] + list(_body(p)))),
    "store-undeclared": (V.UndeclaredName, lambda p, d: _with_body(p, [Node.store("nobuf", Expr.u32(0), Expr.u32(0))] + list(_body(p)))),
    "shadow-let": (V.ScopeError, lambda p, d: _with_body(p, [Node.let_bind("zz", Expr.u32(1)), Node.block([Node.let_bind("zz", Expr.u32(2))])] + list(_body(p)))),
    "duplicate-let": (V.ScopeError, lambda p, d: _with_body(p, [Node.let_bind("zz", Expr.u32(1)), Node.let_bind("zz", Expr.u32(2))] + list(_body(p)))),
    "assign-loop-var": (V.ScopeError, lambda p, d: _with_body(p, [Node.loop_for("zz", Expr.u32(0), Expr.u32(2), [Node.assign("zz", Expr.u32(0))])] + list(_body(p)))),
    "duplicate-buffer-name": (V.BufferDeclError, lambda p, d: dataclasses.replace(p, buffers=p.buffers + (dataclasses.replace(p.buffers[0], binding=40),))),
    "duplicate-binding": (V.BufferDeclError, lambda p, d: dataclasses.replace(p, buffers=p.buffers + (BufferDecl.read("zz", p.buffers[0].binding, U32).with_count(1),))),
    "negative-binding": (V.BufferDeclError, lambda p, d: dataclasses.replace(p, buffers=p.buffers + (dataclasses.replace(BufferDecl.read("zz", 0, U32), binding=-1),))),
    "count-over-u32": (V.BufferDeclError, lambda p, d: dataclasses.replace(p, buffers=p.buffers + (BufferDecl.read("zz", 40, U32).with_count(2**33),))),
    "two-outputs": (V.BufferDeclError, lambda p, d: dataclasses.replace(p, buffers=p.buffers + (BufferDecl.output("zz", 40, U32).with_count(1),))),
    "unsupported-dtype": (V.UnsupportedFeature, lambda p, d: dataclasses.replace(p, buffers=p.buffers + (BufferDecl.read("zz", 40, d(st.sampled_from([DataType.U16, DataType.F16, DataType.I64, DataType.F64]))).with_count(4),))),
    "store-readonly": (V.BufferAccessError, lambda p, d: _with_body(p, list(_body(p)) + [Node.store("in0", Expr.gid_x(), Expr.load("in0", Expr.u32(0)))])),
    "atomic-readonly": (V.BufferAccessError, lambda p, d: _with_body(p, [Node.let_bind("zz", Expr.atomic_add("in0", Expr.u32(0), Expr.u32(1)))] + list(_body(p)))),
    "wg-zero": (V.ProgramShapeError, lambda p, d: dataclasses.replace(p, workgroup_size=(d(st.sampled_from([0, -1])), 1, 1))),
    "wg-huge": (V.ProgramShapeError, lambda p, d: dataclasses.replace(p, workgroup_size=d(st.sampled_from([(2048, 1, 1), (64, 64, 1), (2**31, 1, 1), (1, 1, 1025)])))),
    "wg-shape": (V.ProgramShapeError, lambda p, d: dataclasses.replace(p, workgroup_size=d(st.sampled_from([(64, 1), (1.5, 1, 1), (True, 1, 1)])))),
    "deep-nesting": (V.ProgramShapeError, lambda p, d: _with_body(p, _nest(list(_body(p)), d(st.integers(V.MAX_NESTING, 3 * V.MAX_NESTING))))),
    "deep-expr": (ValidationError, lambda p, d: _with_body(p, [Node.let_bind("zz", _deep_expr(d(st.integers(V.MAX_EXPR_DEPTH + 1, 400))))] + list(_body(p)))),
    "unsupported-node": (V.UnsupportedFeature, lambda p, d: _with_body(p, list(_body(p)) + [IndirectDispatch("out", 0)])),
    "unsupported-expr": (V.UnsupportedFeature, lambda p, d: _with_body(p, [Node.let_bind("zz", Expr.call("vyre-libs::x", [Expr.u32(1)]))] + list(_body(p)))),
    "entry-not-region": (V.ProgramShapeError, lambda p, d: dataclasses.replace(p, entry=tuple(_body(p)) + (Node.return_(),))),
    "empty-entry": (V.ProgramShapeError, lambda p, d: dataclasses.replace(p, entry=())),
    "divergent-barrier": (V.ControlFlowError, lambda p, d: _with_body(p, [Node.if_then(Expr.lt(Expr.gid_x(), Expr.u32(1)), [Node.barrier()])] + list(_body(p)))),
    "const-div-zero": (V.TypeMismatch, lambda p, d: _with_body(p, [Node.let_bind("zz", Expr.binop(BinOp.Div, Expr.gid_x(), Expr.u32(0)))] + list(_body(p)))),
    "const-store-oob": (V.BufferAccessError, lambda p, d: _with_body(p, list(_body(p)) + [Node.store("out", Expr.u32(10_000), _lit_of(p, "out"))])),
    # valid IR, over this runtime's limits: LaunchError before lowering
    "count-over-byte-limit": (LaunchError, lambda p, d: dataclasses.replace(p, buffers=p.buffers + (BufferDecl.read("zz", 40, U32).with_count(d(st.integers(2**29, 2**32 - 1))),))),
    "binding-over-slots": (LaunchError, lambda p, d: dataclasses.replace(p, buffers=p.buffers + (BufferDecl.read("zz", d(st.integers(64, 2**32 - 1)), U32).with_count(1),))),
}


@pytest.fixture
def no_driver(monkeypatch):
    """Make shaderc and every kp entry point raise: a malformed program must fail before them."""
    def boom(*a, **k):
        raise AssertionError("reached shaderc / the driver")
    monkeypatch.setattr(spirv, "compile_glsl", boom)
    for name in ("tensor", "algorithm", "dispatch", "sync_device", "sync_local"):
        monkeypatch.setattr(kp_bridge, name, boom)


def _mutate_json(text: str, d) -> str:
    doc = json.loads(text)
    k = d(st.sampled_from(["dtype", "access", "drop", "version", "kind", "truncate", "wg"]))
    if k == "dtype":
        doc["buffers"][0]["element"] = "U33"
    elif k == "access":
        doc["buffers"][0]["access"] = "Sideways"
    elif k == "drop":
        del doc["buffers"][0][d(st.sampled_from(sorted(doc["buffers"][0])))]
    elif k == "version":
        doc["version"] = 999
    elif k == "kind":
        doc["entry"][0]["kind"] = "Teleport"
    elif k == "wg":
        doc["workgroup_size"] = "big"
    else:
        return text[: d(st.integers(0, len(text) - 1))]
    return json.dumps(doc)


@settings(settings.get_profile("reliability"), max_examples=1000)
@given(programs(max_statements=3, allow_traps=True), st.sampled_from(sorted(MUTATIONS) + ["json"]), st.data())
def test_malformed_programs_raise_typed_errors(vk_device, no_driver, program, kind, data):
    validate(program)  # the seed is valid
    if kind == "json":
        try:
            bad = Program.from_json(_mutate_json(program.to_json(), data.draw))
        except ProgramFormatError:
            RESULTS["programs"] += 1
            return
        # a mutation that still parses (e.g. a dropped optional key) must validate or raise typed
        try:
            validate(bad)
        except ValidationError:
            pass
        RESULTS["programs"] += 1
        return
    want, mutate = MUTATIONS[kind]
    # The IR constructors refuse some mutations (out-of-range fields, depth over the caps) with
    # IRError before validation could: either is the typed error the user sees.
    with pytest.raises((want, IRError)) as e:
        vk_device.compile(mutate(program, data.draw))
    assert e.value.fix, str(e.value)
    RESULTS["programs"] += 1


_DTYPES = [np.float64, np.int64, np.int16, np.uint8, np.float16, np.complex64, np.bool_, np.float32, np.uint32, np.int32]


def _mutate_inputs(program: Program, inputs: dict, d):
    names = sorted(inputs)
    name = d(st.sampled_from(names))
    decl = program.buffer(name)
    k = d(st.sampled_from(["dtype", "short", "empty", "missing", "extra", "output", "seq-len", "text", "object",
                           "lossy-list", "nan-int", "none", "bytes-odd"]))
    out = dict(inputs)
    if k == "dtype":
        allowed = {np.dtype(decl.element.numpy)} | ({np.dtype(np.bool_)} if decl.element is BOOL else set())
        dt = d(st.sampled_from([t for t in _DTYPES if np.dtype(t) not in allowed]))
        with np.errstate(all="ignore"):
            out[name] = inputs[name].astype(dt)
    elif k == "short":
        if decl.count <= 1:
            out[name] = inputs[name][:0]
        else:
            out[name] = inputs[name][: d(st.integers(0, decl.count - 1))]
    elif k == "empty":
        out[name] = inputs[name][:0]
    elif k == "missing":
        del out[name]
    elif k == "extra":
        out["not_a_buffer"] = inputs[name]
    elif k == "output":
        out["out"] = np.zeros(program.buffer("out").count, program.buffer("out").element.numpy)
    elif k == "seq-len":
        # neither the logical form (inputs only) nor the legacy one (every bound buffer)
        bound = [b for b in program.buffers if not b.is_workgroup]
        return list(out.values()) + [inputs[name]] * (len(bound) - len(out) + d(st.integers(1, 3)))
    elif k == "text":
        out[name] = ["a"] * max(decl.count, 1)
    elif k == "object":
        out[name] = d(st.sampled_from([object(), {"x": 1}, "abc"]))
    elif k == "lossy-list":
        out[name] = [0.5] * max(decl.count, 1) if decl.element is not F32 else [1e300] * max(decl.count, 1)
    elif k == "nan-int":
        if decl.element is F32:
            out[name] = [2**40 + 1] * max(decl.count, 1)  # not exact in f32
        else:
            out[name] = [float("nan")] * max(decl.count, 1)
    elif k == "none":
        out[name] = None
    elif decl.element.size == 1:  # u8/i8: every length is whole elements; one byte short of the count is not
        out[name] = b"\x00" * (max(decl.count, 1) - 1)
    else:
        out[name] = b"\x00" * (4 * max(decl.count, 1) + d(st.integers(1, 3)))
    return out


@pytest.fixture
def no_upload(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("reached kp")
    for name in ("tensor", "algorithm", "dispatch", "sync_device", "sync_local"):
        monkeypatch.setattr(kp_bridge, name, boom)


MUTATIONS_PER_PROGRAM = 8  # compiling is what costs (shaderc ~60 ms); each program takes 8 mutated inputs


@settings(settings.get_profile("reliability"), max_examples=1000 // MUTATIONS_PER_PROGRAM)
@given(cases(max_statements=2, allow_atomics=False, allow_workgroup=False), st.data())
def test_malformed_inputs_raise_input_error_before_upload(vk_device, no_upload, case, data):
    program, inputs = case
    # compile (shaderc) is allowed; kp is not -- compile does not touch kp until the first run
    kernel = vk_device.compile(program)
    for _ in range(MUTATIONS_PER_PROGRAM):
        bad = _mutate_inputs(program, inputs, data.draw)
        with pytest.raises(InputError):
            kernel.run(bad)
        RESULTS["inputs"] += 1


def test_counts():
    """Both hypothesis tests ran their full budget (this file's order)."""
    if not RESULTS["programs"]:
        pytest.skip("malformed tests did not run")
    assert RESULTS["programs"] >= 1000 and RESULTS["inputs"] >= 1000, RESULTS
