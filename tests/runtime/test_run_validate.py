"""``vyre_vk.run(..., validate=...)`` means what ``vyre_vk.reference.run``'s flag means: same name,
same default (True: the IR rules first), and False skips them on both backends. Then a program whose
only fault is a rule the backends do not need runs alike on both; one neither can execute raises
EvalError (reference) / LoweringError (Vulkan); an unchecked compile never serves a checked run."""
import inspect

import numpy as np
import pytest

import vyre_vk
from vyre_vk import reference
from vyre_vk.compile import compile_program
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, ValidationError, wrap_anonymous
from vyre_vk.ir.validate import ControlFlowError, UndeclaredName
from vyre_vk.lower import LoweringError
from vyre_vk.reference import EvalError

U32 = DataType.U32


def _prog(body, buffers=None) -> Program:
    buffers = buffers or [BufferDecl.read_write("h", 0, U32).with_count(1), BufferDecl.output("out", 1, U32).with_count(2)]
    return Program.wrapped(buffers, (1, 1, 1), [wrap_anonymous("test::validate", body)])


# One invocation stores h[0] and then hits it with an atomic, no barrier between: vyre's fusion-hazard
# rule refuses it, but with one invocation its meaning is plain (h = 5 + 1, the atomic returns 5).
HAZARD = _prog([Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [  # the grid has two invocations (out: 2)
    Node.store("h", Expr.u32(0), Expr.u32(5)),
    Node.let_bind("x", Expr.atomic_add("h", Expr.u32(0), Expr.u32(1))),
    Node.store("out", Expr.u32(0), Expr.var("x")), Node.store("out", Expr.u32(1), Expr.buf_len("h"))])])
UNBOUND = _prog([Node.store("out", Expr.u32(0), Expr.var("nowhere"))])
VALID = _prog([Node.store("out", Expr.u32(1), Expr.add(Expr.load("h", Expr.u32(0)), Expr.u32(2)))])
H = {"h": np.array([40], np.uint32)}


def test_same_parameter_same_default_on_both_backends():
    for fn in (vyre_vk.run, reference.run):
        p = inspect.signature(fn).parameters["validate"]
        assert p.default is True, fn
    assert inspect.signature(vyre_vk.run).parameters["validate"].kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("validate", [True, False])
def test_a_valid_program_gives_the_same_results_either_way(vk_device, validate):
    want = {"h": [40], "out": [0, 42]}
    for got in (reference.run(VALID, H, validate=validate), vyre_vk.run(VALID, H, device=vk_device, validate=validate)):
        assert {k: v.tolist() for k, v in got.items()} == want


def test_a_program_breaking_only_the_hazard_rule_runs_alike_unchecked(vk_device):
    for run in (lambda **kw: reference.run(HAZARD, H, **kw), lambda **kw: vyre_vk.run(HAZARD, H, device=vk_device, **kw)):
        with pytest.raises(ControlFlowError, match="fusion hazard on buffer `h`"):
            run()
        with pytest.raises(ControlFlowError):
            run(validate=True)
        got = run(validate=False)
        assert {k: v.tolist() for k, v in got.items()} == {"h": [6], "out": [5, 1]}


def test_a_program_neither_backend_can_execute_raises_its_own_error_unchecked(vk_device):
    with pytest.raises(UndeclaredName):
        reference.run(UNBOUND, H)
    with pytest.raises(UndeclaredName):
        vyre_vk.run(UNBOUND, H, device=vk_device)
    with pytest.raises(EvalError, match="`nowhere`.*Fix:"):
        reference.run(UNBOUND, H, validate=False)
    with pytest.raises(LoweringError, match="nowhere"):
        vyre_vk.run(UNBOUND, H, device=vk_device, validate=False)
    bad_buffer = _prog([Node.store("out", Expr.u32(0), Expr.load("missing", Expr.u32(0)))])
    with pytest.raises(EvalError, match="`missing`"):
        reference.run(bad_buffer, H, validate=False)
    with pytest.raises(LoweringError, match="missing"):
        vyre_vk.run(bad_buffer, H, device=vk_device, validate=False)


def test_unchecked_compiles_are_as_written_and_never_serve_a_checked_run(vk_device):
    kernel = vk_device.compile(HAZARD, validate=False)
    assert not kernel.compiled.optimized and kernel.compiled.reports == ()
    assert vk_device.compile(HAZARD, validate=False) is kernel  # cached under its own key
    with pytest.raises(ValidationError):
        vk_device.compile(HAZARD, optimize=False)  # same program and passes, checked: still refused
    with pytest.raises(ValidationError):
        compile_program(HAZARD)
    assert compile_program(HAZARD, validate=False) is compile_program(HAZARD, validate=False)
    with pytest.raises(ValidationError):
        vyre_vk.run(HAZARD, H, device=vk_device)
