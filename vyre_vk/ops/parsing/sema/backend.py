"""vyre-libs' x86-64 back-end passes (vyre-libs/src/compiler): `opt_x86_64_register_allocation`
(regalloc.rs), `opt_stack_layout_generation` (stack_layout.rs over atomic_collect.rs) and
`opt_lower_elf` (object_writer.rs).

- register allocation: lane t < n stores ``t % 16`` to ``out_physical_registers[t]`` and adds
  ``cfg_blocks[t]`` to ``thread_block_interference[0]`` (an atomic sum: order-free).
- stack layout: lane t < n whose ``input[t] >= 16`` (a spilled register) claims an 8-byte slot,
  ``output[t] = atomic_add(tmp_stack_frame_size[0], 8)``. Which lane gets which slot is the order
  the atomics run in (vyre's, kept): the reference runs lanes in invocation order, and so does
  lavapipe inside one workgroup; across workgroups the slots are a permutation. The result is
  defined (and registered, and randomly tested) for n <= 256, one workgroup.
- ELF: lane 0 writes an ELF64 ET_REL header, a null, a ``.text`` and a ``.shstrtab`` section
  header and the string table; lane t < n copies ``ssa_nodes[t]`` to word 64 + t. The object
  buffer holds max(required, 4096) words and returns the first ``64 + n + 5``.

Example::

    >>> p = opt_lower_elf("ssa", "obj", 4)
    >>> p.buffers[1].count, p.buffers[1].output_byte_range
    (4096, (0, 292))
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous, wrap_child
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import check_len, non_composable, u, v, with_entry_op_id

REGALLOC_OP_ID = "vyre-libs::parsing::opt_x86_64_register_allocation"
STACK_OP_ID = "vyre-libs::parsing::opt_stack_layout_generation"
ELF_OP_ID = "vyre-libs::parsing::opt_lower_elf"
RLE_PHASE_OP_ID = "vyre-primitives::decode::rle_segment_lengths"  # vyre's child Region name (kept)
ULP = None  # u32 results: exact
U32 = DataType.U32
PHYSICAL_REGISTERS = 16
SPILL_SLOT_BYTES = 8
ELF64_HEADER_WORDS = 16
ELF64_SECTION_HEADER_WORDS = 16
ELF_SECTION_COUNT = 3
TEXT_SECTION_INDEX, SHSTRTAB_SECTION_INDEX = 1, 2
TEXT_SECTION_WORD_OFFSET = ELF64_HEADER_WORDS + ELF64_SECTION_HEADER_WORDS * ELF_SECTION_COUNT  # 64
ELF_MIN_WORDS = 4096


def _ro(name: str, binding: int, n: int) -> BufferDecl:
    return BufferDecl.storage(name, binding, BufferAccess.ReadOnly, U32).with_count(n)


def _rw(name: str, binding: int, n: int) -> BufferDecl:
    return BufferDecl.storage(name, binding, BufferAccess.ReadWrite, U32).with_count(n)


def opt_x86_64_register_allocation(cfg_blocks: str, out_physical_registers: str, num_ssa_nodes: int) -> Program:
    """Round-robin ``t % 16`` register per SSA node, and the atomic sum of the CFG weights."""
    n = check_len(REGALLOC_OP_ID, "num_ssa_nodes", num_ssa_nodes)
    t = Expr.gid_x()
    body = [
        Node.let_bind("node", Expr.load(cfg_blocks, t)),
        # vyre keeps the scratch live by summing every lane's weight into it
        Node.let_bind("used_registers_mask", Expr.atomic_add("thread_block_interference", u(0), v("node"))),
        Node.let_bind("assigned_reg", Expr.rem(t, u(PHYSICAL_REGISTERS))),
        Node.store(out_physical_registers, t, v("assigned_reg")),
    ]
    return Program.wrapped(
        [_ro(cfg_blocks, 0, n), _rw(out_physical_registers, 1, n), _rw("thread_block_interference", 2, 1)],
        (256, 1, 1), [wrap_anonymous(REGALLOC_OP_ID, [Node.if_then(Expr.lt(t, u(n)), body)])])


def opt_stack_layout_generation(physical_registers: str, out_spill_offsets: str, num_regs: int) -> Program:
    """``out[t] = atomic_add(frame, 8)`` for each register ``>= 16`` (atomic_collect_u32, sparse form)."""
    n = check_len(STACK_OP_ID, "num_regs", num_regs)
    t = Expr.gid_x()
    body = [
        Node.let_bind("item", Expr.load(physical_registers, t)),
        Node.if_then(Expr.ge(v("item"), u(PHYSICAL_REGISTERS)), [
            Node.let_bind("claim", Expr.atomic_add("tmp_stack_frame_size", u(0), u(SPILL_SLOT_BYTES))),
            Node.store(out_spill_offsets, t, v("claim")),
        ]),
    ]
    program = Program.wrapped(
        [_ro(physical_registers, 0, n), _rw(out_spill_offsets, 1, n), _rw("tmp_stack_frame_size", 2, 1)],
        (256, 1, 1), [wrap_anonymous(STACK_OP_ID, [Node.if_then(Expr.lt(t, u(n)), body)])])
    return non_composable(with_entry_op_id(program, STACK_OP_ID))


def elf_required_words(node_count: int) -> int:
    """Header and section table, the text words, then the 5 ``.shstrtab`` words."""
    return TEXT_SECTION_WORD_OFFSET + node_count + 5


def elf_header_words(node_count: int) -> dict[int, int]:
    """Every nonzero word lane 0 writes (word index -> value), from the ELF64 layout."""
    text_hdr = ELF64_HEADER_WORDS + TEXT_SECTION_INDEX * ELF64_SECTION_HEADER_WORDS
    str_hdr = ELF64_HEADER_WORDS + SHSTRTAB_SECTION_INDEX * ELF64_SECTION_HEADER_WORDS
    strtab = TEXT_SECTION_WORD_OFFSET + node_count
    return {
        0: 0x464C457F,   # "\x7fELF"
        1: 0x00010102,   # ELFCLASS64, little-endian, version 1, System V ABI
        4: 0x003E0001,   # e_type ET_REL, e_machine EM_X86_64
        5: 1,            # e_version
        10: 0x40,        # e_shoff: the section table follows the 64-byte header
        13: 0x40,        # e_flags = 0 (word 12); e_ehsize = 64
        14: 0x00400000,  # e_phentsize 0, e_phnum 0 ... e_shentsize = 64
        15: (SHSTRTAB_SECTION_INDEX << 16) | ELF_SECTION_COUNT,
        text_hdr: 1, text_hdr + 1: 1, text_hdr + 2: 0x6,          # ".text", PROGBITS, ALLOC|EXECINSTR
        text_hdr + 6: TEXT_SECTION_WORD_OFFSET * 4, text_hdr + 8: node_count * 4, text_hdr + 12: 4,
        str_hdr: 7, str_hdr + 1: 3,                                # ".shstrtab", STRTAB
        str_hdr + 6: strtab * 4, str_hdr + 8: 17, str_hdr + 12: 1,
        strtab: 0x65742E00, strtab + 1: 0x2E007478, strtab + 2: 0x74736873, strtab + 3: 0x62617472,
    }


def opt_lower_elf(ssa_nodes: str, target_object_bytes: str, num_nodes: int) -> Program:
    """An ELF64 relocatable object around ``ssa_nodes[0..num_nodes]`` as its ``.text``."""
    n = check_len(ELF_OP_ID, "num_nodes", num_nodes)
    t = Expr.gid_x()
    required = elf_required_words(n)
    words = elf_header_words(n)
    obj = target_object_bytes
    header = []
    # vyre's store order: header words 0..15 (zeros included), the null section header loop,
    # then the section headers and the string table (its last word a 0)
    for i in range(ELF64_HEADER_WORDS):
        header.append(Node.store(obj, u(i), u(words.get(i, 0))))
    header.append(Node.loop_for("null_sh_word", u(0), u(ELF64_SECTION_HEADER_WORDS), [
        Node.store(obj, Expr.add(u(ELF64_HEADER_WORDS), v("null_sh_word")), u(0))]))
    for i in sorted(k for k in words if k >= ELF64_HEADER_WORDS):
        header.append(Node.store(obj, u(i), u(words[i])))
    header.append(Node.store(obj, u(TEXT_SECTION_WORD_OFFSET + n + 4), u(0)))
    copy = [Node.let_bind("encoded_word", Expr.load(ssa_nodes, t)),
            Node.let_bind("write_offset", Expr.add(u(TEXT_SECTION_WORD_OFFSET), t)),
            Node.store(obj, v("write_offset"), v("encoded_word"))]
    return Program.wrapped(
        [_ro(ssa_nodes, 0, n),
         _rw(obj, 1, max(required, ELF_MIN_WORDS)).with_output_byte_range(0, required * 4)],
        (256, 1, 1),
        [wrap_anonymous(ELF_OP_ID, [wrap_child(RLE_PHASE_OP_ID, ELF_OP_ID, [
            Node.if_then(Expr.eq(t, u(0)), header), Node.if_then(Expr.lt(t, u(n)), copy)])])])


def _regalloc(num_ssa_nodes: int = 16) -> Program:
    return opt_x86_64_register_allocation("cfg", "regs", num_ssa_nodes)


def _stack(num_regs: int = 4) -> Program:
    return opt_stack_layout_generation("regs", "spills", num_regs)


def _elf(num_nodes: int = 4) -> Program:
    return opt_lower_elf("ssa", "obj", num_nodes)


def _elf_expected() -> bytes:
    obj = [0] * elf_required_words(4)
    for i, w in elf_header_words(4).items():
        obj[i] = w
    obj[64:68] = [0xC0DE0001, 0xC0DE0002, 0xC0DE0003, 0xC0DE0004]
    return pack_u32_slice(obj)


# vyre's vectors: 16 nodes weighted 1..16 -> registers 0..15 and interference 136; registers
# [3, 20, 7, 30] -> spills at lanes 1 and 3 take offsets 0 and 8, frame 16; 4 encoded words.
REGALLOC_ENTRY = register_case(
    REGALLOC_OP_ID, _regalloc, [pack_u32_slice(range(1, 17)), bytes(64), bytes(4)],
    [pack_u32_slice(range(16)), pack_u32_slice([136])], category="compiler", ulp=ULP,
    bench=dict(num_ssa_nodes=1 << 20))
STACK_ENTRY = register_case(
    STACK_OP_ID, _stack, [pack_u32_slice([3, 20, 7, 30]), bytes(16), bytes(4)],
    [pack_u32_slice([0, 0, 0, 8]), pack_u32_slice([16])], category="compiler", ulp=ULP,
    # slots go in atomic order (vyre's race): at 256 registers the H200's 8 warps reach the atomic in
    # another order than the reference's lanes (ops.py's check failed); one warp's 32 lanes did not
    bench=dict(num_regs=32))
ELF_ENTRY = register_case(
    ELF_OP_ID, _elf, [pack_u32_slice([0xC0DE0001, 0xC0DE0002, 0xC0DE0003, 0xC0DE0004]), bytes(4096 * 4)],
    [_elf_expected()], category="compiler", ulp=ULP, bench=dict(num_nodes=1 << 20))
