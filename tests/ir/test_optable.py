"""The operator and DataType tables are complete and consistent, and the IR holds no GLSL.

How the lowering spells each operator and type is tested with its table
(tests/lower/test_spelling.py); the IR itself knows no backend.
"""
import ast
import re
from pathlib import Path

import numpy as np

import vyre_vk.ir
from vyre_vk.ir import ATOMICS, BINOPS, CASTS, DTYPES, UNOPS, AtomicOp, BinOp, DataType, UnOp
from vyre_vk.ir.optable import TRANSCENDENTAL_UNOPS

SUPPORTED = [t for t in DataType if t.supported]


def test_every_operator_defined_once_with_vyre_wire_codes():
    assert set(BINOPS) == set(BinOp) and set(UNOPS) == set(UnOp) and set(ATOMICS) == set(AtomicOp)
    assert BinOp.Add.value == 0x01 and BinOp.Ge.value == 0x11 and BinOp.MulHigh.value == 0x21
    assert UnOp.Negate.value == 0x01 and UnOp.InverseSqrt.value == 0x1F and UnOp.Reciprocal.value == 0x24
    assert len({op.value for op in BinOp}) == len(BinOp) and len({op.value for op in UnOp}) == len(UnOp)
    assert {info.code for info in BINOPS.values()} == {op.value for op in BinOp}


def test_supported_ops_have_numpy_for_each_operand_type():
    for info in list(BINOPS.values()) + list(UNOPS.values()):
        if getattr(info, "supported", True):
            assert info.numpy is not None, info.name
            assert info.types, info.name
    for info in ATOMICS.values():
        assert (info.numpy is not None) == info.supported, info.name


def test_dtype_table():
    assert set(SUPPORTED) == {DataType.U32, DataType.I32, DataType.Bool, DataType.F32, DataType.U8, DataType.I8}
    assert DataType.U8.numpy == np.uint8 and DataType.I8.numpy == np.int8 and DataType.U8.size == 1
    assert DataType.F32.numpy == np.float32 and DataType.F32.size == 4
    assert DataType.Bool.numpy == np.uint32 and DataType.Bool.size == 4
    assert DataType.U32.wire_tag == 0x01 and DataType.F32.wire_tag == 0x0B and DataType.U8.wire_tag == 0x0E
    assert set(DTYPES) == set(DataType)
    for t in SUPPORTED:
        assert DTYPES[t].numpy is not None


def test_casts_cover_every_supported_pair():
    # vyre cast.rs: f32 converts to and from u32/i32/bool only (u8/i8 <-> f32 is V012)
    illegal = {(a, b) for a in (DataType.U8, DataType.I8) for b in (DataType.F32,)}
    illegal |= {(b, a) for a, b in illegal}
    assert {(a, b) for a in SUPPORTED for b in SUPPORTED} - illegal == set(CASTS)


def test_transcendental_set_matches_vyre_fp_contract():
    assert TRANSCENDENTAL_UNOPS == {UnOp.Exp, UnOp.Log, UnOp.Sqrt, UnOp.InverseSqrt, UnOp.Sin, UnOp.Cos,
                                    UnOp.Tanh, UnOp.Sinh, UnOp.Cosh}


# ----------------------------------------------------------------------------- the IR knows no backend
# GLSL in a string: builtins, directives, constructors and bit casts Python lacks, barriers, the
# lowering's helpers and its template operands (int(, float(, bool( are Python too: not signs of GLSL).
_GLSL_TEXT = re.compile(r"\bgl_[A-Z]\w*|#version|\blayout\s*\(|\b(?:uint|[iu]?vec[234])\(|"
                        r"\b(?:floatBitsToUint|uintBitsToFloat|atomicAdd|atomicCompSwap|memoryBarrier\w*)\b|"
                        r"(?<![.\w])barrier\(\)|\bvyre_(?!vk\b)\w+\(|\{a\}")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes (prose, which may name GLSL things)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _glsl_in(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            found += [f"string {m.group(0)!r}" for m in _GLSL_TEXT.finditer(node.value)]
        elif isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names = [node.name]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.alias):
            names = [node.name, node.asname or ""]
        elif isinstance(node, ast.ImportFrom):
            module = ("." * node.level) + (node.module or "")
            if re.match(r"(vyre_vk\.lower\b|\.\.lower\b)", module):  # the backend, imported by the IR
                found.append(f"import from {module}")
        found += [f"name {n!r}" for n in names if "glsl" in n.lower()]
    return [f"{path.name}:{f}" for f in found]


def test_ir_package_holds_no_glsl():
    root = Path(vyre_vk.ir.__file__).parent
    files = sorted(root.rglob("*.py"))
    assert files and {"optable.py", "types.py"} <= {f.name for f in files}
    found = [f for path in files for f in _glsl_in(path)]
    assert not found, found
    assert not any(hasattr(DataType.F32, a) for a in ("glsl", "glsl_storage"))
    rows = list(BINOPS.values()) + list(UNOPS.values()) + list(ATOMICS.values()) + list(CASTS.values())
    assert not any(hasattr(r, "glsl") for r in rows)


def test_glsl_detector_finds_glsl():
    # the scan above is only worth something if it sees the GLSL the IR used to hold
    for text in ("vyre_div_u32({a}, {b})", "uint({a})", "layout(local_size_x = 1) in;", "#version 450",
                 "uintBitsToFloat(0x7FC00000u)", "gl_GlobalInvocationID.x", "barrier()"):
        assert _GLSL_TEXT.search(text), text
    for prose in ("vyre_vk.ir.optable", "pass a bool (e.g. bool(x))", "float('nan')", "Node.barrier()",
                  "cast through u32", "the Vulkan backend"):
        assert not _GLSL_TEXT.search(prose), prose
