"""Oracle of vyre_vk/ops/decode/hex: table lookups of each character pair (random hex digits of
both cases, every 16th character an invalid one or a word with high bits set)."""
from __future__ import annotations

import numpy as np

from vyre_vk.ops.decode.hex import hex_decode_table

from . import codecs_ref as R
from .core import U32, oracle, ru32

_P = "__vyre_decode_hex_"
IN, OUT, TABLE = _P + "input", _P + "decoded", _P + "table"
DIGITS = np.frombuffer(b"0123456789abcdefABCDEF", np.uint8).astype(U32)


@oracle("vyre-libs::decode::hex", {"input_len": 2000}, 0, "nibble table lookups: exact")
def _():
    def inputs(rng, p):
        w = DIGITS[rng.integers(0, DIGITS.size, p["input_len"])]
        odd = rng.integers(0, 16, w.size) == 0
        w[odd] = ru32(rng, int(odd.sum()))
        return {IN: w, TABLE: np.asarray(hex_decode_table(), U32)}
    return inputs, lambda ins, p: {OUT: R.hex_decode(ins[IN], ins[TABLE])}
