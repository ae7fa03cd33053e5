"""Statements (nodes) of the vyre IR: immutable, hashable, structural equality.

Lists given to constructors are stored as tuples. Helper constructors carry vyre's names
(``Node.let_bind``, ``Node.store``, ``Node.loop_for``, ...); variants are reachable as
module names (``Store``) and as ``Node.Store``.

Example::

    >>> n = Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(4)),
    ...                  [Node.store("out", Expr.var("i"), Expr.u32(1))])
    >>> n.then[0] == Store(buffer="out", index=Var("i"), value=LitU32(1))
    True

Statement lists must be lists or tuples (else :class:`IRError`) and the other fields hold an
Expr or an atom, never a statement; the helpers also check names. Every statement records its
:attr:`Node.nesting`, none deeper than :data:`NESTING_CAP`.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable, Optional, Sequence

from .atoms import is_atom, refuse_field
from .expr import Expr, LitU32
from .types import IRDepthError, MemoryOrdering, check_member, check_name, check_seq

#: Deepest statement nesting a constructor builds: the number of statement lists nested inside
#: one another (a Region holding an If holding a Store is 2). Validation rejects more than 64
#: (V018); the cap leaves room for that report while every recursive walk still fits Python's
#: default recursion limit at the cap with an expression at expr.EXPR_DEPTH_CAP inside (measured:
#: == and repr need ~4 frames a level, tests/ir/test_hostile_ir.py).
NESTING_CAP = 80


def _check_fields(obj: "Node") -> None:
    """Statement lists become tuples of statements (or atoms: validation reports those), other
    fields hold an Expr or an atom -- never a statement, so no IR tree hides inside an expression
    slot -- and the nesting is computed in O(1) from the statements' stored nesting."""
    vals = obj.__dict__  # the dataclass fields of a (non-slotted) variant live here
    bodies = obj._body_names
    deepest = 0
    for n in obj._field_names:
        v = vals[n]
        if n in bodies:
            if not isinstance(v, tuple):
                v = vals[n] = check_seq(v, f"{type(obj).__name__}.{n}", "pass the statements as a list of Node")
            for x in v:
                if isinstance(x, Node):
                    if x._nest > deepest:
                        deepest = x._nest
                elif not isinstance(x, Expr) and not is_atom(x):
                    refuse_field(obj, n, x, "a list of Node")
        elif not isinstance(v, Expr) and not is_atom(v):
            refuse_field(obj, n, v, "an Expr, or a str / int / float / bool / enum member")
    if bodies:
        nest = deepest + 1
        if nest > NESTING_CAP:
            raise IRDepthError(f"{type(obj).__name__} statement nests {nest} statement lists, over the cap of "
                               f"{NESTING_CAP} (validation's V018 limit is lower). Fix: flatten the program (early "
                               "exits, let-bound conditions) or split it into several programs.")
        vals["_nest"] = nest  # not a field: eq, hash, repr and JSON ignore it


class Node:
    """Base class of all statement variants, and home of vyre's helper constructors.

    The helpers check that names are str; the values they are given are validation's to judge
    (``Node.let_bind("x", 5)`` and ``Node.let_bind("", ...)`` build, ``validate`` reports them)."""

    __slots__ = ()
    #: Statement lists nested inside this statement (0 for a leaf); bodied variants store their own.
    _nest = 0
    #: Dataclass field names of the variant and those holding statement lists (set below the variants).
    _field_names: tuple = ()
    _body_names: tuple = ()

    @property
    def nesting(self) -> int:
        """Statement lists nested in this statement: 0 for Let/Store/..., 1 + the deepest body
        statement's nesting for If/Loop/Block/Region (an empty body still counts 1)."""
        return self._nest

    __post_init__ = _check_fields  # run by every variant's dataclass __init__

    @staticmethod
    def let_bind(name: str, value: Expr) -> "Let":
        return Let(check_name(name, "let name"), value)

    @staticmethod
    def assign(name: str, value: Expr) -> "Assign":
        return Assign(check_name(name, "assigned variable name"), value)

    @staticmethod
    def store(buffer: str, index: Expr, value: Expr) -> "Store":
        return Store(check_name(buffer, "store buffer name"), index, value)

    @staticmethod
    def if_then(cond: Expr, then: Sequence["Node"]) -> "If":
        return If(cond, then, ())

    @staticmethod
    def if_then_else(cond: Expr, then: Sequence["Node"], otherwise: Sequence["Node"]) -> "If":
        return If(cond, then, otherwise)

    @staticmethod
    def loop_for(var: str, from_: Expr, to: Expr, body: Sequence["Node"]) -> "Loop":
        """Half-open loop `var = from_, from_+1, ..., to-1` (u32); bounds evaluated once."""
        return Loop(check_name(var, "loop variable name"), from_, to, body)

    loop_ = loop_for

    @staticmethod
    def forever(body: Sequence["Node"]) -> "Loop":
        return Loop("__forever__", LitU32(0), LitU32(0xFFFFFFFF), body)

    @staticmethod
    def block(body: Sequence["Node"]) -> "Block":
        return Block(body)

    @staticmethod
    def region(generator: str, body: Sequence["Node"],
               source_region: "Optional[GeneratorRef | str]" = None) -> "Region":
        return Region(check_name(generator, "region generator"), source_region, body)

    @staticmethod
    def barrier() -> "Barrier":
        return Barrier(MemoryOrdering.SeqCst)

    @staticmethod
    def barrier_with_ordering(ordering: MemoryOrdering) -> "Barrier":
        return Barrier(check_member(ordering, MemoryOrdering, "barrier ordering"))

    @staticmethod
    def return_() -> "Return":
        return Return()

    @staticmethod
    def trap(address: Expr, tag: str) -> "Trap":
        return Trap(address, check_name(tag, "trap tag"))


_frozen = dataclass(frozen=True)


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


@_frozen
class Loop(Node):
    """`for var in from_..to` (half-open, u32). `from` is a Python keyword, hence `from_`."""

    var: str
    from_: Expr
    to: Expr
    body: tuple = ()


@_frozen
class Block(Node):
    body: tuple = ()


@dataclass(frozen=True)
class GeneratorRef:
    """vyre's reference to a generator (vyre-foundation expr.rs): the op that composed a Region.

    A Region keeps the name (``source_region``, so equality, hashing and the JSON form are those of
    a string); :attr:`Region.source_ref` gives it back as a GeneratorRef, and Region, Node.region,
    wrap and wrap_child accept either.

    >>> Region("child", GeneratorRef("parent"), ()).source_region, Region("c", "p", ()).source_ref
    ('parent', GeneratorRef(name='p'))
    """

    name: str

    def __post_init__(self) -> None:
        check_name(self.name, "GeneratorRef name")


@_frozen
class Region(Node):
    """A scoped block carrying provenance: `generator` is the op id that produced it and
    `source_region` the name of the generator that composed it (a GeneratorRef's name), if any."""

    generator: str
    source_region: Optional[str] = None
    body: tuple = ()

    def __post_init__(self) -> None:
        if isinstance(self.source_region, GeneratorRef):
            self.__dict__["source_region"] = self.source_region.name  # frozen: normalised in place
        _check_fields(self)

    @property
    def source_ref(self) -> Optional[GeneratorRef]:
        """`source_region` as vyre's GeneratorRef (None when the Region has no composing parent)."""
        return None if self.source_region is None else GeneratorRef(self.source_region)


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
class _AsyncCopy(Node):
    """The fields vyre's two async copy statements share (not a statement itself)."""
    source: str
    destination: str
    offset: Expr
    size: Expr
    tag: str


@_frozen
class AsyncLoad(_AsyncCopy):
    pass


@_frozen
class AsyncStore(_AsyncCopy):
    pass


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
_BODY_FIELDS = {"If": ("then", "otherwise"), "Loop": ("body",), "Block": ("body",), "Region": ("body",)}
#: Node kinds validation rejects as not implemented by the Vulkan backend yet.
UNSUPPORTED_NODES = (IndirectDispatch, AsyncLoad, AsyncStore, AsyncWait, Resume)
for _name, _cls in NODE_VARIANTS.items():
    setattr(Node, _name, _cls)
    _cls._field_names = tuple(f.name for f in fields(_cls))
    _cls._body_names = _BODY_FIELDS.get(_name, ())
setattr(Node, "return", Node.return_)  # vyre's name is a Python keyword; reachable via getattr
del _name, _cls


