"""The lowering's spelling table covers the IR exactly: every operator, cast and supported type.

The IR's optable says what an operator means; vyre_vk/lower/spelling.py says how GLSL writes
it, keyed by the same enums. An op added to the IR without a spelling, or a spelling left
behind for an op or operand type the IR no longer has, fails here rather than in a shader.
"""
import re

from vyre_vk.ir import ATOMICS, BINOPS, CASTS, SUPPORTED_DTYPES, UNOPS, AtomicOp, BinOp, DataType, UnOp
from vyre_vk.lower.helpers import GLSL_HELPERS
from vyre_vk.lower.spelling import (ATOMIC_GLSL, BINOP_GLSL, CAST_GLSL, FMA_GLSL, SELECT_GLSL, STORAGE_TYPE,
                                    UNOP_GLSL, VALUE_TYPE, ZERO)

SUPPORTED = [t for t in DataType if t.supported]
_CALL = re.compile(r"\b(vyre_\w+)\(")


def _templates() -> list[str]:
    out = [tpl for table in (BINOP_GLSL, UNOP_GLSL) for spelled in table.values() for tpl in spelled.values()]
    return out + list(CAST_GLSL.values()) + [SELECT_GLSL, FMA_GLSL]


def test_every_op_has_a_spelling_and_no_spelling_lacks_an_op():
    assert set(BINOP_GLSL) == set(BinOp) and set(UNOP_GLSL) == set(UnOp) and set(ATOMIC_GLSL) == set(AtomicOp)
    assert set(CAST_GLSL) == set(CASTS)
    for table in (VALUE_TYPE, STORAGE_TYPE, ZERO):
        assert set(table) == set(SUPPORTED_DTYPES)


def test_spelled_operand_types_are_exactly_the_accepted_ones():
    for op, info in BINOPS.items():
        assert set(BINOP_GLSL[op]) == (set(info.types) if info.supported else set()), op
    for op, info in UNOPS.items():
        assert set(UNOP_GLSL[op]) == set(info.types), op
    for op, info in ATOMICS.items():
        assert (ATOMIC_GLSL[op] is not None) == info.supported, op


def test_supported_ops_have_glsl_for_each_operand_type():
    for table, rows in ((BINOP_GLSL, BINOPS), (UNOP_GLSL, UNOPS)):
        for op, info in rows.items():
            if getattr(info, "supported", True):
                for t in info.types:
                    assert t in table[op], (info.name, t)


def test_glsl_helpers_named_by_templates_exist():
    for t in _templates():
        for name in _CALL.findall(t):
            assert name in GLSL_HELPERS, name
    for name, src in GLSL_HELPERS.items():
        assert re.search(rf"\b{name}\(", src), name
        for called in _CALL.findall(src):  # vyre_trap is the lowering's own (glsl.py)
            assert called in GLSL_HELPERS or called == "vyre_trap", (name, called)


def test_type_names():
    assert VALUE_TYPE[DataType.F32] == "float" and STORAGE_TYPE[DataType.Bool] == "uint"
    assert VALUE_TYPE[DataType.Bool] == "bool" and ZERO[DataType.Bool] == "false"
    for t in SUPPORTED:
        assert VALUE_TYPE[t] and STORAGE_TYPE[t]
