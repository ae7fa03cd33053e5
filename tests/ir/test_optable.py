"""The operator and DataType tables are complete, consistent and self-referential."""
import re

import numpy as np

from vyre_vk.ir import ATOMICS, BINOPS, CASTS, DTYPES, GLSL_HELPERS, UNOPS, AtomicOp, BinOp, DataType, UnOp
from vyre_vk.ir.optable import TRANSCENDENTAL_UNOPS

SUPPORTED = [t for t in DataType if t.supported]


def test_every_operator_defined_once_with_vyre_wire_codes():
    assert set(BINOPS) == set(BinOp) and set(UNOPS) == set(UnOp) and set(ATOMICS) == set(AtomicOp)
    assert BinOp.Add.value == 0x01 and BinOp.Ge.value == 0x11 and BinOp.MulHigh.value == 0x21
    assert UnOp.Negate.value == 0x01 and UnOp.InverseSqrt.value == 0x1F and UnOp.Reciprocal.value == 0x24
    assert len({op.value for op in BinOp}) == len(BinOp) and len({op.value for op in UnOp}) == len(UnOp)
    assert {info.code for info in BINOPS.values()} == {op.value for op in BinOp}


def test_supported_ops_have_numpy_and_glsl_for_each_operand_type():
    for info in list(BINOPS.values()) + list(UNOPS.values()):
        if getattr(info, "supported", True):
            assert info.numpy is not None, info.name
            for t in info.types:
                assert t.value in info.glsl or "*" in info.glsl, (info.name, t)


def test_glsl_helpers_named_by_templates_exist():
    templates = [g for i in list(BINOPS.values()) + list(UNOPS.values()) for g in i.glsl.values()]
    templates += [c.glsl for c in CASTS.values()]
    for t in templates:
        for name in re.findall(r"\b(vyre_\w+)\(", t):
            assert name in GLSL_HELPERS, name
    for name, src in GLSL_HELPERS.items():
        assert re.search(rf"\b{name}\(", src), name


def test_dtype_table():
    assert set(SUPPORTED) == {DataType.U32, DataType.I32, DataType.Bool, DataType.F32}
    assert DataType.F32.numpy == np.float32 and DataType.F32.glsl == "float" and DataType.F32.size == 4
    assert DataType.Bool.numpy == np.uint32 and DataType.Bool.glsl_storage == "uint" and DataType.Bool.size == 4
    assert DataType.U32.wire_tag == 0x01 and DataType.F32.wire_tag == 0x0B and DataType.U8.wire_tag == 0x0E
    assert set(DTYPES) == set(DataType)
    for t in SUPPORTED:
        assert DTYPES[t].glsl and DTYPES[t].numpy is not None


def test_casts_cover_every_supported_pair():
    assert {(a, b) for a in SUPPORTED for b in SUPPORTED} == set(CASTS)


def test_transcendental_set_matches_vyre_fp_contract():
    assert TRANSCENDENTAL_UNOPS == {UnOp.Exp, UnOp.Log, UnOp.Sqrt, UnOp.InverseSqrt, UnOp.Sin, UnOp.Cos,
                                    UnOp.Tanh, UnOp.Sinh, UnOp.Cosh}
