"""Oracle of vyre_vk/ops/decode/encodex: np.bincount of the bytes and the classifier's rules
(codecs_ref.encodex); each case draws ASCII, UTF-8, UTF-16LE, Latin-1 or random bytes."""
from __future__ import annotations

import numpy as np

from . import codecs_ref as R
from .core import U32, oracle

_P = "__vyre_decode_encodex_"
IN, HIST, OUT = _P + "input", _P + "histogram", _P + "encoding_id"


def sample_text(rng: np.random.Generator, n: int) -> bytes:
    kind = int(rng.integers(0, 5))
    if kind == 0:
        return bytes(rng.integers(32, 127, n).astype(np.uint8))
    if kind == 4:
        return rng.bytes(n)
    chars = "".join(chr(int(c)) for c in rng.choice([0x41, 0x65, 0xE9, 0xFC, 0x3B1, 0x4E2D, 0x20], n))
    data = chars.encode({1: "utf-8", 2: "utf-16-le", 3: "latin-1"}[kind], errors="replace")
    return data[:n].ljust(n, b" ")


@oracle("vyre-libs::decode::encodex", {"count": 256}, 0, "histogram and integer rules: exact", repeats=8)
def _():
    def inputs(rng, p):
        data = sample_text(rng, p["count"])
        high = (rng.integers(0, 2**24, p["count"]).astype(U32) << 8)       # bits above the byte are ignored
        return {IN: np.frombuffer(data, np.uint8).astype(U32) | high,
                HIST: rng.integers(0, 2**32, 256, dtype=np.uint64).astype(U32)}  # zeroed by the op

    def np_fn(ins, p):
        hist, enc = R.encodex(R.low_bytes(ins[IN]))
        return {HIST: hist, OUT: np.asarray([enc], U32)}
    return inputs, np_fn
