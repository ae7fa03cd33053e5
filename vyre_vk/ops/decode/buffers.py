"""Decode-family buffer scoping (port of vyre-libs/src/decode/buffers.rs): the generic names
``input`` / ``output`` / ``decoded`` become ``__vyre_decode_<family>_<role>``; explicit names
are kept. ``DecodeSpec`` is what the decoders share besides: the length check, those names and
the program skeleton ``Region(op_id){ Region(primitive_id, parent=op_id){ body } }`` (vyre wraps
the primitive's body as a child of the op's Region), workgroup [64,1,1].

Example::

    >>> scoped_decode_input_buffer("decode_hex", "input"), scoped_decoded_output_buffer("decode_hex", "output")
    ('__vyre_decode_hex_input', '__vyre_decode_hex_decoded')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...ir import BufferDecl, Node, Program, wrap_anonymous, wrap_child
from ..buffer_names import scoped_generic_name
from ..registry import OpParamError

#: Every decoder runs one invocation per output (or input) element in workgroups of 64.
DECODE_WORKGROUP = (64, 1, 1)


def scoped_decode_input_buffer(family_prefix: str, name: str) -> str:
    return scoped_generic_name(family_prefix, "input", name, ("input",))


def scoped_decode_output_buffer(family_prefix: str, default: str, name: str, aliases: Sequence[str]) -> str:
    return scoped_generic_name(family_prefix, default, name, aliases)


def scoped_decoded_output_buffer(family_prefix: str, name: str) -> str:
    return scoped_decode_output_buffer(family_prefix, "decoded", name, ("decoded", "output"))


def check_len(op_id: str, name: str, value: int, multiple: int = 1, minimum: int = 0) -> int:
    """`value` as a u32 length that is a multiple of `multiple`, or OpParamError (vyre builds a
    program that traps for a length its decoder cannot take; here the builder refuses it)."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= 0xFFFFFFFF:
        raise OpParamError(f"{op_id}: `{name}` = {value!r} is not a u32 length >= {minimum}. "
                           f"Fix: pass an int {name} in [{minimum}, 2^32).")
    if value % multiple:
        raise OpParamError(f"{op_id}: `{name}` = {value} is not a multiple of {multiple}. "
                           f"Fix: pad the input to a multiple of {multiple} or reject the truncated payload upstream.")
    return value


@dataclass(frozen=True)
class DecodeSpec:
    """A decoder's op id, its vyre-primitives id and its buffer family prefix."""
    op_id: str
    primitive_op_id: str
    family_prefix: str

    def checked_buffers(self, input: str, output: str, input_len: int, multiple: int = 1) -> tuple[str, str]:
        """(input, decoded output) buffer names, generic ones scoped to the family, once `input_len`
        passes `check_len`."""
        check_len(self.op_id, "input_len", input_len, multiple=multiple)
        return (scoped_decode_input_buffer(self.family_prefix, input),
                scoped_decoded_output_buffer(self.family_prefix, output))

    def wrap(self, buffers: list[BufferDecl], primitive_body: list[Node]) -> Program:
        """The decoder program: `primitive_body` in the primitive's Region inside the op's."""
        return Program.wrapped(buffers, DECODE_WORKGROUP, [
            wrap_anonymous(self.op_id, [wrap_child(self.primitive_op_id, self.op_id, primitive_body)])])


__all__ = ["DecodeSpec", "DECODE_WORKGROUP", "scoped_decode_input_buffer", "scoped_decode_output_buffer",
           "scoped_decoded_output_buffer", "check_len"]
