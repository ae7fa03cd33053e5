"""Packed signed INT4 ops `vyre-libs::quant::int4_*` (port of vyre-libs/src/nn/quant/int4.rs, whose
wrappers return vyre-primitives/src/math/quantized programs unchanged: each program's one Region
carries the *primitive's* generator id, e.g. ``vyre-primitives::math::quantized::i4x8_dot_i32``).

Layout: eight signed 4-bit lanes per u32 word, lane ``k`` in bits ``4*(k%8) .. 4*(k%8)+3`` of word
``k/8`` (lowest nibble first); a nibble ``n`` decodes to ``n`` if ``n & 8 == 0`` else ``n - 16``.
Matrices are row-major with ``ceil(cols/8)`` words per row (a row starts on a fresh word).
Every sum runs sequentially over the lanes/columns from 0 (one invocation per output):

- ``int4_dot_i32``: ``out[0] = sum_k l[k]*r[k]`` in wrapping i32; workgroup [1,1,1], invocation 0
  (registered in pack.py with the other integer-exact quant ops: its ULP is None);
- ``int4_dot_f32_scaled``: the same sum in f32, then ``(acc * lhs_scale[0]) * rhs_scale[0]``;
- ``int4_matvec_f32_scaled``: ``out[r] = (sum_c w[r,c]*x[c]) * scales[r]``, ``r = gid.x < rows``;
- ``int4_batched_matvec_f32_scaled``: ``out[b*rows+r] = (sum_c w[r,c]*x[b*cols+c]) * scales[r]``;
- ``int4_batched_matmul_f32_scaled``: ``out[b*rows+r] = ((sum_c w[r,c]*a[b,c]) * row_scales[r])
  * batch_scales[b]`` with packed INT4 activations ``a`` (same words-per-row as the weights);
- ``int4_batched_matmul_top1_f32_scaled``: per batch item ``b = gid.x < batch`` the scores of
  the previous op over rows 0..rows-1, keeping ``best = f32::MIN, idx = 0`` and replacing them
  when ``best < score`` (strict: the lowest row wins a tie; NaN never wins; scores below f32::MIN,
  i.e. -inf, leave ``(f32::MIN, 0)``); ``out[b] = best``, ``out[batch+b] = f32(idx)``.

The f32 accumulations of products of two INT4 lanes are exact (integers of magnitude <= 64*cols,
below 2^24 for cols <= 2^18); the matvec sums of lane * f32 x round at every step.

Example::

    >>> [(b.name, b.count) for b in int4_matvec_f32_scaled("w", "x", "s", "out", 3, 9).buffers]
    [('w', 6), ('x', 9), ('s', 3), ('out', 3)]
"""
from __future__ import annotations

from typing import Callable

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice, pack_u32_slice
from vyre_vk.ops.registry import OpParamError

DOT_OP_ID = "vyre-libs::quant::int4_dot_i32"
DOT_SCALED_OP_ID = "vyre-libs::quant::int4_dot_f32_scaled"
MATVEC_SCALED_OP_ID = "vyre-libs::quant::int4_matvec_f32_scaled"
BATCHED_MATVEC_SCALED_OP_ID = "vyre-libs::quant::int4_batched_matvec_f32_scaled"
BATCHED_MATMUL_SCALED_OP_ID = "vyre-libs::quant::int4_batched_matmul_f32_scaled"
BATCHED_MATMUL_TOP1_SCALED_OP_ID = "vyre-libs::quant::int4_batched_matmul_top1_f32_scaled"

# The Region generators: vyre-libs' wrappers delegate to these vyre-primitives programs.
_PRIM = "vyre-primitives::math::quantized::"
I4_DOT_I32_OP_ID = _PRIM + "i4x8_dot_i32"
I4_DOT_F32_SCALED_OP_ID = _PRIM + "i4x8_dot_f32_scaled"
I4_MATVEC_F32_SCALED_OP_ID = _PRIM + "i4x8_matvec_f32_scaled"
I4_BATCHED_MATVEC_F32_SCALED_OP_ID = _PRIM + "i4x8_batched_matvec_f32_scaled"
I4_BATCHED_MATMUL_F32_SCALED_OP_ID = _PRIM + "i4x8_batched_matmul_f32_scaled"
I4_BATCHED_MATMUL_TOP1_F32_SCALED_OP_ID = _PRIM + "i4x8_batched_matmul_top1_f32_scaled"

# 4 ULP: elementary f32 ops only (vyre's program budget; lane*lane sums exact, x and scale products round).
ULP = 4

LANES_PER_WORD = 8
F32_MIN = -3.4028234663852886e38  # f32::MIN, the top-1 sentinel


def i4_packed_words(lane_count: int) -> int:
    """Words holding ``lane_count`` packed INT4 lanes (a partial last word counts)."""
    return -(-lane_count // LANES_PER_WORD)


def _need_positive(op: str, **dims: int) -> None:
    bad = {k: v for k, v in dims.items() if v <= 0}
    if bad:
        raise OpParamError(f"{op}: {bad} must be > 0. Fix: pass positive {', '.join(dims)}.")


def _nibble(buf: str, word: Expr, shift: Expr) -> Expr:
    return Expr.bitand(Expr.shr(Expr.load(buf, word), shift), Expr.u32(0xF))


def signed_i4_i32(nibble: Expr) -> Expr:
    """Sign-extend a 4-bit code (u32 0..15) to i32: ``n`` if bit 3 is clear, else ``n - 16``."""
    return Expr.select(Expr.eq(Expr.bitand(nibble, Expr.u32(0x8)), Expr.u32(0)),
                       Expr.cast(DataType.I32, nibble), Expr.sub(Expr.cast(DataType.I32, nibble), Expr.i32(16)))


def signed_i4_f32(nibble: Expr) -> Expr:
    """The same value as an f32 (both arms exact)."""
    return Expr.select(Expr.eq(Expr.bitand(nibble, Expr.u32(0x8)), Expr.u32(0)),
                       Expr.cast(DataType.F32, nibble), Expr.sub(Expr.cast(DataType.F32, nibble), Expr.f32(16.0)))


def _lane_split(p: str, lane: Expr, word_base: dict[str, Expr]) -> list[Node]:
    """``{p}_{key}_word = base + lane/8`` per packed operand and ``{p}_shift = (lane%8)*4``."""
    nodes = [Node.let_bind(f"{p}_{key}_word", Expr.add(base, Expr.div(lane, Expr.u32(LANES_PER_WORD))))
             for key, base in word_base.items()]
    return nodes + [Node.let_bind(f"{p}_shift", Expr.mul(Expr.rem(lane, Expr.u32(LANES_PER_WORD)), Expr.u32(4)))]


def _packed_pair_loop(p: str, counter: str, n: int, a: str, a_base: Expr, b: str, b_base: Expr) -> Node:
    """``for k < n: {p}_acc += f32(a[k]) * f32(b[k])`` over two packed INT4 operands."""
    v, k = Expr.var, Expr.var(counter)
    return Node.loop_for(counter, Expr.u32(0), Expr.u32(n), [
        *_lane_split(p, k, {"weight": a_base, "activation": b_base}),
        Node.let_bind(f"{p}_weight_nibble", _nibble(a, v(f"{p}_weight_word"), v(f"{p}_shift"))),
        Node.let_bind(f"{p}_activation_nibble", _nibble(b, v(f"{p}_activation_word"), v(f"{p}_shift"))),
        Node.let_bind(f"{p}_weight", signed_i4_f32(v(f"{p}_weight_nibble"))),
        Node.let_bind(f"{p}_activation", signed_i4_f32(v(f"{p}_activation_nibble"))),
        Node.assign(f"{p}_acc", Expr.add(v(f"{p}_acc"), Expr.mul(v(f"{p}_weight"), v(f"{p}_activation")))),
    ])


# ---------------------------------------------------------------- dot products
def _dot(op: str, generator: str, lhs_packed: str, rhs_packed: str, lane_count: int, zero: Expr,
         lane: Callable[[Expr], Expr], extra: list[BufferDecl], out: str, out_dtype: DataType,
         result: Expr) -> Program:
    _need_positive(op, lane_count=lane_count)
    v, k = Expr.var, Expr.var("i4_dot_lane")
    words = i4_packed_words(lane_count)
    loop = Node.loop_for("i4_dot_lane", Expr.u32(0), Expr.u32(lane_count), [
        Node.let_bind("i4_dot_word_index", Expr.div(k, Expr.u32(LANES_PER_WORD))),
        Node.let_bind("i4_dot_shift", Expr.mul(Expr.rem(k, Expr.u32(LANES_PER_WORD)), Expr.u32(4))),
        Node.let_bind("i4_dot_lhs_nibble", _nibble(lhs_packed, v("i4_dot_word_index"), v("i4_dot_shift"))),
        Node.let_bind("i4_dot_rhs_nibble", _nibble(rhs_packed, v("i4_dot_word_index"), v("i4_dot_shift"))),
        Node.let_bind("i4_dot_lhs", lane(v("i4_dot_lhs_nibble"))),
        Node.let_bind("i4_dot_rhs", lane(v("i4_dot_rhs_nibble"))),
        Node.assign("i4_dot_acc", Expr.add(v("i4_dot_acc"), Expr.mul(v("i4_dot_lhs"), v("i4_dot_rhs")))),
    ])
    # One invocation does the whole sequential sum (vyre: `if gid.x == 0`, workgroup [1,1,1]).
    body = [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [
        Node.let_bind("i4_dot_acc", zero), loop, Node.store(out, Expr.u32(0), result)])]
    buffers = [ro_decl(lhs_packed, 0, words, DataType.U32),
               ro_decl(rhs_packed, 1, words, DataType.U32),
               *extra, out_decl(out, 2 + len(extra), 1, out_dtype)]
    return Program.wrapped(buffers, (1, 1, 1), [wrap_anonymous(generator, body)])


def int4_dot_i32(lhs_packed: str, rhs_packed: str, out: str, lane_count: int) -> Program:
    """``out[0] = sum_k lhs[k] * rhs[k]`` over signed INT4 lanes, wrapping i32."""
    return _dot(DOT_OP_ID, I4_DOT_I32_OP_ID, lhs_packed, rhs_packed, lane_count, Expr.i32(0),
                signed_i4_i32, [], out, DataType.I32, Expr.var("i4_dot_acc"))


def int4_dot_f32_scaled(lhs_packed: str, rhs_packed: str, lhs_scale: str, rhs_scale: str, out: str,
                        lane_count: int) -> Program:
    """``out[0] = (f32 dot * lhs_scale[0]) * rhs_scale[0]``."""
    scaled = Expr.mul(Expr.mul(Expr.var("i4_dot_acc"), Expr.load(lhs_scale, Expr.u32(0))),
                      Expr.load(rhs_scale, Expr.u32(0)))
    scales = [ro_decl(lhs_scale, 2, 1), ro_decl(rhs_scale, 3, 1)]
    return _dot(DOT_SCALED_OP_ID, I4_DOT_F32_SCALED_OP_ID, lhs_packed, rhs_packed, lane_count, Expr.f32(0.0),
                signed_i4_f32, scales, out, DataType.F32, scaled)


# ---------------------------------------------------------------- matvec (f32 x)
def _matvec_body(weights_packed: str, x: str, row_scales: str, out: str, cols: int, row: Expr,
                 x_base: Expr, out_index: Expr) -> list[Node]:
    v, c = Expr.var, Expr.var("i4_matvec_col")
    words = i4_packed_words(cols)
    return [
        Node.let_bind("i4_matvec_row", row),
        Node.let_bind("i4_matvec_x_base", x_base),
        Node.let_bind("i4_matvec_out_index", out_index),
        Node.let_bind("i4_matvec_acc", Expr.f32(0.0)),
        Node.loop_for("i4_matvec_col", Expr.u32(0), Expr.u32(cols), [
            Node.let_bind("i4_matvec_word_index", Expr.add(Expr.mul(v("i4_matvec_row"), Expr.u32(words)),
                                                           Expr.div(c, Expr.u32(LANES_PER_WORD)))),
            Node.let_bind("i4_matvec_shift", Expr.mul(Expr.rem(c, Expr.u32(LANES_PER_WORD)), Expr.u32(4))),
            Node.let_bind("i4_matvec_nibble", _nibble(weights_packed, v("i4_matvec_word_index"), v("i4_matvec_shift"))),
            Node.let_bind("i4_matvec_weight", signed_i4_f32(v("i4_matvec_nibble"))),
            Node.let_bind("i4_matvec_x_index", Expr.add(v("i4_matvec_x_base"), c)),
            Node.assign("i4_matvec_acc", Expr.add(v("i4_matvec_acc"), Expr.mul(
                v("i4_matvec_weight"), Expr.load(x, v("i4_matvec_x_index"))))),
        ]),
        Node.store(out, v("i4_matvec_out_index"),
                   Expr.mul(v("i4_matvec_acc"), Expr.load(row_scales, v("i4_matvec_row")))),
    ]


def _matvec_buffers(weights_packed: str, x: str, row_scales: str, out: str, x_count: int, rows: int,
                    cols: int, out_count: int) -> list[BufferDecl]:
    return [ro_decl(weights_packed, 0, rows * i4_packed_words(cols), DataType.U32), ro_decl(x, 1, x_count),
            ro_decl(row_scales, 2, rows), out_decl(out, 3, out_count)]


def int4_matvec_f32_scaled(weights_packed: str, x: str, row_scales: str, out: str, rows: int,
                           cols: int) -> Program:
    """``out[r] = (sum_c w[r,c] * x[c]) * row_scales[r]``, one invocation per row."""
    _need_positive(MATVEC_SCALED_OP_ID, rows=rows, cols=cols)
    row = Expr.gid_x()
    body = _matvec_body(weights_packed, x, row_scales, out, cols, row, Expr.u32(0), row)
    return Program.wrapped(_matvec_buffers(weights_packed, x, row_scales, out, cols, rows, cols, rows), (64, 1, 1),
                           [wrap_anonymous(I4_MATVEC_F32_SCALED_OP_ID,
                                           [Node.if_then(Expr.lt(row, Expr.u32(rows)), body)])])


def int4_batched_matvec_f32_scaled(weights_packed: str, x_batches: str, row_scales: str, out: str,
                                   batch: int, rows: int, cols: int) -> Program:
    """``out[b*rows + r] = (sum_c w[r,c] * x[b*cols + c]) * row_scales[r]``, one invocation per output."""
    _need_positive(BATCHED_MATVEC_SCALED_OP_ID, batch=batch, rows=rows, cols=cols)
    item, total = Expr.gid_x(), batch * rows
    body = _matvec_body(weights_packed, x_batches, row_scales, out, cols, Expr.rem(item, Expr.u32(rows)),
                        Expr.mul(Expr.div(item, Expr.u32(rows)), Expr.u32(cols)), item)
    return Program.wrapped(
        _matvec_buffers(weights_packed, x_batches, row_scales, out, batch * cols, rows, cols, total), (64, 1, 1),
        [wrap_anonymous(I4_BATCHED_MATVEC_F32_SCALED_OP_ID, [Node.if_then(Expr.lt(item, Expr.u32(total)), body)])])


# ---------------------------------------------------------------- packed activations
def _matmul_buffers(weights_packed: str, activations: str, row_scales: str, batch_scales: str, out: str,
                    batch: int, rows: int, cols: int, out_count: int) -> list[BufferDecl]:
    words = i4_packed_words(cols)
    return [ro_decl(weights_packed, 0, rows * words, DataType.U32),
            ro_decl(activations, 1, batch * words, DataType.U32), ro_decl(row_scales, 2, rows),
            ro_decl(batch_scales, 3, batch), out_decl(out, 4, out_count)]


def _scaled(p: str, row_scales: str, batch_scales: str) -> Expr:
    """``({p}_acc * row_scales[row]) * batch_scales[batch]`` (vyre's association)."""
    v = Expr.var
    return Expr.mul(Expr.mul(v(f"{p}_acc"), Expr.load(row_scales, v(f"{p}_row"))),
                    Expr.load(batch_scales, v(f"{p}_batch")))


def int4_batched_matmul_f32_scaled(weights_packed: str, activation_batches_packed: str, row_scales: str,
                                   batch_scales: str, out: str, batch: int, rows: int, cols: int) -> Program:
    """``out[b*rows + r] = ((sum_c w[r,c] * a[b,c]) * row_scales[r]) * batch_scales[b]``."""
    _need_positive(BATCHED_MATMUL_SCALED_OP_ID, batch=batch, rows=rows, cols=cols)
    v, item, total, words = Expr.var, Expr.gid_x(), batch * rows, i4_packed_words(cols)
    body = [
        Node.let_bind("i4_matmul_row", Expr.rem(item, Expr.u32(rows))),
        Node.let_bind("i4_matmul_batch", Expr.div(item, Expr.u32(rows))),
        Node.let_bind("i4_matmul_out_index", item),
        Node.let_bind("i4_matmul_acc", Expr.f32(0.0)),
        _packed_pair_loop("i4_matmul", "i4_matmul_col", cols,
                          weights_packed, Expr.mul(v("i4_matmul_row"), Expr.u32(words)),
                          activation_batches_packed, Expr.mul(v("i4_matmul_batch"), Expr.u32(words))),
        Node.store(out, v("i4_matmul_out_index"), _scaled("i4_matmul", row_scales, batch_scales)),
    ]
    return Program.wrapped(
        _matmul_buffers(weights_packed, activation_batches_packed, row_scales, batch_scales, out, batch, rows,
                        cols, total), (64, 1, 1),
        [wrap_anonymous(I4_BATCHED_MATMUL_F32_SCALED_OP_ID, [Node.if_then(Expr.lt(item, Expr.u32(total)), body)])])


def int4_batched_matmul_top1_f32_scaled(weights_packed: str, activation_batches_packed: str, row_scales: str,
                                        batch_scales: str, out: str, batch: int, rows: int, cols: int) -> Program:
    """Per batch item: the best row score (first maximum, strict ``<``) and its row index as f32,
    ``out = [scores[0..batch], f32(indices)[0..batch]]``."""
    _need_positive(BATCHED_MATMUL_TOP1_SCALED_OP_ID, batch=batch, rows=rows, cols=cols)
    v, b, words = Expr.var, Expr.gid_x(), i4_packed_words(cols)
    row_loop = Node.loop_for("i4_top1_row", Expr.u32(0), Expr.u32(rows), [
        Node.let_bind("i4_top1_acc", Expr.f32(0.0)),
        _packed_pair_loop("i4_top1", "i4_top1_col", cols,
                          weights_packed, Expr.mul(v("i4_top1_row"), Expr.u32(words)),
                          activation_batches_packed, Expr.mul(v("i4_top1_batch"), Expr.u32(words))),
        Node.let_bind("i4_top1_score", _scaled("i4_top1", row_scales, batch_scales)),
        # strict: an equal later score does not replace the earlier row; NaN compares false
        Node.if_then(Expr.lt(v("i4_top1_best_score"), v("i4_top1_score")), [
            Node.assign("i4_top1_best_score", v("i4_top1_score")),
            Node.assign("i4_top1_best_index", v("i4_top1_row")),
        ]),
    ])
    body = [
        Node.let_bind("i4_top1_batch", b),
        Node.let_bind("i4_top1_best_score", Expr.f32(F32_MIN)),
        Node.let_bind("i4_top1_best_index", Expr.u32(0)),
        row_loop,
        Node.store(out, v("i4_top1_batch"), v("i4_top1_best_score")),
        Node.store(out, Expr.add(Expr.u32(batch), v("i4_top1_batch")),
                   Expr.cast(DataType.F32, v("i4_top1_best_index"))),
    ]
    return Program.wrapped(
        _matmul_buffers(weights_packed, activation_batches_packed, row_scales, batch_scales, out, batch, rows,
                        cols, 2 * batch), (64, 1, 1),
        [wrap_anonymous(I4_BATCHED_MATMUL_TOP1_F32_SCALED_OP_ID, [Node.if_then(Expr.lt(b, Expr.u32(batch)), body)])])


# ---------------------------------------------------------------- registrations (vyre's vectors)
def _build_dot_scaled(lane_count: int = 8) -> Program:
    return int4_dot_f32_scaled("lhs", "rhs", "lhs_scale", "rhs_scale", "out", lane_count)


def _build_matvec(rows: int = 2, cols: int = 8) -> Program:
    return int4_matvec_f32_scaled("weights", "x", "scales", "out", rows, cols)


def _build_batched_matvec(batch: int = 2, rows: int = 2, cols: int = 8) -> Program:
    return int4_batched_matvec_f32_scaled("weights", "x", "scales", "out", batch, rows, cols)


def _build_matmul(batch: int = 2, rows: int = 2, cols: int = 8) -> Program:
    return int4_batched_matmul_f32_scaled("weights", "activations", "row_scales", "batch_scales", "out",
                                          batch, rows, cols)


def _build_top1(batch: int = 2, rows: int = 2, cols: int = 8) -> Program:
    return int4_batched_matmul_top1_f32_scaled("weights", "activations", "row_scales", "batch_scales", "out",
                                               batch, rows, cols)


# 0xCDEF4321 = lanes [1,2,3,4,-1,-2,-3,-4]; 0xFEDC1234 = [4,3,2,1,-4,-3,-2,-1]: dot 40, each row sum 0.
LHS_WORD, RHS_WORD = 0xCDEF_4321, 0xFEDC_1234

ENTRY_DOT_SCALED = register_op(
    DOT_SCALED_OP_ID, _build_dot_scaled,
    test_inputs=lambda: [[pack_u32_slice([LHS_WORD]), pack_u32_slice([RHS_WORD]), pack_f32_slice([0.5]),
                          pack_f32_slice([0.25])]],
    expected_output=lambda: [[pack_f32_slice([5.0])]],  # 40 * 0.5 * 0.25
    category="nn", ulp=ULP,
    bench=dict(lane_count=4096),
)

ENTRY_MATVEC = register_op(
    MATVEC_SCALED_OP_ID, _build_matvec,
    test_inputs=lambda: [[pack_u32_slice([LHS_WORD, RHS_WORD]), pack_f32_slice([1.0] * 8),
                          pack_f32_slice([0.5, 0.25])]],
    expected_output=lambda: [[pack_f32_slice([0.0, 0.0])]],
    category="nn", ulp=ULP,
    bench=dict(rows=4096, cols=4096),
)

ENTRY_BATCHED_MATVEC = register_op(
    BATCHED_MATVEC_SCALED_OP_ID, _build_batched_matvec,
    test_inputs=lambda: [[pack_u32_slice([LHS_WORD, RHS_WORD]), pack_f32_slice([1.0] * 16),
                          pack_f32_slice([0.5, 0.25])]],
    expected_output=lambda: [[pack_f32_slice([0.0, 0.0, 0.0, 0.0])]],
    category="nn", ulp=ULP,
    bench=dict(batch=16, rows=4096, cols=4096),
)

def _zero_matmul_inputs() -> list:
    """vyre's batched matmul vector (plain and top-1): zero weights and activations, so every score is 0."""
    return [[pack_u32_slice([0, 0]), pack_u32_slice([0, 0]), pack_f32_slice([0.5, 0.25]),
             pack_f32_slice([0.125, 0.25])]]


ENTRY_MATMUL = register_op(
    BATCHED_MATMUL_SCALED_OP_ID, _build_matmul,
    test_inputs=_zero_matmul_inputs,
    expected_output=lambda: [[pack_f32_slice([0.0, 0.0, 0.0, 0.0])]],
    category="nn", ulp=ULP,
    bench=dict(batch=16, rows=4096, cols=4096),
)

ENTRY_TOP1 = register_op(
    BATCHED_MATMUL_TOP1_SCALED_OP_ID, _build_top1,
    test_inputs=_zero_matmul_inputs,
    # all scores 0.0: row 0 wins the tie, so [score0, score1, idx0, idx1] = [0, 0, 0, 0]
    expected_output=lambda: [[pack_f32_slice([0.0, 0.0, 0.0, 0.0])]],
    category="nn", ulp=ULP,
    bench=dict(batch=16, rows=512, cols=1024),
)
