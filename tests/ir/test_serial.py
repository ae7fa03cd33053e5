"""JSON round-trips, content hashes, and malformed input -> ProgramFormatError."""
import json
import random
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings

from vyre_vk import ops, reference
from vyre_vk.ir import (BufferDecl, DataType, Expr, LitF32, Node, Program, ProgramFormatError, validate,
                        wrap_anonymous)
from vyre_vk.ir.node import IndirectDispatch
from vyre_vk.ir.serial import FORMAT, VERSION, program_from_dict
from vyre_vk.testing.strategies import program_inputs, programs


def test_every_registered_op_round_trips():
    for e in ops.all_ops():
        p = e.build()
        text = p.to_json()
        q = Program.from_json(text)
        assert q == p and q.to_json() == text and q.content_hash() == p.content_hash()
        d = json.loads(text)
        assert d["format"] == FORMAT == "vyre-vk-program" and d["version"] == VERSION == 1


def test_f32_literals_round_trip_bit_exactly():
    bits = [0x7FC00001, 0xFFC00000, 0x80000000, 0x00000001, 0x7F800000, 0x3DCCCCCD]
    p = Program.wrapped([BufferDecl.output("o", 0, DataType.F32).with_count(len(bits))], (1, 1, 1),
                        [Node.store("o", Expr.u32(k), LitF32(x)) for k, x in enumerate(bits)])
    q = Program.from_json(p.to_json())
    assert [n.value.bits for n in q.entry[0].body] == bits
    assert q == p


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_hypothesis_programs_round_trip(p):
    text = p.to_json()
    q = Program.from_json(text)
    assert q == p
    assert q.content_hash() == p.content_hash()
    assert hash(q) == hash(p)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_hypothesis_programs_validate_and_run(p):
    validate(p)
    outs = reference.run(p, program_inputs(p))
    assert set(outs) == {b.name for b in p.output_buffers}


def test_content_hash_is_stable_across_processes():
    p = ops.get("vyre-libs::nn::mlp_backward").build()
    code = ("from vyre_vk import ops; "
            "print(ops.get('vyre-libs::nn::mlp_backward').build().content_hash())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": ".", "PYTHONHASHSEED": "12345"})
    assert out.stdout.strip() == p.content_hash()
    other = ops.get("vyre-libs::nn::mlp_backward").build().with_entry_op_id("x")
    assert other.content_hash() != p.content_hash()


def test_structural_equality_and_hash():
    a = ops.get("vyre-libs::nn::mlp_backward").build()
    b = ops.get("vyre-libs::nn::mlp_backward").build()
    assert a == b and hash(a) == hash(b) and a is not b
    assert Expr.f32(0.0) != Expr.f32(-0.0)
    assert Expr.f32(float("nan")) == Expr.f32(float("nan"))


def test_unsupported_nodes_serialise_but_fail_validation_on_load():
    p = Program.wrapped([], (1, 1, 1), [IndirectDispatch("a", 0)])
    with pytest.raises(ProgramFormatError, match="not supported by the Vulkan backend yet") as info:
        Program.from_json(p.to_json())
    assert info.value.validation_error is not None
    assert program_from_dict(json.loads(p.to_json()), validate=False) == p


@pytest.mark.parametrize("text,fragment", [
    ("", "invalid JSON"), ("{", "invalid JSON"), ("[]", "expected an object"), ("null", "expected an object"),
    ('{"format": "other"}', "not a vyre-vk program"),
    ('{"format": "vyre-vk-program", "version": 2}', "unsupported version"),
    ('{"format": "vyre-vk-program", "version": 1}', "missing field"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
])
def test_malformed_documents(text, fragment):
    with pytest.raises(ProgramFormatError, match=fragment) as info:
        Program.from_json(text)
    assert "Fix:" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_deeply_nested_expression_is_rejected_not_crashing():
    d = json.loads(ops.get("vyre-libs::nn::mlp_backward").build().to_json())
    e = {"kind": "LitU32", "value": 1}
    for _ in range(5000):
        e = {"kind": "UnOp", "op": "BitNot", "operand": e}
    d["entry"][0]["body"][0]["value"] = e
    with pytest.raises(ProgramFormatError, match="nesting deeper than|nested too deeply"):
        program_from_dict(d)


def _mutations(rng: random.Random, text: str):
    """Truncations, byte flips, and structural edits of valid JSON."""
    kind = rng.randrange(5)
    if kind == 0:
        return text[: rng.randrange(len(text))]
    if kind == 1:
        pos = rng.randrange(len(text))
        return text[:pos] + rng.choice('{}[]",:0a-x\x00') + text[pos + 1:]
    d = json.loads(text)

    def nodes(obj, acc):
        if isinstance(obj, dict):
            acc.append(obj)
            for v in obj.values():
                nodes(v, acc)
        elif isinstance(obj, list):
            for v in obj:
                nodes(v, acc)
        return acc
    target = rng.choice(nodes(d, []))
    key = rng.choice(sorted(target))
    if kind == 2:
        del target[key]
    elif kind == 3:
        target[key] = rng.choice([None, -1, 2**40, "zz", [], {}, True, 1.5, {"kind": "Nope"}])
    else:
        target[key] = rng.choice(["Add", "U8", "Workgroup", "Loop", "GridSync", 0, "", "SeqCst"])
    return json.dumps(d)


def test_two_hundred_mutated_or_truncated_files_raise_the_typed_error():
    rng = random.Random(20240)
    base = [e.build().to_json() for e in ops.all_ops()]
    from hypothesis import find
    base.append(find(programs(), lambda p: len(p.to_json()) > 1500).to_json())
    raised = 0
    attempts = 0
    while raised < 200:
        attempts += 1
        assert attempts < 2000, "mutations keep producing valid programs"
        text = _mutations(rng, rng.choice(base))
        try:
            Program.from_json(text)
        except ProgramFormatError as exc:
            assert "Fix:" in str(exc)
            raised += 1
        # any other exception type propagates and fails the test: no crash allowed
    assert raised == 200
