"""Family-scoped buffer names (port of vyre-libs/src/buffer_names.rs).

vyre-libs builders take generic buffer names (``input``, ``out``, ``output``, ...); a generic
name is replaced by a fixed per-family name ``__vyre_<family>_<role>`` so that programs fused
into one kernel cannot collide, while any other (explicit) name is kept as given.

Example::

    >>> scoped_generic_name("hash_crc32", "input", "input", ("input",))
    '__vyre_hash_crc32_input'
    >>> scoped_generic_name("hash_crc32", "input", "bytes", ("input",))
    'bytes'
"""
from __future__ import annotations

from typing import Sequence


def fixed_name(family_prefix: str, role: str) -> str:
    """The internal name of `role` in `family_prefix`."""
    return f"__vyre_{family_prefix}_{role}"


def scoped_generic_name(family_prefix: str, role: str, requested: str, generic_aliases: Sequence[str]) -> str:
    """`requested` unless it is one of `generic_aliases`, which become the family's fixed name."""
    return fixed_name(family_prefix, role) if requested in generic_aliases else requested


__all__ = ["fixed_name", "scoped_generic_name"]
