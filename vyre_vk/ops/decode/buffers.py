"""Decode-family buffer scoping (port of vyre-libs/src/decode/buffers.rs): the generic names
``input`` / ``output`` / ``decoded`` become ``__vyre_decode_<family>_<role>``; explicit names
are kept.

Example::

    >>> scoped_decode_input_buffer("decode_hex", "input"), scoped_decoded_output_buffer("decode_hex", "output")
    ('__vyre_decode_hex_input', '__vyre_decode_hex_decoded')
"""
from __future__ import annotations

from typing import Sequence

from ..buffer_names import scoped_generic_name
from ..registry import OpParamError


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


__all__ = ["scoped_decode_input_buffer", "scoped_decode_output_buffer", "scoped_decoded_output_buffer", "check_len"]
