"""`vyre-libs::parsing::c11_build_cfg_and_gotos`: resolve ``goto`` sites to their labels through an
open-addressing hash table (port of vyre-libs/src/compiler/cfg.rs).

Invocation ``t < num_ssa`` (workgroup [256,1,1]) reads ``ssa_nodes[t]`` as an opcode and, for
the tags, ``ssa_nodes[t + 1]`` as a label hash:

- ``LABL`` (0x4C41424C): claim the first slot from ``(hash * 2654435769) & 4095`` on (linear
  probing, wrapping) whose key is EMPTY (0xFFFFFFFF) by compare-exchange, and store ``t`` in its
  value word;
- a barrier;
- ``GOTO`` (0x474F544F): probe from the same slot to the first key equal to the hash (its value is
  the target) or the first EMPTY key (miss: EMPTY); ``out_cfg_blocks[t]`` = the target.

The caller passes the two 4096-slot tables (``goto_labels_keys`` all EMPTY for a fresh table);
they are excluded from the results (byte range 0..0). ``goto_labels`` is bound and never written
(vyre's). Other ``out_cfg_blocks`` words keep their input.

Races and edges (vyre's, kept): the barrier orders the label and goto phases within one
workgroup only, so a goto in another workgroup than its label may miss it: the result is defined
for ``num_ssa <= 256``. Duplicate label hashes probe on to further slots; a goto finds the one
the probe reaches first, the lowest ``t`` when all claims come from lanes in one workgroup
(lock-step or group by group). A hash word is also read as an opcode by its own lane, a tag in
the last word reads one past the stream, and the hash 0xFFFFFFFF (the EMPTY key) is not
representable.

Example::

    >>> label_slot(7), hex(LABEL_OPCODE), hex(GOTO_OPCODE)
    (1039, '0x4c41424c', '0x474f544f')
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous, wrap_child
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import check_len, u, v

OP_ID = "vyre-libs::parsing::c11_build_cfg_and_gotos"
PHASE_OP_ID = "vyre-primitives::graph::csr_forward_traverse"  # vyre's child region name, kept
ULP = None  # u32 results: exact
U32 = DataType.U32
TABLE_CAP = 4096
EMPTY_SLOT = 0xFFFFFFFF
FIB_MUL = 2_654_435_769
LABEL_OPCODE, GOTO_OPCODE = 0x4C41424C, 0x474F544F  # "LABL", "GOTO"
KEYS, VALS = "goto_labels_keys", "goto_labels_vals"


def label_slot(label_hash: int) -> int:
    """The first probe slot of a hash (Fibonacci hashing, low 12 bits)."""
    return (label_hash * FIB_MUL) & (TABLE_CAP - 1)


def _slot_of(key: Expr) -> Expr:
    return Expr.bitand(Expr.mul(key, u(FIB_MUL)), u(TABLE_CAP - 1))


def _next(slot: str) -> Node:
    return Node.assign(slot, Expr.bitand(Expr.add(v(slot), u(1)), u(TABLE_CAP - 1)))


def _label_phase(ssa: str, t: Expr) -> list[Node]:
    return [
        Node.let_bind("opcode", Expr.load(ssa, t)),
        Node.if_then(Expr.eq(v("opcode"), u(LABEL_OPCODE)), [
            Node.let_bind("label_hash", Expr.load(ssa, Expr.add(t, u(1)))),
            Node.let_bind("slot", _slot_of(v("label_hash"))),
            Node.let_bind("inserted", u(0)),
            # no break in the IR: a flag stops the work once the label has its slot
            Node.loop_for("probe", u(0), u(TABLE_CAP), [Node.if_then(Expr.eq(v("inserted"), u(0)), [
                Node.let_bind("prev", Expr.atomic_compare_exchange(KEYS, v("slot"), u(EMPTY_SLOT), v("label_hash"))),
                Node.if_then(Expr.eq(v("prev"), u(EMPTY_SLOT)), [Node.store(VALS, v("slot"), t),
                                                                   Node.assign("inserted", u(1))]),
                _next("slot"),
            ])]),
        ]),
    ]


def _goto_phase(ssa: str, out_cfg_blocks: str, t: Expr) -> list[Node]:
    return [
        Node.let_bind("opcode", Expr.load(ssa, t)),
        Node.if_then(Expr.eq(v("opcode"), u(GOTO_OPCODE)), [
            Node.let_bind("target_hash", Expr.load(ssa, Expr.add(t, u(1)))),
            Node.let_bind("lk_slot", _slot_of(v("target_hash"))),
            Node.let_bind("resolved", u(EMPTY_SLOT)),
            Node.let_bind("found", u(0)),
            Node.loop_for("probe", u(0), u(TABLE_CAP), [Node.if_then(Expr.eq(v("found"), u(0)), [
                Node.let_bind("k", Expr.load(KEYS, v("lk_slot"))),
                Node.if_then(Expr.eq(v("k"), v("target_hash")), [
                    Node.assign("resolved", Expr.load(VALS, v("lk_slot"))), Node.assign("found", u(1))]),
                # linear probing leaves no gap before a key's slot: EMPTY ends the search
                Node.if_then(Expr.eq(v("k"), u(EMPTY_SLOT)), [Node.assign("found", u(1))]),
                _next("lk_slot"),
            ])]),
            Node.store(out_cfg_blocks, t, v("resolved")),
        ]),
    ]


def c11_build_cfg_and_gotos(ssa_nodes: str, out_cfg_blocks: str, goto_labels: str, num_ssa: int) -> Program:
    """``out_cfg_blocks[t]`` = the label index each GOTO at ``t`` names (see the module doc)."""
    check_len(OP_ID, "num_ssa", num_ssa)
    t, n = Expr.gid_x(), max(num_ssa, 1)
    rw = BufferAccess.ReadWrite
    buffers = [BufferDecl.storage(ssa_nodes, 0, BufferAccess.ReadOnly, U32).with_count(n),
               BufferDecl.storage(out_cfg_blocks, 1, rw, U32).with_count(n),
               BufferDecl.storage(goto_labels, 2, rw, U32).with_count(n),
               BufferDecl.storage(KEYS, 3, rw, U32).with_count(TABLE_CAP).with_output_byte_range(0, 0),
               BufferDecl.storage(VALS, 4, rw, U32).with_count(TABLE_CAP).with_output_byte_range(0, 0)]
    body = [Node.if_then(Expr.lt(t, u(num_ssa)), _label_phase(ssa_nodes, t)), Node.barrier(),
            Node.if_then(Expr.lt(t, u(num_ssa)), _goto_phase(ssa_nodes, out_cfg_blocks, t))]
    # vyre builds this one without an entry op id or the non-composable flag
    return Program.wrapped(buffers, (256, 1, 1), [wrap_anonymous(OP_ID, [wrap_child(PHASE_OP_ID, OP_ID, body)])])


def _build(num_ssa: int = 5) -> Program:
    return c11_build_cfg_and_gotos("ssa", "cfg", "labels", num_ssa)


VECTOR_INPUTS = [pack_u32_slice([0, LABEL_OPCODE, 7, GOTO_OPCODE, 7]), bytes(20), bytes(20), b"\xff" * 4 * TABLE_CAP,
                 bytes(4 * TABLE_CAP)]
VECTOR_EXPECTED = [pack_u32_slice([0, 0, 0, 1, 0]), bytes(20), b"", b""]


ENTRY = register_case(OP_ID, _build, VECTOR_INPUTS, VECTOR_EXPECTED, category="compiler", ulp=ULP,
                      bench=dict(num_ssa=256))  # [NOP, LABL 7, GOTO 7]: the goto at 3 resolves to the label at 1

