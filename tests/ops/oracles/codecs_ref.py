"""Independent references of the hash and decode ops, written from their specifications (zlib's
CRC-32 and Adler-32, the FNV-1a parameters, the BLAKE3 compression function of the BLAKE3 paper)
and, for the decoders, from the documented behaviour of vyre's programs (invalid characters,
padding, out-of-range headers). Inputs are u32 words carrying one byte each (low 8 bits).
"""
from __future__ import annotations

import zlib

import numpy as np

from .core import U32

M32 = 0xFFFFFFFF


def low_bytes(words) -> bytes:
    return bytes((np.asarray(words, np.uint32) & 0xFF).astype(np.uint8).tolist())


def crc32(words) -> int:
    return zlib.crc32(low_bytes(words)) & M32


def adler32(words) -> int:
    return zlib.adler32(low_bytes(words)) & M32


def fnv1a32(data: bytes) -> int:
    h = 0x811C9DC5                     # 32-bit offset basis
    for b in data:
        h = ((h ^ b) * 0x01000193) & M32   # 32-bit FNV prime 2^24 + 2^8 + 0x93
    return h


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325             # 64-bit offset basis
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF   # 2^40 + 2^8 + 0xB3
    return h


# ---------------------------------------------------------------- BLAKE3 (spec section 2.2)
BLAKE3_IV = (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19)
BLAKE3_PERMUTATION = (2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8)


def _rotr(x: int, n: int) -> int:
    return ((x >> n) | (x << (32 - n))) & M32


def _g(v: list, a: int, b: int, c: int, d: int, x: int, y: int) -> None:
    v[a] = (v[a] + v[b] + x) & M32
    v[d] = _rotr(v[d] ^ v[a], 16)
    v[c] = (v[c] + v[d]) & M32
    v[b] = _rotr(v[b] ^ v[c], 12)
    v[a] = (v[a] + v[b] + y) & M32
    v[d] = _rotr(v[d] ^ v[a], 8)
    v[c] = (v[c] + v[d]) & M32
    v[b] = _rotr(v[b] ^ v[c], 7)


def blake3_compress(cv, block_words, counter: int, block_len: int, flags: int) -> list[int]:
    """The 16-word output of the compression function; words 0..7 are the new chaining value."""
    cv = [int(w) for w in cv]
    m = [int(w) for w in block_words]
    v = cv + list(BLAKE3_IV[:4]) + [counter & M32, (counter >> 32) & M32, block_len, flags]
    for r in range(7):
        _g(v, 0, 4, 8, 12, m[0], m[1]); _g(v, 1, 5, 9, 13, m[2], m[3])      # noqa: E702 columns
        _g(v, 2, 6, 10, 14, m[4], m[5]); _g(v, 3, 7, 11, 15, m[6], m[7])    # noqa: E702
        _g(v, 0, 5, 10, 15, m[8], m[9]); _g(v, 1, 6, 11, 12, m[10], m[11])  # noqa: E702 diagonals
        _g(v, 2, 7, 8, 13, m[12], m[13]); _g(v, 3, 4, 9, 14, m[14], m[15])  # noqa: E702
        if r < 6:
            m = [m[BLAKE3_PERMUTATION[i]] for i in range(16)]
    return [v[i] ^ v[i + 8] for i in range(8)] + [v[i + 8] ^ cv[i] for i in range(8)]


CHUNK_START, CHUNK_END, ROOT = 1, 2, 8


def blake3_hash_one_block(data: bytes) -> bytes:
    """BLAKE3 of an input of at most 64 bytes (one chunk, one block, the root): 32 bytes."""
    assert len(data) <= 64
    block = data.ljust(64, b"\0")
    words = [int.from_bytes(block[4 * i:4 * i + 4], "little") for i in range(16)]
    out = blake3_compress(BLAKE3_IV, words, 0, len(data), CHUNK_START | CHUNK_END | ROOT)
    return b"".join(w.to_bytes(4, "little") for w in out[:8])


# ---------------------------------------------------------------- decoders
def hex_decode(words, table) -> np.ndarray:
    w = np.asarray(words, np.uint64) & 0xFF
    t = np.asarray(table, np.uint64)
    return ((t[w[0::2]] << np.uint64(4) | t[w[1::2]]) & M32).astype(U32)


def base64_decode(words, table) -> tuple[np.ndarray, int]:
    """(decoded bytes, one per word, len(words) // 4 * 3 of them; decoded_len) as vyre's program."""
    w = [int(x) for x in words]
    t = [int(x) for x in table]
    look = [0 if c >= len(t) or t[c] == 0xFF else t[c] for c in w]   # out-of-range reads give 0
    out = np.zeros(len(w) // 4 * 3, U32)
    for q in range(len(w) // 4):
        c0, c1, c2, c3 = look[4 * q:4 * q + 4]
        out[3 * q] = ((c0 << 2) | (c1 >> 4)) & M32
        if w[4 * q + 2] != ord("="):
            out[3 * q + 1] = (((c1 & 0x0F) << 4) | (c2 >> 2)) & M32
        if w[4 * q + 3] != ord("="):
            out[3 * q + 2] = (((c2 & 0x03) << 6) | c3) & M32
    n = out.size
    if len(w) >= 2:
        n -= (w[-1] == ord("=")) + (w[-2] == ord("="))
    return out, n


def inflate_stored(words) -> tuple[np.ndarray, int]:
    """(output of len(words) words, inflated_len) for a valid stored-block header; raises
    ValueError for the headers vyre's program traps on."""
    w = [int(x) for x in words] + [0] * 5                                # reads past the end give 0
    btype = (w[0] >> 1) & 3
    length = w[1] | (w[2] << 8)
    nlen = w[3] | (w[4] << 8)
    if btype != 0 or nlen != length ^ 0xFFFF:
        raise ValueError(f"btype {btype}, len {length:#x}, nlen {nlen:#x}")
    n = len(words)
    out = np.zeros(n, U32)
    for lane in range(min(length, n)):
        out[lane] = (w[5 + lane] if 5 + lane < n else 0) & M32
    return out, length


def encodex(data: bytes) -> tuple[np.ndarray, int]:
    """(256-bin histogram, encoding id) as encodex's classifier decides, from the histogram."""
    count = len(data)
    hist = np.bincount(np.frombuffer(data, np.uint8), minlength=256).astype(np.int64)
    high = count - int(hist[:128].sum())
    cont = int(hist[0x80:0xC0].sum())
    expected = int(hist[0xC2:0xE0].sum() + 2 * hist[0xE0:0xF0].sum() + 3 * hist[0xF0:0xF5].sum())
    enc = 255                                     # binary unless a rule below fires, in this order
    if high == 0:
        enc = 0                                   # ASCII
    if hist[0] > count // 8:
        enc = 2                                   # UTF-16LE: many NULs
    if high > 0 and abs(cont - expected) < (count + 19) // 20:
        enc = 1                                   # UTF-8: continuations match what lead bytes announce
    if high > 0 and enc not in (1, 2):
        enc = 4                                   # ISO-8859-1
    return hist.astype(U32), enc
