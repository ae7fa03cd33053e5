"""Versioned JSON form of a Program, and the canonical bytes its content hash is taken over.

Format: one JSON object ``{"format": "vyre-vk-program", "version": 1, "buffers": [...],
"workgroup_size": [x, y, z], "entry": [...], "entry_op_id": ..., "non_composable_with_self": ...}``.
Every Expr/Node is an object with a ``"kind"`` key holding its vyre variant name; enums are
written by name; f32 literals as their bit pattern (``{"kind": "LitF32", "bits": 1065353216}``),
so round-trips are bit-exact.

Example::

    >>> p2 = Program.from_json(p.to_json()); p2 == p   # doctest: +SKIP
    True
"""
from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

from vyre_vk.errors import VyreError

from . import expr as E
from . import node as N
from .optable import AtomicOp, BinOp, UnOp
from .program import CODEC, BufferDecl, Program
from .types import BufferAccess, DataType, IRError, MemoryOrdering, show
from .validate import ValidationError, validate as _validate

FORMAT = "vyre-vk-program"
VERSION = 1
# Depth limits are the constructors' caps (expr.EXPR_DEPTH_CAP, node.NESTING_CAP), checked on the
# way down so over-deep input is rejected with its path before the parser recurses any deeper.


class ProgramFormatError(VyreError, ValueError):
    """Malformed or invalid serialised program. `.path` locates the problem in the JSON."""

    def __init__(self, message: str, path: str = "$", validation_error: Exception | None = None):
        self.path = path
        self.message = message
        self.validation_error = validation_error
        super().__init__(f"{path}: {message}")


# ----------------------------------------------------------------------------- encode
def _enc(v: Any) -> Any:
    if isinstance(v, E.Expr) or isinstance(v, N.Node):
        kind = E.EXPR_KIND.get(type(v)) or N.NODE_KIND.get(type(v))
        if kind is None:
            raise ProgramFormatError(f"cannot serialise {type(v).__name__}. Fix: use IR variants only")
        d: dict[str, Any] = {"kind": kind}
        for f in dataclasses.fields(v):
            key = "from" if f.name == "from_" else f.name
            d[key] = _enc(getattr(v, f.name))
        return d
    if isinstance(v, tuple):
        return [_enc(x) for x in v]
    if isinstance(v, enum.Enum):
        return v.name
    return v


def program_to_dict(p: Program) -> dict:
    """The JSON-ready dict of a program (including format and version)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "buffers": [
            {"name": b.name, "binding": b.binding, "access": b.access.name, "element": b.element.name,
             "count": b.count, "is_output": b.is_output, "pipeline_live_out": b.pipeline_live_out,
             "output_byte_range": list(b.output_byte_range) if b.output_byte_range is not None else None}
            for b in p.buffers],
        "workgroup_size": list(p.workgroup_size),
        "entry": [_enc(n) for n in p.entry],
        "entry_op_id": p.entry_op_id,
        "non_composable_with_self": p.non_composable_with_self,
    }


def canonical_bytes(p: Program) -> bytes:
    """Canonical serialisation: sorted keys, no whitespace, ASCII."""
    return json.dumps(program_to_dict(p), sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def to_json(p: Program, indent: int | None = None) -> str:
    return json.dumps(program_to_dict(p), sort_keys=True, indent=indent,
                      separators=None if indent else (",", ":"), ensure_ascii=True)


# ----------------------------------------------------------------------------- decode
def _fail(path: str, msg: str) -> None:
    raise ProgramFormatError(msg, path)


def _obj(v: Any, path: str) -> dict:
    if not isinstance(v, dict):
        _fail(path, f"expected an object, found {type(v).__name__}. Fix: write a JSON object here")
    return v


def _field(d: dict, key: str, path: str) -> Any:
    if key not in d:
        _fail(path, f"missing field {key!r}. Fix: add the field {key!r}")
    return d[key]


def _int(v: Any, path: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        _fail(path, f"expected an integer, found {type(v).__name__}. Fix: write an integer in [{lo}, {hi}]")
    if not lo <= v <= hi:
        _fail(path, f"integer {show(v)} out of range [{lo}, {hi}]. Fix: use a value in range")
    return v


def _str(v: Any, path: str) -> str:
    if not isinstance(v, str):
        _fail(path, f"expected a string, found {type(v).__name__}. Fix: write a JSON string")
    return v


def _bool(v: Any, path: str) -> bool:
    if not isinstance(v, bool):
        _fail(path, f"expected true/false, found {type(v).__name__}. Fix: write a JSON boolean")
    return v


def _enum(cls: type, v: Any, path: str) -> Any:
    if not isinstance(v, str) or v not in cls.__members__:
        _fail(path, f"unknown {cls.__name__} {show(v)}. Fix: use one of {', '.join(cls.__members__)}")
    return cls.__members__[v]


def _list(v: Any, path: str) -> list:
    if not isinstance(v, list):
        _fail(path, f"expected an array, found {type(v).__name__}. Fix: write a JSON array")
    return v


_U32 = (0, 0xFFFFFFFF)


def _expr(v: Any, path: str, depth: int) -> E.Expr:
    """`depth`: levels from the root expression (1) down to this one, counted as Expr.depth is."""
    if depth > E.EXPR_DEPTH_CAP:
        _fail(path, f"expression nesting deeper than {E.EXPR_DEPTH_CAP} levels. Fix: split the expression "
                    "with let bindings")
    d = _obj(v, path)
    kind = _str(_field(d, "kind", path), path + ".kind")
    f = lambda k: _field(d, k, path)  # noqa: E731
    sub = lambda k: _expr(f(k), f"{path}.{k}", depth + 1)  # noqa: E731
    if kind == "LitU32":
        return E.LitU32(_int(f("value"), path + ".value", *_U32))
    if kind == "LitI32":
        return E.LitI32(_int(f("value"), path + ".value", -2**31, 2**31 - 1))
    if kind == "LitF32":
        return E.LitF32(_int(f("bits"), path + ".bits", *_U32))
    if kind == "LitBool":
        return E.LitBool(_bool(f("value"), path + ".value"))
    if kind == "Var":
        return E.Var(_str(f("name"), path + ".name"))
    if kind == "Load":
        return E.Load(_str(f("buffer"), path + ".buffer"), sub("index"))
    if kind == "BufLen":
        return E.BufLen(_str(f("buffer"), path + ".buffer"))
    if kind in ("InvocationId", "WorkgroupId", "LocalId"):
        return E.EXPR_VARIANTS[kind](_int(f("axis"), path + ".axis", 0, 255))
    if kind == "BinOp":
        return E.BinOpExpr(_enum(BinOp, f("op"), path + ".op"), sub("left"), sub("right"))
    if kind == "UnOp":
        return E.UnOpExpr(_enum(UnOp, f("op"), path + ".op"), sub("operand"))
    if kind == "Call":
        args = _list(f("args"), path + ".args")
        return E.Call(_str(f("op_id"), path + ".op_id"),  # the args list is a level: depth + 2
                      tuple(_expr(a, f"{path}.args[{i}]", depth + 2) for i, a in enumerate(args)))
    if kind == "Select":
        return E.Select(sub("cond"), sub("true_val"), sub("false_val"))
    if kind == "Cast":
        return E.Cast(_enum(DataType, f("target"), path + ".target"), sub("value"))
    if kind == "Fma":
        return E.Fma(sub("a"), sub("b"), sub("c"))
    if kind == "Atomic":
        exp = f("expected")
        return E.Atomic(_enum(AtomicOp, f("op"), path + ".op"), _str(f("buffer"), path + ".buffer"),
                        sub("index"), None if exp is None else _expr(exp, path + ".expected", depth + 1),
                        sub("value"), _enum(MemoryOrdering, f("ordering"), path + ".ordering"))
    if kind == "SubgroupBallot":
        return E.SubgroupBallot(sub("cond"))
    if kind == "SubgroupShuffle":
        return E.SubgroupShuffle(sub("value"), sub("lane"))
    if kind == "SubgroupReduce":
        return E.SubgroupReduce(_str(f("op"), path + ".op"), sub("value"))
    if kind == "SubgroupLocalId":
        return E.SubgroupLocalId()
    if kind == "SubgroupSize":
        return E.SubgroupSize()
    _fail(path + ".kind", f"unknown expression kind {show(kind)}. Fix: use one of {', '.join(E.EXPR_VARIANTS)}")
    raise AssertionError  # unreachable


def _nodes(v: Any, path: str, level: int) -> tuple:
    """A statement list `level` lists deep (the entry is 0), as Node.nesting counts."""
    if level > N.NESTING_CAP:
        _fail(path, f"statement nesting deeper than {N.NESTING_CAP} lists. Fix: flatten the program")
    return tuple(_node(x, f"{path}[{i}]", level) for i, x in enumerate(_list(v, path)))


def _node(v: Any, path: str, level: int) -> N.Node:
    d = _obj(v, path)
    kind = _str(_field(d, "kind", path), path + ".kind")
    f = lambda k: _field(d, k, path)  # noqa: E731
    ex = lambda k: _expr(f(k), f"{path}.{k}", 1)  # noqa: E731
    depth = level + 1  # of the statement lists this statement holds
    s = lambda k: _str(f(k), f"{path}.{k}")  # noqa: E731
    if kind == "Let":
        return N.Let(s("name"), ex("value"))
    if kind == "Assign":
        return N.Assign(s("name"), ex("value"))
    if kind == "Store":
        return N.Store(s("buffer"), ex("index"), ex("value"))
    if kind == "If":
        return N.If(ex("cond"), _nodes(f("then"), path + ".then", depth), _nodes(f("otherwise"), path + ".otherwise", depth))
    if kind == "Loop":
        return N.Loop(s("var"), ex("from"), ex("to"), _nodes(f("body"), path + ".body", depth))
    if kind == "Block":
        return N.Block(_nodes(f("body"), path + ".body", depth))
    if kind == "Region":
        src = f("source_region")
        return N.Region(s("generator"), None if src is None else _str(src, path + ".source_region"),
                        _nodes(f("body"), path + ".body", depth))
    if kind == "Barrier":
        return N.Barrier(_enum(MemoryOrdering, f("ordering"), path + ".ordering"))
    if kind == "Return":
        return N.Return()
    if kind == "Trap":
        return N.Trap(ex("address"), s("tag"))
    if kind == "IndirectDispatch":
        return N.IndirectDispatch(s("count_buffer"), _int(f("count_offset"), path + ".count_offset", 0, 2**64 - 1))
    if kind in ("AsyncLoad", "AsyncStore"):
        return N.NODE_VARIANTS[kind](s("source"), s("destination"), ex("offset"), ex("size"), s("tag"))
    if kind in ("AsyncWait", "Resume"):
        return N.NODE_VARIANTS[kind](s("tag"))
    _fail(path + ".kind", f"unknown node kind {show(kind)}. Fix: use one of {', '.join(N.NODE_VARIANTS)}")
    raise AssertionError  # unreachable


def _buffer(v: Any, path: str) -> BufferDecl:
    d = _obj(v, path)
    rng = _field(d, "output_byte_range", path)
    if rng is not None:
        r = _list(rng, path + ".output_byte_range")
        if len(r) != 2:
            _fail(path + ".output_byte_range", "expected [start, end]. Fix: write two integers")
        rng = (_int(r[0], path + ".output_byte_range[0]", 0, 2**63), _int(r[1], path + ".output_byte_range[1]", 0, 2**63))
    fields = (
        _str(_field(d, "name", path), path + ".name"),
        _int(_field(d, "binding", path), path + ".binding", *_U32),
        _enum(BufferAccess, _field(d, "access", path), path + ".access"),
        _enum(DataType, _field(d, "element", path), path + ".element"),
        _int(_field(d, "count", path), path + ".count", *_U32),
        _bool(_field(d, "is_output", path), path + ".is_output"),
        _bool(_field(d, "pipeline_live_out", path), path + ".pipeline_live_out"),
        rng,
    )
    try:
        return BufferDecl(*fields)
    except IRError as exc:  # e.g. an empty name: the constructor's message, at this buffer's path
        raise ProgramFormatError(str(exc), path) from exc


def _cause(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a message that cannot be shown is described by its type alone
        text = "?"
    return f"{type(exc).__name__}: {text[:200]}"


def program_from_dict(d: Any, validate: bool = True) -> Program:
    """Build a Program from its dict form; raises ProgramFormatError on any problem."""
    try:
        d = _obj(d, "$")
        fmt = _field(d, "format", "$")
        if fmt != FORMAT:
            _fail("$.format", f"not a vyre-vk program (format {show(fmt)}). Fix: expected format {FORMAT!r}")
        ver = _field(d, "version", "$")
        if type(ver) is not int or ver != VERSION:
            _fail("$.version", f"unsupported version {show(ver)}. Fix: this reader understands version {VERSION}")
        wg = _list(_field(d, "workgroup_size", "$"), "$.workgroup_size")
        if len(wg) != 3:
            _fail("$.workgroup_size", f"expected 3 dimensions, found {len(wg)}. Fix: write [x, y, z]")
        op_id = _field(d, "entry_op_id", "$")
        p = Program(
            tuple(_buffer(b, f"$.buffers[{i}]") for i, b in enumerate(_list(_field(d, "buffers", "$"), "$.buffers"))),
            tuple(_int(x, f"$.workgroup_size[{i}]", *_U32) for i, x in enumerate(wg)),
            _nodes(_field(d, "entry", "$"), "$.entry", 0),
            None if op_id is None else _str(op_id, "$.entry_op_id"),
            _bool(_field(d, "non_composable_with_self", "$"), "$.non_composable_with_self"),
        )
    except ProgramFormatError:
        raise
    except IRError as exc:  # a constructor refused a value the field checks above let through
        raise ProgramFormatError(str(exc), "$") from exc
    except RecursionError:
        raise ProgramFormatError("input nested too deeply. Fix: flatten the program") from None
    except Exception as exc:  # never let a malformed document crash the caller with a bare error
        raise ProgramFormatError(f"malformed program ({_cause(exc)}). Fix: re-serialise it with "
                                 "Program.to_json()") from exc
    if validate:
        try:
            _validate(p)
        except ValidationError as exc:
            raise ProgramFormatError(f"program fails validation: {exc}", "$", exc) from exc
        except Exception as exc:  # a validator bug must still reach the caller typed, with the cause chained
            raise ProgramFormatError(f"validation crashed on this program ({_cause(exc)}). "
                                     "Fix: report it as a vyre-vk bug, attaching the JSON", "$", exc) from exc
    return p


def from_json(text: Any, validate: bool = True) -> Program:
    """Parse JSON text (str or bytes) into a validated Program."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProgramFormatError(f"not UTF-8 ({exc}). Fix: save the file as UTF-8") from None
    if not isinstance(text, str):
        raise ProgramFormatError(f"expected JSON text, got {type(text).__name__}. Fix: pass a str")
    try:
        d = json.loads(text)
    except RecursionError:
        raise ProgramFormatError("JSON nested too deeply. Fix: flatten the program") from None
    except ValueError as exc:
        raise ProgramFormatError(f"invalid JSON: {exc}. Fix: check the file is complete and not truncated") from None
    return program_from_dict(d, validate)

CODEC.update(to_json=to_json, from_json=from_json, to_dict=program_to_dict, canonical_bytes=canonical_bytes)
