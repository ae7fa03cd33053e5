"""What the hash wrappers share (port of vyre-libs/src/hash/wrap.rs): family-scoped buffer
names and the program skeleton around a vyre-primitives checksum body.

Every wrapper builds ``Region(op_id){ Region(primitive_id, parent=op_id){ Region(primitive_id){
body } } }`` (vyre wraps the primitive Program's entry, itself a Region, as a child of the op's
Region) over ``input`` (u32 read-only, one byte per element in its low 8 bits; `n` elements, or
unsized for the buf_len variants) and ``out`` (u32 output of `output_words` elements), with the
primitive's workgroup [1,1,1]: one invocation walks the bytes. Every checksum op is registered on
vyre's one vector, the bytes of "abc" (``HashWrapperSpec.register``).

Example::

    >>> spec = HashWrapperSpec("vyre-libs::hash::demo", "vyre-primitives::hash::demo", "hash_demo", 1)
    >>> spec.scoped_standard_buffers("input", "digest")
    ('__vyre_hash_demo_input', 'digest')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous, wrap_child
from ..buffer_names import scoped_generic_name
from ..registry import OpEntry, OpParamError, register_case
from ..wire import pack_bytes_as_u32_slice

U32 = DataType.U32
#: vyre's primitives dispatch one invocation for a serial checksum.
SERIAL_WORKGROUP = (1, 1, 1)


def check_count(op_id: str, name: str, value: int, minimum: int = 0) -> int:
    """`value` as a u32 element count, or OpParamError."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= 0xFFFFFFFF:
        raise OpParamError(f"{op_id}: `{name}` = {value!r} is not a u32 count >= {minimum}. "
                           f"Fix: pass an int {name} in [{minimum}, 2^32).")
    return value


@dataclass(frozen=True)
class HashWrapperSpec:
    op_id: str
    primitive_op_id: str
    family_prefix: str
    output_words: int

    def scoped_standard_buffers(self, input: str, out: str) -> tuple[str, str]:
        return (scoped_generic_name(self.family_prefix, "input", input, ("input",)),
                scoped_generic_name(self.family_prefix, "out", out, ("out", "output")))

    def scoped_output_buffer_with_aliases(self, out: str, aliases: Sequence[str]) -> str:
        return scoped_generic_name(self.family_prefix, "out", out, aliases)

    def scoped_input_buffer(self, input: str) -> str:
        return scoped_generic_name(self.family_prefix, "input", input, ("input",))

    def wrap(self, input: str, out: str, static_count: Optional[int], primitive_body: Sequence[Node]) -> Program:
        """The wrapper program around `primitive_body` (see the module doc)."""
        decl = BufferDecl.read(input, 0, U32)
        if static_count is not None:
            decl = decl.with_count(static_count)
        primitive_entry = [Node.region(self.primitive_op_id, list(primitive_body))]
        return Program.wrapped(
            [decl, BufferDecl.output(out, 1, U32).with_count(self.output_words)],
            SERIAL_WORKGROUP,
            [wrap_anonymous(self.op_id, [wrap_child(self.primitive_op_id, self.op_id, primitive_entry)])])

    def build(self, input: str, out: str, n: Optional[int],
              body: Callable[[str, str, Expr], Sequence[Node]]) -> Program:
        """The wrapper program around ``body(input, out, bound)`` over the scoped buffer names: `n`
        (checked) elements, or with ``n=None`` an unsized input read up to ``buf_len(input)``."""
        if n is not None:
            check_count(self.op_id, "n", n)
        input, out = self.scoped_standard_buffers(input, out)
        bound = Expr.buf_len(input) if n is None else Expr.u32(n)
        return self.wrap(input, out, n, body(input, out, bound))

    def primitive(self, input: str, out: str, n: Optional[int], body: Callable[[str, str, Expr], Sequence[Node]],
                  element: DataType = U32) -> Program:
        """vyre-primitives' own program for the checksum (what the wrapper composes): buffers
        ``input`` (`element`, `n` elements or unsized up to ``buf_len``) and ``out`` as named,
        entry ``[Region(primitive_op_id){ body }]`` on one invocation. The ``*_u8`` builders pass
        ``DataType.U8``: one byte per element, packed four to a word on the GPU."""
        if n is not None:
            check_count(self.primitive_op_id, "n", n)
        decl = BufferDecl.read(input, 0, element)
        decl = decl if n is None else decl.with_count(n)
        bound = Expr.buf_len(input) if n is None else Expr.u32(n)
        return Program.wrapped([decl, BufferDecl.output(out, 1, U32).with_count(self.output_words)], SERIAL_WORKGROUP,
                               [Node.region(self.primitive_op_id, list(body(input, out, bound)))])

    def register(self, builder: Callable[..., Program], expected: bytes, ulp: Optional[int]) -> OpEntry:
        """Register the op on the bytes of "abc" (its digest words `expected`), benchmarked on 64 KiB."""
        return register_case(self.op_id, builder, [pack_bytes_as_u32_slice(b"abc")], [expected], category=None,
                             ulp=ulp, bench=dict(n=1 << 16))


__all__ = ["HashWrapperSpec", "check_count", "SERIAL_WORKGROUP"]
