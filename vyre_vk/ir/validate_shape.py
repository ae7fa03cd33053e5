"""Validation of a program's shape: the workgroup size and the buffer declarations.

Part of :mod:`vyre_vk.ir.validate`.

Example::

    >>> list(check_buffers(Program.wrapped([BufferDecl.read("a", 0, DataType.U32)], (64, 1, 1), [])))
    ['a']
"""
from __future__ import annotations

from .program import BufferDecl, Program
from .types import BufferAccess, DataType
from .validate_base import (MAX_WORKGROUP_INVOCATIONS, UNSUPPORTED, BufferDeclError, ProgramShapeError,
                            UnsupportedFeature, err)


def check_workgroup(p: Program) -> None:
    wg = p.workgroup_size
    if len(wg) != 3 or not all(isinstance(x, int) and not isinstance(x, bool) for x in wg):
        err(ProgramShapeError, "workgroup_size", f"workgroup size {wg!r} is not three integers.",
            "give [x, y, z], e.g. [64, 1, 1].")
    if any(x < 1 for x in wg):
        err(ProgramShapeError, "workgroup_size", f"workgroup size {list(wg)} has a zero or negative dimension.",
            "every dimension must be >= 1, e.g. [64, 1, 1].")
    if wg[0] * wg[1] * wg[2] > MAX_WORKGROUP_INVOCATIONS:
        err(ProgramShapeError, "workgroup_size",
            f"workgroup size {list(wg)} has {wg[0] * wg[1] * wg[2]} invocations, more than "
            f"{MAX_WORKGROUP_INVOCATIONS}.", f"use at most {MAX_WORKGROUP_INVOCATIONS} invocations per workgroup.")


def check_buffers(p: Program) -> dict[str, BufferDecl]:
    """The program's buffers by name, once every declaration (and the set of them) is valid."""
    out: dict[str, BufferDecl] = {}
    bindings: dict[int, str] = {}
    outputs = []
    for i, b in enumerate(p.buffers):
        path = f"buffers[{i}]"
        if not isinstance(b, BufferDecl):
            err(BufferDeclError, path, f"expected a BufferDecl, got {type(b).__name__}.",
                "declare buffers with BufferDecl.read/output/storage/workgroup.")
        if not isinstance(b.name, str) or not b.name:
            err(BufferDeclError, path, "buffer has an empty name.", "give every buffer a non-empty name.")
        path = f"buffers[{i}]({b.name})"
        if not isinstance(b.access, BufferAccess) or not isinstance(b.element, DataType):
            err(BufferDeclError, path, "buffer access or element is not a BufferAccess/DataType.",
                "use the BufferAccess and DataType enums.")
        if b.name in out:
            err(BufferDeclError, path, f"duplicate buffer name `{b.name}`.", "give every buffer a unique name.")
        if not b.element.supported:
            err(UnsupportedFeature, path,
                f"element type {b.element.value} is {UNSUPPORTED}.",
                "use u32, i32, f32, bool, u8 or i8 (pack other widths into u32 words).")
        if not isinstance(b.count, int) or not 0 <= b.count <= 0xFFFFFFFF:
            err(BufferDeclError, path, f"count {b.count!r} is not a u32.", "use a count in [0, 2^32).")
        if b.is_workgroup:
            if b.count == 0:
                err(BufferDeclError, path, f"workgroup buffer `{b.name}` has count 0.",
                    "give workgroup memory a positive element count: BufferDecl.workgroup(name, count, dtype).")
        else:
            if not isinstance(b.binding, int) or not 0 <= b.binding <= 0xFFFFFFFF:
                err(BufferDeclError, path, f"binding {b.binding!r} is not a u32.", "use a binding slot >= 0.")
            if b.binding in bindings:
                err(BufferDeclError, path,
                    f"binding {b.binding} of `{b.name}` is already used by `{bindings[b.binding]}`.",
                    "give every storage buffer its own binding slot.")
            bindings[b.binding] = b.name
        if b.is_output:
            outputs.append(b.name)
        if b.backend_allocated and b.count == 0:
            err(BufferDeclError, path, f"output buffer `{b.name}` has count 0 (it would be allocated with 0 bytes).",
                "declare outputs with .with_count(n) where n >= 1.")
        if b.output_byte_range is not None:
            lo, hi = b.output_byte_range
            limit = b.count * b.element.size
            if not (0 <= lo <= hi) or (b.count and hi > limit):
                err(BufferDeclError, path, f"output byte range {lo}..{hi} is invalid for {limit} bytes.",
                    "use start <= end <= count * element size.")
        out[b.name] = b
    if len(outputs) > 1:
        err(BufferDeclError, "buffers", f"program declares {len(outputs)} output buffers ({', '.join(outputs)}).",
            "mark at most one buffer with BufferDecl.output; use BufferDecl.read_write for the others.")
    return out


__all__ = ["check_workgroup", "check_buffers"]
