"""Program JSON that is not what it claims: bad bytes, truncation, nesting, wrong field types,
and seeded mutations of registered ops' valid JSON. Through ``Program.from_json`` in
process and through ``vyre-vk emit FILE.json -o DIR``. A mutation that still parses must
run like the reference (or be refused with a typed error)."""
from __future__ import annotations

import copy
import dataclasses
import json
import random

from .common import Leak, Outcome, Typed, Wrong, add, case_tmp, parity, run_cli
from .progs import inputs_for

C = "json"
OPS = ["vyre-libs::nn::relu", "vyre-libs::nn::mlp_backward", "vyre-libs::nn::softmax", "vyre-libs::math::matmul",
       "vyre-libs::math::atomic::atomic_add_u32", "vyre-libs::nn::layer_norm", "vyre-libs::nn::gelu",
       "vyre-libs::nn::top_k"]


def base_doc(op: str = OPS[0]) -> dict:
    from vyre_vk.ops import get
    return json.loads(get(op).build().to_json())


def _from_json(text) -> None:
    from vyre_vk.ir import Program
    Program.from_json(text)
    raise Wrong("Program.from_json accepted it")


def _set(path: list, value):
    def fn(doc):
        d = doc
        for k in path[:-1]:
            d = d[k]
        if value is _DELETE:
            del d[path[-1]]
        else:
            d[path[-1]] = value
        return doc
    return fn


_DELETE = object()
_B0 = ["buffers", 0]
_FIELD = {  # name: mutation of relu's valid document (each must be refused)
    "workgroup-string": _set(["workgroup_size"], "big"),
    "buffers-object": _set(["buffers"], {}),
    "count-string": _set(_B0 + ["count"], "4"),
    "count-float": _set(_B0 + ["count"], 1.5),
    "element-unknown": _set(_B0 + ["element"], "U33"),
    "name-int": _set(_B0 + ["name"], 5),
    "entry-object": _set(["entry"], {}),
    "version-string": _set(["version"], "1"),
    "format-other": _set(["format"], "other-program"),
    "kind-unknown": _set(["entry", 0, "kind"], "Teleport"),
    "op-unknown": _set(["entry", 0, "body", 1, "cond", "op"], "Frobnicate"),
    "literal-2^70": _set(["entry", 0, "body", 1, "then", 0, "value", "left", "value"], 2**70),
}
for _n, _m in _FIELD.items():
    add(f"{C}/field/{_n}", lambda m=_m: _from_json(json.dumps(m(base_doc()))), "typed")
add(f"{C}/field/unknown-extra-field", lambda: _check_parsed(json.dumps(dict(base_doc(), extra=1)), 0), "either")
add(f"{C}/field/duplicate-keys", lambda: _check_parsed(json.dumps(base_doc())[:-1] + ', "version": 1}', 0), "either")
add(f"{C}/field/nan-bits", lambda: _from_json(json.dumps(base_doc()).replace('"value": 0', '"value": NaN', 1)), "typed")


# ----------------------------------------------------------------------------- raw text
def _valid_text() -> str:
    return json.dumps(base_doc())


_TEXT = {
    "non-utf8-bytes": lambda: b"\xff\xfe\x00garbage\x80\x81",
    "truncated-10": lambda: _valid_text()[:10],
    "truncated-half": lambda: _valid_text()[: len(_valid_text()) // 2],
    "empty-string": lambda: "",
    "top-level-list": lambda: "[" * 100_000 + "]" * 100_000,
    "nested-arrays-in-entry": lambda: _valid_text().replace('"entry": [', '"entry": [' + "[" * 100_000 + "]" * 100_000 + ",", 1),
    "nested-objects-in-buffers": lambda: _valid_text().replace('"buffers": [', '"buffers": [' + '{"a":' * 50_000 + "1" + "}" * 50_000 + ",", 1),
    "python-none": lambda: None,
    "python-dict": lambda: base_doc(),
}
for _n, _t in _TEXT.items():
    add(f"{C}/text/{_n}", lambda t=_t: _from_json(t()), "typed")
add(f"{C}/text/utf8-bom", lambda: _check_parsed(b"\xef\xbb\xbf" + _valid_text().encode(), 0), "either")


def _nested_program(kind: str, depth: int) -> str:
    """relu's document with its body replaced by `depth` nested Blocks or Ifs (built as text:
    json.dumps itself would overflow Python's recursion limit)."""
    inner = ('{"kind": "Store", "buffer": "output", "index": {"kind": "LitU32", "value": 0}, '
             '"value": {"kind": "LitU32", "value": 1}}')
    if kind == "blocks":
        head, tail = '{"kind": "Block", "body": [', "]}"
    else:
        head, tail = '{"kind": "If", "cond": {"kind": "LitBool", "value": true}, "then": [', '], "otherwise": []}'
    doc = base_doc()
    doc["entry"][0]["body"] = ["@BODY@"]
    return json.dumps(doc).replace('"@BODY@"', head * depth + inner + tail * depth)


for _k, _d in [("blocks", 300), ("ifs", 1000), ("ifs", 65)]:
    add(f"{C}/nested/{_k}-{_d}", lambda k=_k, d=_d: _from_json(_nested_program(k, d)), "typed")
add(f"{C}/nested/expression-10000", lambda: _from_json(_valid_text().replace(
    '{"kind": "LitU32", "value": 0}', '{"kind": "UnOp", "op": "BitNot", "operand": ' * 10_000
    + '{"kind": "LitU32", "value": 0}' + "}" * 10_000, 1)), "typed")


# ----------------------------------------------------------------------------- seeded mutations
def _nodes(x, path=()):
    """(path, value) of every element of a JSON tree."""
    yield path, x
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _nodes(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _nodes(v, path + (i,))


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


KINDS = ["delete-key", "retype", "swap-kind", "swap-op", "rename", "nudge-int", "dup-element", "drop-element",
         "swap-elements", "swap-enum"]
_POOL = [None, True, -1, 2**40, 1.5, "x", [], {}, "Teleport", 2**32 - 1]


def mutate(doc: dict, seed: int) -> tuple[dict, str]:
    """One seeded structural mutation of a valid program document; returns (doc, description)."""
    from vyre_vk.ir import AtomicOp, BinOp, UnOp
    from vyre_vk.ir import expr as E, node as N
    rng = random.Random(seed)
    kind = KINDS[seed % len(KINDS)]
    doc = copy.deepcopy(doc)
    every = [(p, v) for p, v in _nodes(doc) if p]
    pick = lambda pred: rng.choice([pv for pv in every if pred(*pv)] or every)  # noqa: E731
    if kind == "delete-key":
        p, _ = pick(lambda p, v: isinstance(p[-1], str))
        del _get(doc, p[:-1])[p[-1]]
    elif kind == "retype":
        p, _ = pick(lambda p, v: True)
        _get(doc, p[:-1])[p[-1]] = rng.choice(_POOL)
    elif kind == "swap-kind":
        p, v = pick(lambda p, v: p[-1] == "kind")
        pool = list(E.EXPR_VARIANTS) if v in E.EXPR_VARIANTS else list(N.NODE_VARIANTS)
        _get(doc, p[:-1])["kind"] = rng.choice(pool)
    elif kind == "swap-op":
        p, v = pick(lambda p, v: p[-1] == "op")
        pool = [m.name for m in (BinOp if v in BinOp.__members__ else UnOp if v in UnOp.__members__ else AtomicOp)]
        _get(doc, p[:-1])["op"] = rng.choice(pool)
    elif kind == "rename":
        p, _ = pick(lambda p, v: p[-1] in ("name", "buffer", "var"))
        names = sorted({v for q, v in every if q[-1] in ("name", "buffer", "var") and isinstance(v, str)})
        _get(doc, p[:-1])[p[-1]] = rng.choice(names + ["fresh"])
    elif kind == "nudge-int":
        p, v = pick(lambda p, v: isinstance(v, int) and not isinstance(v, bool))
        _get(doc, p[:-1])[p[-1]] = rng.choice([v + 1, v - 1, 0, 2**32 - 1, v * 2])
    elif kind in ("dup-element", "drop-element", "swap-elements"):
        p, v = pick(lambda p, v: isinstance(v, list) and len(v) >= (2 if kind == "swap-elements" else 1))
        if isinstance(v, list) and v:
            i = rng.randrange(len(v))
            if kind == "dup-element":
                v.insert(i, copy.deepcopy(v[i]))
            elif kind == "drop-element":
                v.pop(i)
            elif len(v) >= 2:
                j = rng.randrange(len(v))
                v[i], v[j] = v[j], v[i]
    else:  # swap-enum
        p, v = pick(lambda p, v: p[-1] in ("access", "element", "ordering"))
        from vyre_vk.ir import BufferAccess, DataType, MemoryOrdering
        enum = {"access": BufferAccess, "element": DataType, "ordering": MemoryOrdering}.get(p[-1], BufferAccess)
        _get(doc, p[:-1])[p[-1]] = rng.choice(list(enum.__members__))
    return doc, f"{kind} at {'.'.join(map(str, p))}"


def _check_parsed(text, seed: int) -> str:
    """Parse; a refusal must be typed; a program that parses must run like the reference.

    A mutation can turn a race-free program racy (`if gid == 0` -> `if absdiff(gid, 0)`), and
    then the reference's answer is only one legal outcome. So a mismatch counts as wrong only
    if it persists with a single invocation (workgroup (1,1,1), grid (1,1,1)): no concurrency."""
    from vyre_vk.ir import Program
    p = Program.from_json(text)
    inputs = inputs_for(p, seed)
    try:
        parity(p, inputs, gpu_when_ref_fails=False)
    except Wrong as first:
        solo = dataclasses.replace(p, workgroup_size=(1, 1, 1))
        try:
            parity(solo, inputs, grid=(1, 1, 1), gpu_when_ref_fails=False)
        except Exception:  # noqa: BLE001 - still wrong, or inconclusive: report the first mismatch
            raise first from None
        return f"racy after the mutation ({first}); a single invocation agrees with the reference"
    return "parsed and ran like the reference"


def mutation_case(seed: int) -> str:
    doc, what = mutate(base_doc(OPS[(seed + seed // len(KINDS)) % len(OPS)]), seed)
    try:
        return f"{what}: {_check_parsed(json.dumps(doc), seed)}"
    except Outcome as e:  # a failure the case saw itself: name the mutation in the report
        raise type(e)(f"[{what}] {e}") from None


for _s in range(40):
    add(f"{C}/mutation/{_s:02d}-{KINDS[_s % len(KINDS)]}", lambda s=_s: mutation_case(s), "either", timeout=30)


# ----------------------------------------------------------------------------- through the CLI
def emit_file(make, suffix: str = ".json") -> None:
    tmp = case_tmp("json-")
    path = tmp / f"program{suffix}"
    make(path)
    try:
        run_cli(["emit", str(path), "-o", str(tmp / "out")], timeout=25)
    except Typed as e:
        # The worker's address-space cap (6 GiB) turns an unbounded read into MemoryError; without
        # it the read would run until the machine's OOM killer: a refusal must come before reading.
        if "out of memory" in str(e).lower():
            raise Leak(f"read the file until the 6 GiB address-space cap ({e})") from None
        raise


def _write(data):
    return lambda path: path.write_bytes(data if isinstance(data, bytes) else data.encode())


_CLI = {  # name: (writer, expect)
    "non-utf8": (lambda p: p.write_bytes(b"\xff\xfe\x00garbage\x80"), "typed"),
    "truncated": (lambda p: p.write_text(_valid_text()[:40]), "typed"),
    "empty-file": (lambda p: p.write_bytes(b""), "typed"),
    "directory": (lambda p: p.mkdir(), "typed"),
    "wrong-field-type": (lambda p: p.write_text(json.dumps(_FIELD["count-string"](base_doc()))), "typed"),
    "deeply-nested": (lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "typed"),
    "symlink-dev-zero": (lambda p: p.symlink_to("/dev/zero"), "typed"),
    "valid": (lambda p: p.write_text(_valid_text()), "ok"),
}
for _n, (_w, _e) in _CLI.items():
    add(f"{C}/cli/{_n}", lambda w=_w: emit_file(w), _e, timeout=30)
for _s in range(0, 40, 10):
    add(f"{C}/cli-mutation/{_s:02d}", lambda s=_s: emit_file(lambda p: p.write_text(json.dumps(
        mutate(base_doc(OPS[(s + s // len(KINDS)) % len(OPS)]), s)[0]))), "either", timeout=30)
