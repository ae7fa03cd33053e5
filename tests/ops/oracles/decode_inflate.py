"""Oracle of vyre_vk/ops/decode/inflate: a raw DEFLATE stored block made by zlib (level 0, raw
window) from random bytes, then the buffer's tail filled with random bytes; the payload and LEN."""
from __future__ import annotations

import zlib

import numpy as np

from . import codecs_ref as R
from .core import U32, oracle, ru32

_P = "__vyre_decode_inflate_"
IN, OUT, LEN = _P + "input", _P + "decoded", _P + "inflated_len"


def stored_block(payload: bytes) -> bytes:
    """zlib's raw deflate at level 0: one final stored block for a payload under 64 KiB."""
    c = zlib.compressobj(0, zlib.DEFLATED, -15)
    return c.compress(payload) + c.flush()


@oracle("vyre-libs::decode::inflate_stored_block", {"input_len": 400}, 0, "stored block copy: exact")
def _():
    def inputs(rng, p):
        n = p["input_len"]
        block = stored_block(rng.bytes(int(rng.integers(0, n - 5 + 1))))
        words = np.frombuffer(block, np.uint8).astype(U32)
        tail = ru32(rng, n - words.size) & 0xFF
        return {IN: np.concatenate([words, tail]).astype(U32), LEN: ru32(rng, 1)}

    def np_fn(ins, p):
        out, n = R.inflate_stored(ins[IN])
        return {OUT: out, LEN: np.asarray([n], U32)}
    return inputs, np_fn
