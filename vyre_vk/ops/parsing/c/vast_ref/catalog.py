"""Lookups the C VAST oracle matches identifier hashes against (FNV-1a 32 of the spelling, the
VAST symbol word). The data is vyre's, kept once in the classifier's ordered tables
(:mod:`vyre_vk.ops.parsing.c.classify.catalog`: gnu_builtin_catalog.rs, vast/mod.rs
``C_ATTRIBUTE_KIND_HASHES``, ``C_GNU_TYPEOF_HASHES``, ``C_GNU_AUTO_TYPE_HASH``); the oracle
only needs them as maps. Tests pin hashes against vyre's literals.

Example::

    >>> hex(GNU_BUILTIN_HASH_KINDS[fnv1a32(b"__builtin_expect")]), len(GNU_BUILTIN_HASH_KINDS)
    ('0xc011e00d', 368)
    >>> hex(ATTRIBUTE_HASH_KINDS[fnv1a32(b"__packed__")]), sorted(hex(h) for h in TYPEOF_HASHES)[0]
    ('0xc011a77a', '0x812b41f1')
"""
from __future__ import annotations

from ...sema import vast_kinds as K
from ..classify.catalog import ATTRIBUTE_HASHES, AUTO_TYPE_HASH, BUILTIN_CATALOG
from ..classify.catalog import TYPEOF_HASHES as _TYPEOF
from ..keyword import fnv1a32

#: FNV-1a hash of a builtin's spelling -> its VAST kind.
GNU_BUILTIN_HASH_KINDS: dict[int, int] = {
    fnv1a32(name.encode()): kind for kind, names in BUILTIN_CATALOG for name in names}
#: FNV-1a hash of an attribute spelling -> its VAST kind (vyre's C_ATTRIBUTE_KIND_HASHES).
ATTRIBUTE_HASH_KINDS: dict[int, int] = dict(ATTRIBUTE_HASHES)
#: typeof, __typeof__, typeof_unqual, __typeof_unqual__ (identifiers the lexer did not promote).
TYPEOF_HASHES = frozenset(_TYPEOF)
GNU_AUTO_TYPE_HASH = AUTO_TYPE_HASH


def builtin_identifier_kind(symbol: int) -> int | None:
    """The kind of a builtin call ``name(`` by its hash: typeof spellings are sizeof-like, then the
    catalog. (vyre falls back to nine legacy hashes after the catalog; each is a catalog spelling,
    __builtin_expect .. __builtin_classify_type, so the catalog always answers first.)"""
    if symbol in TYPEOF_HASHES:
        return K.C_AST_KIND_SIZEOF_EXPR
    return GNU_BUILTIN_HASH_KINDS.get(symbol)
