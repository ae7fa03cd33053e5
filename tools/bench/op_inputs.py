"""Realistic random inputs for every registered op, at any size (tools/bench/ops.py).

Per buffer, from the program's declarations (as vyre_vk.testing.strategies.program_inputs, but in
float32 directly so 2^24-element inputs take milliseconds, and without hypothesis, which the GPU
machine does not have): f32 standard normal, u32/i32 uniform over the type, Bool 0/1. Buffers that
are inputs *and* results (accumulators, optimiser state, top-k scratch) start at zero: a first
step. A few ops need structured inputs (indices in range, a bitvector's own prefix counts, a
positive second moment); :data:`OVERRIDES` gives those, keyed by op id.

    >>> from vyre_vk.ops import get
    >>> e = get("vyre-libs::nn::embedding")
    >>> ins, grid = make_inputs(e, dict(e.params), e.build(), seed=0)
    >>> int(ins["tokens"].max()) < ins["table"].size // e.params["embed_dim"], grid
    (True, None)
"""
from __future__ import annotations

from typing import Callable, Mapping, Optional

import numpy as np

from vyre_vk.ir import DataType, Program

Inputs = dict[str, np.ndarray]
#: op id -> fn(rng, builder params, generic inputs) -> the buffers it replaces
OVERRIDES: dict[str, Callable[[np.random.Generator, dict, Inputs], Inputs]] = {}
#: op id -> the dispatch grid to run it with, where vyre's inferred one races (as tests/ops/oracles says)
GRIDS: dict[str, tuple[int, int, int]] = {
    # every inferred invocation runs the whole convolution and scales `output` in place: one workgroup
    "vyre-libs::math::fft::fft_convolve_circular_complex": (1, 1, 1),
}


def override(op_id: str):
    def deco(fn):
        OVERRIDES[op_id] = fn
        return fn
    return deco


def random_buffer(rng: np.random.Generator, dtype: DataType, n: int) -> np.ndarray:
    if dtype is DataType.F32:
        return rng.standard_normal(n, dtype=np.float32)
    if dtype is DataType.I32:
        return rng.integers(-2**31, 2**31, n, dtype=np.int32)
    if dtype is DataType.Bool:
        return rng.integers(0, 2, n, dtype=np.uint32)
    return rng.integers(0, 2**32, n, dtype=np.uint32)


def make_inputs(entry, params: Mapping, program: Program, seed: int = 0) -> tuple[Inputs, Optional[tuple]]:
    """(inputs by buffer name, grid override or None) for `program`, `entry` built at `params`."""
    rng = np.random.default_rng(seed)
    out: Inputs = {}
    for b in program.input_buffers:
        n = max(b.count, 1)
        out[b.name] = (np.zeros(n, dtype=b.element.numpy) if b.is_result
                       else random_buffer(rng, b.element, n))
    fix = OVERRIDES.get(entry.id)
    if fix is not None:
        out.update(fix(rng, dict(params), out))
    return out, GRIDS.get(entry.id)


# ----------------------------------------------------------------------------- structured inputs
@override("vyre-libs::nn::embedding")
def _embedding(rng, p, ins):
    vocab = 32000 if p["n"] * p["embed_dim"] >= 1 << 16 else 37  # a tokenizer's vocabulary at bench size
    return {"table": rng.standard_normal(vocab * p["embed_dim"], dtype=np.float32),
            "tokens": rng.integers(0, vocab, p["n"], dtype=np.uint32)}


@override("vyre-libs::nn::cross_entropy")
def _cross_entropy(rng, p, ins):
    return {"targets": rng.integers(0, p["vocab_size"], p["n"], dtype=np.uint32)}


def _popcounts(words: np.ndarray) -> np.ndarray:
    return np.unpackbits(words.astype("<u4").view(np.uint8)).reshape(-1, 32).sum(axis=1, dtype=np.int64)


@override("vyre-libs::math::succinct::rank1_query")
def _rank1_query(rng, p, ins):
    wc, bw = p["word_count"], p["block_words"]
    before = np.concatenate([[0], np.cumsum(_popcounts(ins["bits"][:wc]))])
    starts = np.arange(0, wc, bw)
    return {"superblocks": np.concatenate([before[starts], [before[-1]]]).astype(np.uint32),
            "queries": rng.integers(0, 32 * wc, p["query_count"], dtype=np.uint32)}


@override("vyre-libs::math::succinct::select1_query")
def _select1_query(rng, p, ins):
    total = int(_popcounts(ins["bits"]).sum())
    return {"queries": rng.integers(1, total + 1, p["query_count"], dtype=np.uint32)}


@override("vyre-libs::optim::adamw_step")
def _adamw(rng, p, ins):
    n = p["n"]
    return {"params": rng.standard_normal(n, dtype=np.float32),
            "m": rng.standard_normal(n, dtype=np.float32) * np.float32(1e-2),
            "v": np.abs(rng.standard_normal(n, dtype=np.float32)) * np.float32(1e-4)}


@override("vyre-libs::optim::ema_apply")
def _ema(rng, p, ins):
    return {"ema": rng.standard_normal(p["n"], dtype=np.float32)}


@override("vyre-libs::decode::inflate_stored_block")
def _inflate_stored(rng, p, ins):
    # one valid stored block (BTYPE=00, NLEN = ~LEN) filling the input, one byte per u32
    n = p["input_len"]
    length = min(max(n - 5, 0), 0xFFFF)
    header = [0x01, length & 0xFF, length >> 8, (length ^ 0xFFFF) & 0xFF, (length ^ 0xFFFF) >> 8]
    data = np.concatenate([np.array(header, np.uint32), rng.integers(0, 256, max(n - 5, 0), dtype=np.uint32)])
    return {"__vyre_decode_inflate_input": data[:n]}


@override("vyre-libs::optim::newton_schulz_5step")
def _newton_schulz(rng, p, ins):
    # a normalised matrix's entries (|x| <= 1), where the quintic iteration converges instead of overflowing
    return {"mat": rng.uniform(-1.0, 1.0, p["rows"] * p["cols"]).astype(np.float32)}


@override("vyre-libs::security::aliases_dataflow")
def _aliases_dataflow(rng, p, ins):
    # CSR offsets are loop bounds: sorted edge owners, so every node's edge range is real
    n, m = p["node_count"], p["edge_count"]
    owners = np.sort(rng.integers(0, n, m))
    return {"pg_edge_offsets": np.searchsorted(owners, np.arange(n + 1)).astype(np.uint32),
            "pg_edge_targets": rng.integers(0, n, max(m, 1), dtype=np.uint32)}


import op_inputs_convergence  # noqa: E402,F401  (the fixpoint security ops' graphs; registers on import)


@override("vyre-libs::parsing::opt_dynamic_macro_expansion")
def _macro_expansion(rng, p, ins):
    # a real macro table (empty slots left: a full table traps), tokens drawn from its keys and others
    from vyre_vk.ops.parsing.sema.preprocess import macro_table

    macros = {int(t): [int(x) for x in rng.integers(1, 100, int(rng.integers(0, 5)))]
              for t in rng.choice(np.arange(200, 400), 16, replace=False)}
    keys, vals, sizes = macro_table(macros)
    toks = rng.choice(list(macros) + list(range(1, 100)), p["num_tokens"]).astype(np.uint32)
    return {"in_tok_types": toks, "macro_keys": np.asarray(keys, np.uint32),
            "macro_vals": np.asarray(vals, np.uint32), "macro_sizes": np.asarray(sizes, np.uint32)}
