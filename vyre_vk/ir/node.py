"""Statements (nodes) of the vyre IR: immutable, hashable, structural equality.

Lists given to constructors are stored as tuples. Helper constructors carry vyre's names
(``Node.let_bind``, ``Node.store``, ``Node.loop_for``, ...); variants are reachable as
module names (``Store``) and as ``Node.Store``.

Example::

    >>> n = Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(4)),
    ...                  [Node.store("out", Expr.var("i"), Expr.u32(1))])
    >>> n.then[0] == Store(buffer="out", index=Var("i"), value=LitU32(1))
    True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from .expr import Expr, LitU32
from .types import MemoryOrdering


class Node:
    """Base class of all statement variants, and home of vyre's helper constructors."""

    __slots__ = ()

    @staticmethod
    def let_bind(name: str, value: Expr) -> "Let":
        return Let(name, value)

    @staticmethod
    def assign(name: str, value: Expr) -> "Assign":
        return Assign(name, value)

    @staticmethod
    def store(buffer: str, index: Expr, value: Expr) -> "Store":
        return Store(buffer, index, value)

    @staticmethod
    def if_then(cond: Expr, then: Sequence["Node"]) -> "If":
        return If(cond, tuple(then), ())

    @staticmethod
    def if_then_else(cond: Expr, then: Sequence["Node"], otherwise: Sequence["Node"]) -> "If":
        return If(cond, tuple(then), tuple(otherwise))

    @staticmethod
    def loop_for(var: str, from_: Expr, to: Expr, body: Sequence["Node"]) -> "Loop":
        """Half-open loop `var = from_, from_+1, ..., to-1` (u32); bounds evaluated once."""
        return Loop(var, from_, to, tuple(body))

    loop_ = loop_for

    @staticmethod
    def forever(body: Sequence["Node"]) -> "Loop":
        return Loop("__forever__", LitU32(0), LitU32(0xFFFFFFFF), tuple(body))

    @staticmethod
    def block(body: Sequence["Node"]) -> "Block":
        return Block(tuple(body))

    @staticmethod
    def region(generator: str, body: Sequence["Node"], source_region: Optional[str] = None) -> "Region":
        return Region(generator, source_region, tuple(body))

    @staticmethod
    def barrier() -> "Barrier":
        return Barrier(MemoryOrdering.SeqCst)

    @staticmethod
    def barrier_with_ordering(ordering: MemoryOrdering) -> "Barrier":
        return Barrier(ordering)

    @staticmethod
    def return_() -> "Return":
        return Return()

    @staticmethod
    def trap(address: Expr, tag: str) -> "Trap":
        return Trap(address, tag)


_frozen = dataclass(frozen=True)


def _tup(obj, *names: str) -> None:
    for n in names:
        v = getattr(obj, n)
        if isinstance(v, list):
            object.__setattr__(obj, n, tuple(v))


@_frozen
class Let(Node):
    name: str
    value: Expr


@_frozen
class Assign(Node):
    name: str
    value: Expr


@_frozen
class Store(Node):
    buffer: str
    index: Expr
    value: Expr


@_frozen
class If(Node):
    cond: Expr
    then: tuple = ()
    otherwise: tuple = ()

    def __post_init__(self) -> None:
        _tup(self, "then", "otherwise")


@_frozen
class Loop(Node):
    """`for var in from_..to` (half-open, u32). `from` is a Python keyword, hence `from_`."""

    var: str
    from_: Expr
    to: Expr
    body: tuple = ()

    def __post_init__(self) -> None:
        _tup(self, "body")


@_frozen
class Block(Node):
    body: tuple = ()

    def __post_init__(self) -> None:
        _tup(self, "body")


@_frozen
class Region(Node):
    """A scoped block carrying provenance: `generator` is the op id that produced it."""

    generator: str
    source_region: Optional[str] = None
    body: tuple = ()

    def __post_init__(self) -> None:
        _tup(self, "body")


@_frozen
class Barrier(Node):
    ordering: MemoryOrdering = MemoryOrdering.SeqCst


@_frozen
class Return(Node):
    pass


@_frozen
class Trap(Node):
    """Abort the dispatch with an error (vyre-libs uses it for invalid-argument programs)."""

    address: Expr
    tag: str


# Node kinds vyre has but the Vulkan backend does not implement yet; they exist so a
# program using them can be represented (and serialised) and then rejected clearly.
@_frozen
class IndirectDispatch(Node):
    count_buffer: str
    count_offset: int = 0


@_frozen
class AsyncLoad(Node):
    source: str
    destination: str
    offset: Expr
    size: Expr
    tag: str


@_frozen
class AsyncStore(Node):
    source: str
    destination: str
    offset: Expr
    size: Expr
    tag: str


@_frozen
class AsyncWait(Node):
    tag: str


@_frozen
class Resume(Node):
    tag: str


NODE_VARIANTS: dict[str, type] = {
    "Let": Let, "Assign": Assign, "Store": Store, "If": If, "Loop": Loop, "Block": Block,
    "Region": Region, "Barrier": Barrier, "Return": Return, "Trap": Trap,
    "IndirectDispatch": IndirectDispatch, "AsyncLoad": AsyncLoad, "AsyncStore": AsyncStore,
    "AsyncWait": AsyncWait, "Resume": Resume,
}
NODE_KIND: dict[type, str] = {cls: name for name, cls in NODE_VARIANTS.items()}
#: Node kinds validation rejects as not implemented by the Vulkan backend yet.
UNSUPPORTED_NODES = (IndirectDispatch, AsyncLoad, AsyncStore, AsyncWait, Resume)
for _name, _cls in NODE_VARIANTS.items():
    setattr(Node, _name, _cls)
setattr(Node, "return", Node.return_)  # vyre's name is a Python keyword; reachable via getattr
del _name, _cls


def node_exprs(n: Node) -> tuple[Expr, ...]:
    """The expressions a node evaluates itself (not those of nested statements), in order."""
    if isinstance(n, (Let, Assign)):
        return (n.value,)
    if isinstance(n, Store):
        return (n.index, n.value)
    if isinstance(n, If):
        return (n.cond,)
    if isinstance(n, Loop):
        return (n.from_, n.to)
    if isinstance(n, Trap):
        return (n.address,)
    if isinstance(n, (AsyncLoad, AsyncStore)):
        return (n.offset, n.size)
    return ()


def node_bodies(n: Node) -> tuple[tuple[str, tuple], ...]:
    """Nested statement lists of `n` with their path labels (e.g. ("if.then", (...)))."""
    if isinstance(n, If):
        return (("if.then", n.then), ("if.else", n.otherwise))
    if isinstance(n, Loop):
        return ((f"loop({n.var}).body", n.body),)
    if isinstance(n, Block):
        return (("block.body", n.body),)
    if isinstance(n, Region):
        return (("region.body", n.body),)
    return ()
