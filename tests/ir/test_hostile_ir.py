"""Issue 13: user mistakes in the IR give typed errors with a Fix hint, never raw Python
exceptions (RecursionError, OverflowError, TypeError, ...).

1. Depth: constructors refuse expressions deeper than EXPR_DEPTH_CAP and statement nesting
   deeper than NESTING_CAP (IRDepthError); at exactly the caps every recursive walk of the
   package still fits Python's default recursion limit, with room to spare (measured here).
2. Program.from_json: any garbage is a ProgramFormatError (a property test mutates the JSON
   of registered ops); whatever parses validates or raises ValidationError.
3. Literals: Expr.f32 rounds like an IEEE cast (1e40 -> +inf); bad literals, names and
   operands given to the Expr helpers are IRError.
4. BufferDecl / Program fields of the wrong kind are IRError at construction.
"""
from __future__ import annotations

import dataclasses
import inspect
import json
import pickle
import sys
from fractions import Fraction
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vyre_vk import ops, reference
from vyre_vk.errors import VyreError
from vyre_vk.ir import (EXPR_DEPTH_CAP, NESTING_CAP, BinOp, BufferAccess, BufferDecl, DataType, Expr, IRDepthError,
                        IRError, Node, Program, ProgramFormatError, ValidationError, validate, wrap_anonymous)
from vyre_vk.ir import expr as E
from vyre_vk.ir import node as N
from vyre_vk.ir import serial
from vyre_vk.lower import lower
from vyre_vk.opt import optimize

U32, F32 = DataType.U32, DataType.F32
V = sys.modules["vyre_vk.ir.validate"]  # the module (vyre_vk.ir.validate is the function)
#: Frames a walk may use at the caps: at least this many of the default 1000 stay for the caller.
HEADROOM = 100


def _fails_typed(fn: Callable[[], Any], cls: type = IRError) -> VyreError:
    with pytest.raises(cls) as info:
        fn()
    assert "Fix:" in str(info.value), str(info.value)
    return info.value


def _chain(depth: int) -> Expr:
    """u32 0 + 1 + 1 ... as a left-leaning chain `depth` levels deep."""
    e: Expr = Expr.u32(0)
    for _ in range(depth - 1):
        e = Expr.add(e, Expr.u32(1))
    return e


def _deep_program(expr_depth: int, nesting: int, kind: str = "if") -> Program:
    """A store of an `expr_depth`-deep chain inside statements nested `nesting` lists deep
    (the program's root Region counts one)."""
    body: list = [Node.store("out", Expr.u32(0), _chain(expr_depth))]
    for i in range(nesting - 1):
        if kind == "loop":
            body = [Node.loop_for(f"j{i}", Expr.u32(0), Expr.u32(1), body)]
        else:
            body = [Node.if_then(Expr.lt(Expr.workgroup_x(), Expr.u32(1)), body)]
    return Program.wrapped([BufferDecl.output("out", 0, U32).with_count(1)], (1, 1, 1),
                           [wrap_anonymous("test::deep", body)])


def _outcome(fn: Callable[[], Any]) -> str:
    try:
        fn()
        return "ok"
    except RecursionError:
        return "RecursionError"
    except Exception as exc:  # noqa: BLE001 - classified by the caller
        if isinstance(exc.__cause__, RecursionError) or isinstance(exc.__context__, RecursionError):
            return "RecursionError"
        return type(exc).__name__


def _frames_needed(fn: Callable[[], Any]) -> int:
    """The fewest stack frames above this one with which `fn` gives its normal outcome."""
    want = _outcome(fn)
    here = len(inspect.stack(0))
    lo, hi = 1, 5000
    old = sys.getrecursionlimit()
    try:
        while lo < hi:
            mid = (lo + hi) // 2
            sys.setrecursionlimit(here + mid)
            ok = _outcome(fn) == want
            sys.setrecursionlimit(old)
            lo, hi = (lo, mid) if ok else (mid + 1, hi)
    finally:
        sys.setrecursionlimit(old)
    return lo


def _walks(p: Program) -> dict[str, Callable[[], Any]]:
    text = p.to_json()
    q = serial.from_json(text, validate=False)  # equal but sharing no node: == recurses to the leaves
    return {
        "to_json": p.to_json, "content_hash": p.content_hash, "hash": lambda: hash(dataclasses.replace(p)),
        "eq": lambda: p == q, "repr": lambda: repr(p),
        "from_json": lambda: Program.from_json(text),
        "from_json(validate=False)": lambda: serial.from_json(text, validate=False),
        "validate": lambda: validate(p),
        "reference": lambda: reference.run(p, {}),
        "reference(validate=False)": lambda: reference.run(p, {}, validate=False),
        "optimize": lambda: optimize(p, True),
        "lower": lambda: lower(p), "lower(check=False)": lambda: lower(p, check=False),
    }


# ----------------------------------------------------------------------------- 1. depth
def test_ten_thousand_deep_expression_is_refused_at_the_cap_not_a_recursion_error():
    e = Expr.u32(0)
    with pytest.raises(IRDepthError) as info:
        for _ in range(10_000):
            e = Expr.add(e, Expr.u32(1))
    assert e.depth == EXPR_DEPTH_CAP and "Fix:" in str(info.value) and isinstance(info.value, ValueError)
    assert _chain(EXPR_DEPTH_CAP).depth == EXPR_DEPTH_CAP
    # raw variant constructors alike; a Call counts its argument list as a level of its own
    _fails_typed(lambda: E.UnOpExpr(E.UnOp.BitNot, e), IRDepthError)
    c: Expr = Expr.u32(0)
    with pytest.raises(IRDepthError):
        for _ in range(EXPR_DEPTH_CAP):
            c = Expr.call("f", [c])
    assert c.depth in (EXPR_DEPTH_CAP - 1, EXPR_DEPTH_CAP)


def test_thousand_nested_ifs_are_refused_at_the_cap():
    body: list = [Node.store("out", Expr.u32(0), Expr.u32(1))]
    with pytest.raises(IRDepthError) as info:
        for _ in range(1000):
            body = [Node.if_then(Expr.bool(True), body)]
    assert body[0].nesting == NESTING_CAP and "Fix:" in str(info.value)
    # the root Region Program.wrapped adds is a level too
    _fails_typed(lambda: Program.wrapped([], (1, 1, 1), body), IRDepthError)
    assert Program.wrapped([], (1, 1, 1), body[0].then).entry[0].nesting == NESTING_CAP
    for make in (lambda b: N.Loop("j", Expr.u32(0), Expr.u32(1), b), N.Block,
                 lambda b: N.Region("g", None, b), lambda b: N.If(Expr.bool(True), (), b)):
        _fails_typed(lambda: make(body), IRDepthError)


def test_caps_leave_room_for_validation_to_report_v033_and_v018():
    buffers = [BufferDecl.output("out", 0, U32).with_count(1)]
    deep_expr = Program.wrapped(buffers, (1, 1, 1), [Node.let_bind("x", _chain(V.MAX_EXPR_DEPTH + 2))])
    with pytest.raises(V.ProgramShapeError, match="expression nested more than"):
        validate(deep_expr)
    body: list = []
    for _ in range(V.MAX_NESTING):
        body = [Node.block(body)]
    with pytest.raises(V.ProgramShapeError, match="nested 65 levels deep"):
        validate(Program.wrapped(buffers, (1, 1, 1), [wrap_anonymous("t", body)]))
    assert EXPR_DEPTH_CAP > V.MAX_EXPR_DEPTH + 1 + 16 and NESTING_CAP > V.MAX_NESTING + 8


@pytest.mark.parametrize("kind", ["if", "loop"])
def test_every_walk_survives_at_the_caps(kind):
    p = _deep_program(EXPR_DEPTH_CAP, NESTING_CAP, kind)
    assert p.entry[0].nesting == NESTING_CAP and p.entry[0].body[0].nesting == NESTING_CAP - 1
    typed = {"ok", "ProgramFormatError", "ProgramShapeError", "LoweringError"}
    needed = {}
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default: what a user has
    try:
        for name, fn in _walks(p).items():
            assert _outcome(fn) in typed, name
            needed[name] = _frames_needed(fn)
    finally:
        sys.setrecursionlimit(old)
    # measured at the caps: repr and == ~810 frames, from_json ~570, hash ~490, to_json ~410
    assert max(needed.values()) + len(inspect.stack(0)) <= 1000 - HEADROOM, needed
    assert serial.from_json(p.to_json(), validate=False) == p


def test_deepest_valid_program_runs_through_every_walk():
    """At validation's own limits (V033, V018) the reference, optimiser and lowering really recurse."""
    p = _deep_program(V.MAX_EXPR_DEPTH + 1, V.MAX_NESTING, "loop")
    validate(p)
    for name, fn in _walks(p).items():
        assert _outcome(fn) == "ok", name
    assert reference.run(p, {})["out"][0] == V.MAX_EXPR_DEPTH


def test_depth_is_bookkeeping_only():
    a = Expr.add(Expr.var("i"), Expr.u32(4))
    b = E.BinOpExpr(BinOp.Add, E.Var("i"), E.LitU32(4))
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b)
    assert "_depth" not in repr(a) and repr(a).endswith("left=Var(name='i'), right=LitU32(value=4))")
    assert [f.name for f in dataclasses.fields(a)] == ["op", "left", "right"] and a.depth == 2
    assert "_depth" not in Program.wrapped([], (1, 1, 1), [Node.let_bind("x", a)]).to_json()
    assert pickle.loads(pickle.dumps(a)).depth == 2 and dataclasses.replace(a, left=a).depth == 3
    assert Node.if_then(a, []).nesting == 1 and Node.store("o", a, a).nesting == 0


# ----------------------------------------------------------------------------- 2. from_json
def _doc(op_id: str = "vyre-libs::nn::relu") -> dict:
    return json.loads(ops.get(op_id).build().to_json())


def _parse_fails(doc: Any) -> ProgramFormatError:
    text = doc if isinstance(doc, (str, bytes)) else json.dumps(doc)
    err = _fails_typed(lambda: Program.from_json(text), ProgramFormatError)
    _fails_typed(lambda: serial.from_json(text, validate=False), ProgramFormatError)
    return err  # type: ignore[return-value]


def test_from_json_garbage_bytes_and_nesting():
    _parse_fails(b"\xff\xfe{\x80}")
    _parse_fails(json.dumps(_doc()).encode("utf-16"))
    _parse_fails("[" * 100_000 + "]" * 100_000)
    _parse_fails('{"format": ' * 5000 + "1" + "}" * 5000)
    _fails_typed(lambda: Program.from_json(memoryview(b"{}")), ProgramFormatError)  # type: ignore[arg-type]


def test_from_json_expression_over_the_cap_is_refused_with_its_path():
    d = _doc()
    e: dict = {"kind": "LitU32", "value": 1}
    for _ in range(EXPR_DEPTH_CAP):  # one over the cap, far below json's own limit
        e = {"kind": "UnOp", "op": "BitNot", "operand": e}
    d["entry"][0]["body"][0]["value"] = e
    err = _parse_fails(d)
    assert f"expression nesting deeper than {EXPR_DEPTH_CAP}" in str(err) and err.path.startswith("$.entry[0]")
    body: list = []
    for _ in range(NESTING_CAP):
        body = [{"kind": "Block", "body": body}]
    d["entry"][0]["body"] = body
    assert "statement nesting deeper than" in str(_parse_fails(d))


HUGE = 10**4000  # its str() takes 4001 digits: messages must not print it


def _short(v: Any) -> str:
    """Test ids that stay readable (no 4001-digit ints)."""
    text = str(v)
    return text if len(text) <= 24 else text[:10] + f"...({len(text)} chars)"


@pytest.mark.parametrize("where,value", [
    (("version",), 1.0), (("version",), True), (("workgroup_size",), 5), (("workgroup_size",), ["a", 1, 1]),
    (("workgroup_size", 0), -1), (("workgroup_size", 0), True), (("workgroup_size", 0), 2**40),
    (("buffers",), {}), (("buffers", 0), []), (("buffers", 0, "count"), "4"), (("buffers", 0, "count"), -1),
    (("buffers", 0, "count"), True), (("buffers", 0, "count"), HUGE), (("buffers", 0, "binding"), 1.5),
    (("buffers", 0, "name"), ""), (("buffers", 0, "name"), 3), (("buffers", 0, "element"), "U33"),
    (("buffers", 0, "access"), ["ReadOnly"]), (("buffers", 0, "is_output"), 1),
    (("buffers", 0, "output_byte_range"), [0]), (("buffers", 0, "output_byte_range"), [-1, 4]),
    (("entry",), {}), (("entry", 0), "Region"), (("entry", 0, "kind"), "Teleport"), (("entry", 0, "kind"), 7),
    (("entry", 0, "body", 0, "value"), 5), (("entry", 0, "body", 0, "value", "kind"), "LitF32"),
    (("entry", 0, "body", 0, "value", "axis"), -1), (("entry", 0, "body", 0, "value", "axis"), HUGE),
    (("entry", 0, "body", 0, "name"), None), (("entry_op_id",), 5), (("non_composable_with_self",), "no"),
], ids=_short)
def test_from_json_wrong_field_types(where, value):
    d = _doc()
    target = d
    for k in where[:-1]:
        target = target[k]
    target[where[-1]] = value
    err = _parse_fails(d)
    assert len(str(err)) < 2000  # the huge int is not spelled out


def test_from_json_missing_keys_everywhere():
    d = _doc()
    seen = 0
    stack: list = [((), d)]
    while stack:
        path, obj = stack.pop()
        items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
        for k, v in items:
            stack.append((path + (k,), v))
            if isinstance(obj, dict):
                mutated = json.loads(json.dumps(d))
                t = mutated
                for p in path:
                    t = t[p]
                del t[k]
                _parse_fails(mutated)
                seen += 1
    assert seen > 20


# Property test: mutations of real op programs either parse (and then validate or raise
# ValidationError) or raise ProgramFormatError; never a raw exception.
_SEEDS = [ops.get(i).build().to_json() for i in (
    "vyre-libs::nn::relu", "vyre-libs::math::atomic::atomic_add_u32", "vyre-libs::math::succinct::rank1_query",
    "vyre-libs::nn::mlp_4x_leaky_sq", "vyre-libs::nn::linear_4bit_affine_grouped")]
_KINDS = sorted(set(E.EXPR_VARIANTS) | set(N.NODE_VARIANTS))
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                     st.sampled_from([0, 1, 2, 3, -1, 2**31, 2**32, 2**64, HUGE, 1.5, float("nan"), float("inf")]),
                     st.floats(allow_nan=True), st.text(max_size=8),
                     st.sampled_from(_KINDS + ["U32", "F32", "ReadWrite", "SeqCst", "Add", "i", "out"]))
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                     max_leaves=12)


def _slots(obj: Any, acc: list) -> list:
    """Every (container, key) of a JSON tree, iteratively."""
    stack = [obj]
    while stack:
        x = stack.pop()
        items = list(x.items()) if isinstance(x, dict) else list(enumerate(x)) if isinstance(x, list) else []
        for k, v in items:
            acc.append((x, k))
            stack.append(v)
    return acc


def _swap_type(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return len(v)
    if isinstance(v, list):
        return {str(i): x for i, x in enumerate(v)}
    if isinstance(v, dict):
        return list(v.values())
    return False


def _mutate(doc: Any, draw) -> Any:
    for _ in range(draw(st.integers(1, 3))):
        slots = _slots(doc, [])
        if not slots:
            return doc
        parent, key = slots[draw(st.integers(0, len(slots) - 1))]
        how = draw(st.sampled_from(["drop", "replace", "swap", "kind", "graft"]))
        if how == "drop":
            del parent[key]
        elif how == "replace":
            parent[key] = draw(_JSON)
        elif how == "swap":
            parent[key] = _swap_type(parent[key])
        elif how == "kind":
            parent[key] = {**parent[key], "kind": draw(st.sampled_from(_KINDS))} if isinstance(parent[key], dict) \
                else draw(st.sampled_from(_KINDS))
        else:  # another subtree of the document in this place (a node where an expr goes, ...)
            other_parent, other_key = slots[draw(st.integers(0, len(slots) - 1))]
            parent[key] = json.loads(json.dumps(other_parent[other_key]))
    return doc


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(range(len(_SEEDS))), st.sampled_from(["text", "bytes", "bad-utf8", "truncate"]), st.data())
def test_from_json_mutations_are_programs_or_typed_errors(seed, encoding, data):
    doc = _mutate(json.loads(_SEEDS[seed]), data.draw)
    text: Any = json.dumps(doc)
    if encoding == "bytes":
        text = text.encode()
    elif encoding == "bad-utf8":
        cut = data.draw(st.integers(0, len(text)))
        text = text[:cut].encode() + b"\xc3\x28" + text[cut:].encode()
    elif encoding == "truncate":
        text = text[:data.draw(st.integers(0, max(len(text) - 1, 0)))]
    try:
        Program.from_json(text)
    except ProgramFormatError as exc:
        assert "Fix:" in str(exc), str(exc)
    try:
        p = serial.from_json(text, validate=False)
    except ProgramFormatError:
        return
    try:
        validate(p)
    except ValidationError as exc:
        assert "Fix:" in str(exc)
    assert serial.from_json(p.to_json(), validate=False) == p and hash(p) == hash(p) and repr(p)


# ----------------------------------------------------------------------------- 3. literals
@pytest.mark.parametrize("value,bits", [
    (1e40, 0x7F800000), (-1e40, 0xFF800000), (1e300, 0x7F800000), (3.4028235677973366e38, 0x7F800000),
    (3.4028235e38, 0x7F7FFFFF), (3.40282356e38, 0x7F7FFFFF), (10**400, 0x7F800000), (-(10**400), 0xFF800000),
    (Fraction(10**400), 0x7F800000), (2**60 + 2**36 + 1, 0x5D800001), (np.float64(1e39), 0x7F800000),
    (np.int64(16777217), 0x4B800000), (float("inf"), 0x7F800000), (-0.0, 0x80000000), (1e-50, 0),
], ids=_short)
def test_f32_literals_round_like_an_ieee_cast(value, bits):
    assert Expr.f32(value).bits == bits
    assert isinstance(value, (int, Fraction)) or E.f32_bits(float(value)) == bits


@given(st.floats(allow_nan=False))
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
def test_f32_literal_matches_numpy_float32(x):
    with np.errstate(over="ignore"):
        want = int(np.array(x, np.float64).astype(np.float32).view(np.uint32))
    assert Expr.f32(x).bits == want


@pytest.mark.parametrize("make", [
    lambda: Expr.f32("abc"), lambda: Expr.f32("1.5"), lambda: Expr.f32(None), lambda: Expr.f32(True),
    lambda: Expr.f32(1 + 2j), lambda: Expr.u32(-1), lambda: Expr.u32(2**32), lambda: Expr.u32(1.5),
    lambda: Expr.u32(2.0), lambda: Expr.u32(True), lambda: Expr.u32("3"), lambda: Expr.u32(None),
    lambda: Expr.u32(np.int64(-1)), lambda: Expr.u32(HUGE), lambda: Expr.i32(2**31), lambda: Expr.i32(-2**31 - 1),
    lambda: Expr.i32(np.float32(1)), lambda: Expr.bool("false"), lambda: Expr.bool(None),
    lambda: Expr.var(3), lambda: Expr.var(None), lambda: Expr.load(5, Expr.u32(0)), lambda: Expr.load("a", 5),
    lambda: Expr.buf_len(b"a"), lambda: Expr.add(Expr.u32(1), 2), lambda: Expr.sqrt(1.0),
    lambda: Expr.binop("Add", Expr.u32(1), Expr.u32(2)), lambda: Expr.unop(None, Expr.u32(1)),
    lambda: Expr.cast("u32", Expr.u32(1)), lambda: Expr.select(True, Expr.u32(1), Expr.u32(2)),
    lambda: Expr.fma(Expr.f32(1.0), Expr.f32(1.0), 1.0), lambda: Expr.call("op", 5), lambda: Expr.call(3, []),
    lambda: Expr.call("op", [1]), lambda: Expr.atomic_add("rw", 0, Expr.u32(1)),
    lambda: Expr.atomic_add(None, Expr.u32(0), Expr.u32(1)),
    lambda: Expr.atomic(E.AtomicOp.Add, "rw", Expr.u32(0), Expr.u32(1), ordering="SeqCst"),
    lambda: Expr.atomic_compare_exchange("rw", Expr.u32(0), None, Expr.u32(1)),
    lambda: Expr.subgroup_add(1), lambda: Expr.subgroup_reduce(None, Expr.u32(1)),
    lambda: Expr.subgroup_shuffle(Expr.u32(1), 0), lambda: Node.let_bind(3, Expr.u32(0)),
    lambda: Node.store(None, Expr.u32(0), Expr.u32(0)), lambda: Node.if_then(Expr.bool(True), 5),
    lambda: Node.block("abc"), lambda: Node.loop_for(0, Expr.u32(0), Expr.u32(1), []),
    lambda: Node.barrier_with_ordering("SeqCst"), lambda: N.Block(body=None),
])
def test_bad_literals_names_and_operands_are_ir_errors(make):
    err = _fails_typed(make)
    assert len(str(err)) < 1000


def test_accepted_literal_forms_are_kept():
    assert Expr.u32(np.uint32(5)) == Expr.u32(5) and type(Expr.u32(np.int64(7)).value) is int
    assert Expr.i32(np.int8(-3)).value == -3 and Expr.u32(0xFFFFFFFF).value == 0xFFFFFFFF
    assert Expr.f32(np.float32(0.1)).bits == 0x3DCCCCCD and Expr.f32(3).bits == 0x40400000
    assert Expr.bool(np.bool_(True)) == Expr.bool(True)
    assert Expr.f32(float("nan")) == Expr.f32(float("nan"))
    # the raw variant constructors stay permissive: validation reports these with V-rules
    assert E.LitU32(-1).value == -1 and Node.let_bind("x", 5).value == 5 and Node.let_bind("", Expr.u32(0))
    assert Node.if_then(Expr.bool(True), (n for n in [Node.return_()])).then == (Node.return_(),)


_IF = Node.if_then(Expr.bool(True), [])


@pytest.mark.parametrize("make", [
    lambda: E.Var(["i"]), lambda: E.Var(b"i"), lambda: E.LitU32(np.uint32(5)), lambda: E.LitU32(HUGE),
    lambda: E.BinOpExpr(["Add"], Expr.u32(1), Expr.u32(2)), lambda: E.BinOpExpr(BinOp.Add, _IF, Expr.u32(2)),
    lambda: E.Load("a", [Expr.u32(0)]), lambda: E.Call("f", ([Expr.u32(0)],)), lambda: E.Call(["f"], ()),
    lambda: E.InvocationId({0}), lambda: N.Barrier(["SeqCst"]), lambda: N.Let(["x"], Expr.u32(0)),
    lambda: N.Let("x", _IF), lambda: N.Store("o", Expr.u32(0), [1]), lambda: N.Block(([_IF],)),
    lambda: N.Region("g", {"a": 1}, ()), lambda: N.IndirectDispatch(["b"], 0),
])
def test_raw_variant_fields_hold_ir_or_atoms(make):
    """Raw constructors judge no values, but a container, NumPy scalar or statement in a field
    used to break hash() / to_json() / validate() with a raw TypeError (or hide a deep tree)."""
    _fails_typed(make)


def test_raw_variant_constructors_stay_permissive_for_validation():
    p = Program.wrapped([BufferDecl.output("out", 0, U32).with_count(1)], (1, 1, 1), [
        N.Let("a", E.LitU32(-1)), N.Let("b", 5), N.Let("c", E.BinOpExpr("Add", Expr.u32(1), Expr.u32(2))),
        N.Barrier("SeqCst"), "store", Expr.u32(3)])
    assert hash(p) == hash(dataclasses.replace(p)) and p.to_json() and repr(p)
    _fails_typed(lambda: Program.from_json(p.to_json()), ProgramFormatError)
    with pytest.raises(ValidationError):
        validate(p)


# ----------------------------------------------------------------------------- 4. declarations
def _decl(**kw) -> BufferDecl:
    base = dict(name="a", binding=0, access=BufferAccess.ReadOnly, element=U32, count=4)
    return BufferDecl(**{**base, **kw})


@pytest.mark.parametrize("kw", [
    dict(count=True), dict(count=-1), dict(count=1.5), dict(count=2**40), dict(count="4"), dict(count=None),
    dict(binding=-1), dict(binding="a"), dict(binding=2**32), dict(binding=False), dict(name=""), dict(name=3),
    dict(name=None), dict(element="u32"), dict(element=np.uint32), dict(access="ReadOnly"), dict(access=None),
    dict(is_output=1), dict(pipeline_live_out="yes"), dict(output_byte_range=(0,)), dict(output_byte_range=5),
    dict(output_byte_range=(-1, 4)), dict(output_byte_range=(0, 1.5)),
])
def test_bad_buffer_declarations_are_ir_errors(kw):
    _fails_typed(lambda: _decl(**kw))


def test_buffer_helpers_check_too_and_numpy_ints_are_normalised():
    _fails_typed(lambda: BufferDecl.read("a", 0, U32).with_count(True))
    _fails_typed(lambda: BufferDecl.read("a", 0, U32).with_count(-1))
    _fails_typed(lambda: BufferDecl.output("o", 0, U32).with_output_byte_range(0, "4"))
    _fails_typed(lambda: BufferDecl.workgroup("t", 2**40, F32))
    _fails_typed(lambda: BufferDecl.read("a", "0", U32))
    b = _decl(count=np.int64(4), binding=np.uint8(1))
    assert type(b.count) is int and type(b.binding) is int and b == _decl(count=4, binding=1)
    p = Program.wrapped([b], (np.int32(64), 1, 1), [])
    assert serial.from_json(p.to_json(), validate=False) == p  # np.int64 used to break json.dumps


@pytest.mark.parametrize("make", [
    lambda: Program.new([], ("a", 1, 1), []), lambda: Program.new([], 5, []), lambda: Program.new([], (64, 1), []),
    lambda: Program.new([], (1.5, 1, 1), []), lambda: Program.new([], (True, 1, 1), []),
    lambda: Program.new([], (-1, 1, 1), []), lambda: Program.new([], (2**32, 1, 1), []),
    lambda: Program.new([], "641", []), lambda: Program.new([], (64, 1, 1), 5),
    lambda: Program.new([], (64, 1, 1), ["store"]), lambda: Program.new([], (64, 1, 1), [Expr.u32(1)]),
    lambda: Program.new(["a"], (64, 1, 1), []), lambda: Program.new(5, (64, 1, 1), []),
    lambda: Program.new([], (64, 1, 1), [], entry_op_id=5),
    lambda: Program((), (1, 1, 1), (), None, "yes"), lambda: Program.wrapped([], None, []),
    lambda: Program.wrapped([], (1, 1, 1), 5), lambda: wrap_anonymous(None, []),
])
def test_bad_programs_are_ir_errors(make):
    _fails_typed(make)


def test_zero_workgroup_dimension_is_left_to_validation():
    """(0, 1, 1) is a u32 triple: tests/ir/test_validation.py builds it to test the V-rule."""
    p = Program.wrapped([], (0, 1, 1), [])
    with pytest.raises(V.ProgramShapeError, match="zero or negative dimension"):
        validate(p)
