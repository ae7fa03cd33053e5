"""Byte buffers (U8 / I8, IR-SPEC 10.2) in GLSL: four bytes per ``uint`` word, exact on every device.

The IR indexes such a buffer by byte: byte ``i`` is lane ``i & 3`` (bits ``(i & 3) * 8``, little-endian)
of word ``i >> 2``, so the words hold exactly the bytes of the host's uint8/int8 array, zero-padded
to a whole word. That layout needs no 8-bit storage feature; where the device has one
(``storageBuffer8BitAccess``, enabled by kp patch 0010) a storage byte buffer is declared ``uint8_t[]``
over the same bytes instead (``native``), and its loads and stores are single byte accesses.

* Length: ``BufLen`` is the byte count. A storage buffer's words cannot say it (5 bytes bind 2
  words), so the runtime passes it as a specialization constant, one per storage byte buffer in
  binding order (:attr:`Lowered.byte_lengths`, constant_id = position). Its default 0xFFFFFFFF and
  the ``min`` with the bound words make a pipeline built without it read the whole padded words
  (vyre's own GPU rule, ``arrayLength * 4``). A workgroup byte buffer's length is its count.
* Loads read the word (index clamped into the buffer, as every accessor does) and extract the byte;
  out of range gives 0, like every load.
* Stores must not disturb the word's other three bytes, which other invocations may be writing at
  the same time (vyre's emitter does a plain read-modify-write there, which loses bytes). Without
  8-bit storage a compare-and-swap loop replaces only this byte, so concurrent stores to different
  bytes of one word all land and two to the same byte leave one of them (like two stores to one u32
  element). The loop is lock-free (a failed swap means another invocation's succeeded) but four
  lanes storing neighbouring bytes take turns on it; a native byte store is one write, and the
  memory model makes bytes separate locations, so the outcome is the same.

Example::

    >>> byte_len_expr("b_x", "x")
    'min(vk_nb_x, uint(b_x.length()) * 4u)'
"""
from __future__ import annotations

from ..ir.program import BufferDecl
from .spelling import BYTE_EXTRACT, VALUE_TYPE, ZERO

#: Specialization constant default: no byte count given (see the module doc).
NO_BYTE_COUNT = 0xFFFFFFFF


def words(count: int) -> int:
    """Words holding `count` bytes (at least one: Vulkan buffers are never empty)."""
    return max(1, -(-count // 4))


def spec_constant_name(stem: str) -> str:
    return f"vk_nb_{stem}"


def byte_len_expr(member: str, stem: str, native: bool = False) -> str:
    """Bytes bound to a storage byte buffer: the runtime's constant, never past the bound words
    (a ``native`` uint8_t array's length is already in bytes)."""
    return f"min({spec_constant_name(stem)}, uint({member}.length()){'' if native else ' * 4u'})"


def spec_constant_decl(constant_id: int, stem: str, name: str) -> str:
    return (f"layout(constant_id = {constant_id}) const uint {spec_constant_name(stem)} = {NO_BYTE_COUNT}u;"
            f"  // bytes bound to `{name}` (set by the runtime)")


def byte_accessors(b: BufferDecl, member: str, stem: str, load: bool, nload: bool, store: bool,
                   native: bool = False) -> list[str]:
    """The accessor functions of byte buffer `b` (GLSL array `member`), as glsl.py names them;
    ``native``: `member` is a storage ``uint8_t[]`` (8-bit storage), else ``uint[]`` words."""
    el, vt = b.element, VALUE_TYPE[b.element]
    if b.is_workgroup:
        native = False  # shared memory stays in words: 8-bit workgroup access is another feature
        length, last = f"{b.count}u", f"{words(b.count) - 1}u"
    else:
        length, last = byte_len_expr(member, stem, native), f"(uint({member}.length()) - 1u)"
    # the word holding byte vk_i, and the byte's position in it (a native byte sits alone at 0)
    word, at = (f"uint({member}[{{i}}])", "0u") if native else (f"{member}[{{i}} >> 2u]", "vk_i")
    out = []
    if load:
        idx = f"min(vk_i, {last})" if native else f"min(vk_i >> 2u, {last})"
        byte = BYTE_EXTRACT[el].format(w="vk_x", i=at)
        read = f"uint({member}[{idx}])" if native else f"{member}[{idx}]"
        out.append(f"{vt} vk_ld_{stem}(uint vk_i) {{ uint vk_n = {length}; "
                   f"uint vk_x = {read}; return vk_i < vk_n ? {byte} : {ZERO[el]}; }}")
    if nload:  # index proven below the declared count (bounds.py), hence inside the bound bytes
        byte = BYTE_EXTRACT[el].format(w=word.format(i="vk_i"), i=at)
        out.append(f"{vt} vk_ldn_{stem}(uint vk_i) {{ return {byte}; }}")
    if store and native:
        out.append(f"void vk_st_{stem}(uint vk_i, uint vk_v) {{ if (vk_i < {length}) {{ "
                   f"{member}[vk_i] = uint8_t(vk_v & 0xFFu); }} }}")
    elif store:
        out.append(
            f"void vk_st_{stem}(uint vk_i, uint vk_v) {{ if (vk_i < {length}) {{ "
            f"uint vk_w = vk_i >> 2u; uint vk_s = (vk_i & 3u) << 3u; uint vk_m = ~(0xFFu << vk_s); "
            f"uint vk_b = (vk_v & 0xFFu) << vk_s; uint vk_o = {member}[vk_w]; "
            f"for (;;) {{ uint vk_p = atomicCompSwap({member}[vk_w], vk_o, (vk_o & vk_m) | vk_b); "
            f"if (vk_p == vk_o) break; vk_o = vk_p; }} }} }}")
    return out


__all__ = ["NO_BYTE_COUNT", "byte_accessors", "byte_len_expr", "spec_constant_decl", "spec_constant_name", "words"]
