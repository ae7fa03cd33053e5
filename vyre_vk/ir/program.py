"""Buffer declarations and Programs.

Example::

    >>> p = Program.wrapped(
    ...     [BufferDecl.read("a", 0, DataType.U32).with_count(4),
    ...      BufferDecl.output("out", 1, DataType.U32).with_count(4)],
    ...     (64, 1, 1),
    ...     [wrap_anonymous("demo::copy", [
    ...         Node.let_bind("i", Expr.gid_x()),
    ...         Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(4)),
    ...                      [Node.store("out", Expr.var("i"), Expr.load("a", Expr.var("i")))])])])
    >>> len(p.content_hash())
    64

Both constructors check the kind of every field (names, integers, enums, statement lists)
and raise :class:`IRError` with a Fix hint; rules between fields (duplicate names or
bindings, workgroup dimensions >= 1, outputs with a count) are validation's.
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from .node import GeneratorRef, Node, Region
from .types import BufferAccess, DataType, IRError, check_int, check_member, check_name, check_seq, show

U32_MAX = 0xFFFFFFFF


def _flag(obj: Any, name: str) -> None:
    v = getattr(obj, name)
    if not isinstance(v, (bool, np.bool_)):
        raise IRError(f"{type(obj).__name__}.{name} must be True or False, got {type(v).__name__} {show(v)}. "
                      "Fix: pass a bool.")
    object.__setattr__(obj, name, bool(v))

ROOT_GENERATOR = "vyre.program.root"


@dataclass(frozen=True)
class BufferDecl:
    """One buffer of a program.

    `count` is the element count (0 = sized at dispatch by the bound data). `is_output`
    marks the one buffer built with :meth:`output`; every ReadWrite/WriteOnly buffer is a
    result buffer regardless. `output_byte_range` (start, end) cuts the returned bytes.
    """

    name: str
    binding: int
    access: BufferAccess
    element: DataType
    count: int = 0
    is_output: bool = False
    pipeline_live_out: bool = False
    output_byte_range: Optional[tuple[int, int]] = None

    def __post_init__(self) -> None:
        name = check_name(self.name, "buffer name", nonempty=True)
        where = f"buffer `{name}`"
        put = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 - frozen: normalise in place
        put("binding", check_int(self.binding, f"{where} binding", 0, U32_MAX,
                                 "use a binding slot in [0, 4294967295], e.g. 0, 1, 2 in declaration order"))
        check_member(self.access, BufferAccess, f"{where} access")
        check_member(self.element, DataType, f"{where} element")
        put("count", check_int(self.count, f"{where} count", 0, U32_MAX,
                               "give the element count as an int in [0, 4294967295] (0: sized by the data)"))
        _flag(self, "is_output")
        _flag(self, "pipeline_live_out")
        rng = self.output_byte_range
        if rng is not None:
            rng = check_seq(rng, f"{where} output_byte_range", "pass (start, end) or None")
            if len(rng) != 2:
                raise IRError(f"{where} output_byte_range has {len(rng)} items. Fix: pass (start, end) in bytes.")
            put("output_byte_range", tuple(check_int(x, f"{where} output_byte_range bound", 0, 2**63,
                                                     "use byte offsets >= 0") for x in rng))

    @staticmethod
    def storage(name: str, binding: int, access: BufferAccess, element: DataType) -> "BufferDecl":
        return BufferDecl(name, binding, access, element)

    @staticmethod
    def read(name: str, binding: int, element: DataType) -> "BufferDecl":
        return BufferDecl(name, binding, BufferAccess.ReadOnly, element)

    @staticmethod
    def read_write(name: str, binding: int, element: DataType) -> "BufferDecl":
        """ReadWrite storage that is both an input (its initial contents) and a result."""
        return BufferDecl(name, binding, BufferAccess.ReadWrite, element)

    @staticmethod
    def output(name: str, binding: int, element: DataType) -> "BufferDecl":
        """ReadWrite, marked output and live-out: zero-initialised, never an input."""
        return BufferDecl(name, binding, BufferAccess.ReadWrite, element, is_output=True,
                          pipeline_live_out=True)

    @staticmethod
    def uniform(name: str, binding: int, element: DataType) -> "BufferDecl":
        return BufferDecl(name, binding, BufferAccess.Uniform, element)

    @staticmethod
    def workgroup(name: str, count: int, element: DataType) -> "BufferDecl":
        """Workgroup-shared memory of `count` elements (zeroed per workgroup, no binding)."""
        return BufferDecl(name, 0, BufferAccess.Workgroup, element, count=count)

    def with_count(self, count: int) -> "BufferDecl":
        return dataclasses.replace(self, count=count)

    def with_output_byte_range(self, start: int, end: int) -> "BufferDecl":
        return dataclasses.replace(self, output_byte_range=(start, end))

    def with_pipeline_live_out(self, live_out: bool) -> "BufferDecl":
        return dataclasses.replace(self, pipeline_live_out=live_out)

    # ---- roles (vyre reference §8.1: which buffers take inputs, which are returned)
    @property
    def is_workgroup(self) -> bool:
        return self.access is BufferAccess.Workgroup

    @property
    def backend_allocated(self) -> bool:
        """Zero-filled by the backend and consuming no input slot."""
        return self.is_output or self.access is BufferAccess.WriteOnly or (
            self.pipeline_live_out and self.access is BufferAccess.ReadWrite)

    @property
    def is_result(self) -> bool:
        """Returned after the dispatch (every ReadWrite or WriteOnly buffer)."""
        return self.access in (BufferAccess.ReadWrite, BufferAccess.WriteOnly)

    @property
    def is_input(self) -> bool:
        """Takes a (logical) input slot."""
        return not self.is_workgroup and not self.backend_allocated


def _items(seq, cls: type, what: str, seq_fix: str, item_fix: str) -> tuple:
    """`seq` as a tuple of `cls` instances, or IRError naming the first that is not one
    (`what` names one item: "program buffer" -> the sequence is "program buffers")."""
    items = check_seq(seq, f"{what}s", seq_fix)
    for x in items:
        if not isinstance(x, cls):
            raise IRError(f"{what} {show(x)} is a {type(x).__name__}, not a {cls.__name__}. Fix: {item_fix}.")
    return items


@dataclass(frozen=True)
class Program:
    """A compute program: buffers, workgroup size and an entry body run once per invocation.

    Build runnable programs with :meth:`wrapped`; :meth:`new` keeps the entry as given.
    Equality is structural (buffer declaration order included).
    """

    buffers: tuple = ()
    workgroup_size: tuple = (1, 1, 1)
    entry: tuple = ()
    entry_op_id: Optional[str] = None
    non_composable_with_self: bool = False

    def __post_init__(self) -> None:
        put = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 - frozen: normalise in place
        put("buffers", _items(self.buffers, BufferDecl, "program buffer", "pass a list of BufferDecl",
                              "declare buffers with BufferDecl.read/output/read_write/workgroup"))
        fix = "pass three positive integers (x, y, z), e.g. (64, 1, 1)"
        wg = check_seq(self.workgroup_size, "workgroup size", fix)
        if len(wg) != 3:
            raise IRError(f"workgroup size {show(wg)} has {len(wg)} dimensions. Fix: {fix}.")
        # u32 as in vyre; a zero dimension or too many invocations is validation's to report.
        put("workgroup_size", tuple(check_int(x, "workgroup size dimension", 0, U32_MAX, fix) for x in wg))
        put("entry", _items(self.entry, Node, "program entry item", "pass a list of Node (use Program.wrapped)",
                            "build statements with the Node helpers and the program with Program.wrapped"))
        if self.entry_op_id is not None:
            check_name(self.entry_op_id, "entry_op_id")
        _flag(self, "non_composable_with_self")

    @staticmethod
    def new(buffers: Sequence[BufferDecl], workgroup_size: Sequence[int], entry: Sequence[Node],
            entry_op_id: Optional[str] = None) -> "Program":
        """Raw constructor: the entry is kept as is (validation wants top-level Regions)."""
        return Program(buffers, workgroup_size, entry, entry_op_id)

    @staticmethod
    def wrapped(buffers: Sequence[BufferDecl], workgroup_size: Sequence[int], entry: Sequence[Node],
                entry_op_id: Optional[str] = None) -> "Program":
        """The constructor ops use: if `entry` is empty or holds any non-Region node, the whole
        entry is wrapped into one `Region(generator="vyre.program.root")`."""
        entry = check_seq(entry, "program entry", "pass a list of Node")
        if not entry or not all(isinstance(n, Region) for n in entry):
            entry = (Region(ROOT_GENERATOR, None, entry),)
        return Program(buffers, workgroup_size, entry, entry_op_id)

    @staticmethod
    def empty() -> "Program":
        return Program.wrapped((), (1, 1, 1), ())

    def with_entry_op_id(self, op_id: Optional[str]) -> "Program":
        return dataclasses.replace(self, entry_op_id=op_id)

    def buffer(self, name: str) -> Optional[BufferDecl]:
        for b in self.buffers:
            if b.name == name:
                return b
        return None

    @property
    def output_buffers(self) -> tuple[BufferDecl, ...]:
        """Result buffers (every ReadWrite/WriteOnly), in declaration order."""
        return tuple(b for b in self.buffers if b.is_result)

    @property
    def input_buffers(self) -> tuple[BufferDecl, ...]:
        """Buffers taking a logical input slot, in declaration order."""
        return tuple(b for b in self.buffers if b.is_input)

    @property
    def workgroup_bytes(self) -> int:
        """Workgroup memory one workgroup of this program's own workgroup buffers takes (a u8/i8
        buffer packs four bytes per 32-bit word: vyre_vk/lower/bytes.py).

        >>> Program([BufferDecl.workgroup("t", 5, DataType.U8)], (1, 1, 1), []).workgroup_bytes
        8
        """
        return sum(4 * -(-b.count // 4) if b.element.is_byte else b.count * b.element.size
                   for b in self.buffers if b.is_workgroup)

    # ---- serialisation, hashing, validation: serial.py and validate.py build and check Programs,
    # so they register their functions here when vyre_vk.ir loads them (no import back to them).
    def to_json(self) -> str:
        """Versioned JSON text; `Program.from_json(p.to_json()) == p` exactly."""
        return CODEC["to_json"](self)

    @staticmethod
    def from_json(text: str) -> "Program":
        """Parse and validate; malformed input raises ProgramFormatError."""
        return CODEC["from_json"](text)

    def to_dict(self) -> dict:
        return CODEC["to_dict"](self)

    def content_hash(self) -> str:
        """Hex SHA-256 of the canonical serialisation (stable across processes)."""
        return hashlib.sha256(CODEC["canonical_bytes"](self)).hexdigest()

    def validate(self) -> "Program":
        CODEC["validate"](self)
        return self


#: Filled by vyre_vk.ir.serial (to_json, from_json, to_dict, canonical_bytes) and
#: vyre_vk.ir.validate (validate), which vyre_vk.ir imports with this module.
CODEC: dict[str, Any] = {}


# ----------------------------------------------------------------------------- region helpers
# vyre-harness region.rs (re-exported as vyre_libs::region): how ops wrap and compose their bodies.

#: vyre-foundation algebra/composition.rs: a generator suffix marking a Region that may not be fused
#: with another instance of itself.
SELF_EXCLUSIVE_REGION_SUFFIX = "#self-exclusive"


def mark_self_exclusive_region(generator: str) -> str:
    """`generator` with vyre's self-exclusive suffix.

    >>> mark_self_exclusive_region("vyre-libs::parsing::c_lexer")
    'vyre-libs::parsing::c_lexer#self-exclusive'
    """
    return check_name(generator, "region generator") + SELF_EXCLUSIVE_REGION_SUFFIX


def _parent(ref: "GeneratorRef | str | None", what: str) -> Optional[str]:
    """A source region given as vyre's GeneratorRef or as its name, as the name a Region keeps."""
    if isinstance(ref, GeneratorRef):
        return ref.name
    return None if ref is None else check_name(ref, what)


def wrap_anonymous(generator: str, body: Sequence[Node]) -> Region:
    """`Region(generator, source_region=None, body)`: how every vyre-libs op wraps its body."""
    return Region(check_name(generator, "region generator"), None, body)


def wrap(generator: str, body: Sequence[Node], source_region: "GeneratorRef | str | None" = None) -> Region:
    """`Region(generator, source_region, body)`; the source region as a GeneratorRef or its name."""
    return Region(check_name(generator, "region generator"), _parent(source_region, "source region"), body)


def wrap_child(generator: str, parent: "GeneratorRef | str", body: Sequence[Node]) -> Region:
    """A Region whose `source_region` names its composing parent (a GeneratorRef, or its name).

    >>> wrap_child("vyre-primitives::x", GeneratorRef("vyre-libs::y"), []).source_ref
    GeneratorRef(name='vyre-libs::y')
    """
    if parent is None:
        raise IRError("wrap_child needs a parent generator, got None. Fix: pass GeneratorRef(op_id) or the op id, "
                      "or use wrap_anonymous for a Region without a parent.")
    return Region(check_name(generator, "region generator"), _parent(parent, "parent generator"), body)


def reparent_program_children(program: Program, parent_op_id: str) -> list[Node]:
    """`program`'s top-level nodes as children of `parent_op_id` (vyre's helper of the same name):
    a Region keeps its generator and body and gets ``source_region = parent``, except that the
    root Region (``vyre.program.root``) becomes ``inline::<parent>``; any other node is wrapped
    in an ``inline::<parent>`` Region with that source region.

    >>> p = Program.wrapped([], (1, 1, 1), [Node.barrier()])
    >>> [(r.generator, r.source_region) for r in reparent_program_children(p, "op")]
    [('inline::op', 'op')]
    """
    parent = GeneratorRef(check_name(parent_op_id, "parent op id"))
    inline = f"inline::{parent.name}"
    out: list[Node] = []
    for node in program.entry:
        if isinstance(node, Region):
            out.append(Region(inline if node.generator == ROOT_GENERATOR else node.generator, parent.name, node.body))
        else:
            out.append(wrap(inline, [node], parent))
    return out


def tag_program(parent_op_id: str, program: Program) -> Program:
    """`program` under one Region of `parent_op_id` (vyre's ``tag_program``): the same buffers and
    workgroup size, entry ``[Region(parent){reparented children}]``; the generator carries
    ``#self-exclusive`` and the flag is kept when the program is non-composable with itself.

    >>> t = tag_program("vyre-libs::demo", Program.wrapped([], (1, 1, 1), []))
    >>> t.entry[0].generator, [(c.generator, c.source_region) for c in t.entry[0].body]
    ('vyre-libs::demo', [('inline::vyre-libs::demo', 'vyre-libs::demo')])
    """
    generator = (mark_self_exclusive_region(parent_op_id) if program.non_composable_with_self
                 else check_name(parent_op_id, "parent op id"))
    tagged = Program.wrapped(program.buffers, program.workgroup_size,
                             [wrap_anonymous(generator, reparent_program_children(program, parent_op_id))])
    return dataclasses.replace(tagged, non_composable_with_self=program.non_composable_with_self)
