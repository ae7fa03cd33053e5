"""Oracle of vyre_vk/ops/decode/base64: the stdlib encoding of random bytes (with or without
'=' padding at the end), every 50th character replaced by an invalid one; decoded as vyre's
program does (codecs_ref.base64_decode)."""
from __future__ import annotations

import base64

import numpy as np

from vyre_vk.ops.decode.base64 import standard_decode_table

from . import codecs_ref as R
from .core import U32, oracle, ru32

_P = "__vyre_decode_base64_"
IN, TABLE, OUT, LEN = _P + "input", _P + "table", _P + "decoded", _P + "decoded_len"


@oracle("vyre-libs::decode::base64", {"input_len": 2000}, 0, "base64 alphabet lookups: exact")
def _():
    def inputs(rng, p):
        nbytes = p["input_len"] // 4 * 3 - int(rng.integers(0, 3))
        text = np.frombuffer(base64.b64encode(rng.bytes(nbytes)), np.uint8).astype(U32)
        bad = rng.integers(0, 50, text.size) == 0
        text[bad] = ru32(rng, int(bad.sum()))
        return {IN: text, TABLE: np.asarray(standard_decode_table(), U32), LEN: ru32(rng, 1)}

    def np_fn(ins, p):
        out, n = R.base64_decode(ins[IN], ins[TABLE])
        return {OUT: out, LEN: np.asarray([n], U32)}
    return inputs, np_fn
