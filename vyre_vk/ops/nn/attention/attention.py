"""`vyre-libs::nn::attention`: single-head scaled dot-product attention over ``[S, D]`` f32
tensors, ``out = softmax(q k^T / sqrt(D)) v`` without a mask (port of
vyre-libs/src/nn/attention/attention.rs). ``scale = 1 / sqrt(f32(D))`` is folded on the host in f32.

Two programs, chosen by shape as in vyre:

- **direct** (``S <= 8`` and ``D <= 16``; the registered 2x4 vector): invocation 0 alone, all
  straight-line: ``score_rc = bounded_score((((0 + q_r0 k_c0) + q_r1 k_c1) + ...) * scale)``,
  ``max_r`` = a NaN-sticky select chain from ``f32::MIN``, ``denom_r = positive_denominator(
  sum_c exp(bounded_exp_arg(score_rc - max_r)))``, ``out[r, d] = flush_tiny(sum_c
  (exp(..)/denom_r) * v[c, d])``. Buffers q, k, v ro (0-2, S*D), out (3, S*D); workgroup [1,1,1].
- **tiled** (otherwise): workgroup [256,1,1], one workgroup per (row, 256-wide channel block)
  (``blocks_per_row = ceil(D/256)``); lane 0 computes the row max and then the exp sum into
  ``attention_scratch[0..2]`` (workgroup, max(256, 2) floats), barrier, every lane with
  ``dim < D`` recomputes the scores and accumulates ``weight * v[j, dim]``. out is padded to
  ``S*blocks_per_row*256`` floats (so the inferred grid is one workgroup per block) and read back
  over ``0..S*D*4`` bytes.

Example::

    >>> [b.name for b in attention("q", "k", "v", "out", 2, 4).buffers], attention("q", "k", "v", "out", 9, 4).workgroup_size
    (['q', 'k', 'v', 'out'], (256, 1, 1))
"""
from __future__ import annotations

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...primitives import F32_MIN, flush_tiny
from ...registry import register_op
from ...wire import pack_f32_slice
from .gqa_attention import inv_sqrt_scale
from .stability import bounded_exp_arg, bounded_score, positive_denominator
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::attention"
ATTENTION_TILE = 256
# 128 ULP: the program uses Exp (vyre: max(explicit 4, transcendental budget 128)).
ULP = 128


def _nan_sticky_max(score: Expr, current: Expr) -> Expr:
    return Expr.select(Expr.is_nan(score), score, Expr.select(Expr.gt(score, current), score, current))


def direct_attention_program(q: str, k: str, v: str, out: str, s: int, d: int, generator: str = OP_ID) -> Program:
    scale = Expr.f32(inv_sqrt_scale(d))
    nodes = []
    for row in range(s):
        score_vars = []
        for col in range(s):
            dot = Expr.f32(0.0)
            for kk in range(d):
                dot = Expr.add(dot, Expr.mul(Expr.load(q, Expr.u32(row * d + kk)), Expr.load(k, Expr.u32(col * d + kk))))
            name = f"direct_score_{row}_{col}"
            nodes.append(Node.let_bind(name, bounded_score(Expr.mul(dot, scale))))
            score_vars.append(Expr.var(name))
        # vyre nests the max chain and repeats every exp inline in each output sum; both are pure,
        # so Let-binding them (linear-size program, same values and operation order) is equivalent.
        max_val = Expr.f32(F32_MIN)
        for col, sv in enumerate(score_vars):
            nodes.append(Node.let_bind(f"direct_max_{row}_{col}", _nan_sticky_max(sv, max_val)))
            max_val = Expr.var(f"direct_max_{row}_{col}")
        nodes.append(Node.let_bind(f"direct_max_{row}", max_val))
        max_expr = Expr.var(f"direct_max_{row}")
        exps = []
        for col, sv in enumerate(score_vars):
            nodes.append(Node.let_bind(f"direct_exp_{row}_{col}", Expr.exp(bounded_exp_arg(Expr.sub(sv, max_expr)))))
            exps.append(Expr.var(f"direct_exp_{row}_{col}"))
        denom = Expr.f32(0.0)
        for e in exps:
            denom = Expr.add(denom, e)
        nodes.append(Node.let_bind(f"direct_denom_{row}", positive_denominator(denom)))
        denom_expr = Expr.var(f"direct_denom_{row}")
        for dim in range(d):
            accum = Expr.f32(0.0)
            for col, e in enumerate(exps):
                accum = Expr.add(accum, Expr.mul(Expr.div(e, denom_expr), Expr.load(v, Expr.u32(col * d + dim))))
            nodes.append(Node.store(out, Expr.u32(row * d + dim), flush_tiny(accum)))
    elements = s * d
    return Program.wrapped(
        [ro_decl(q, 0, elements), ro_decl(k, 1, elements), ro_decl(v, 2, elements), out_decl(out, 3, elements)],
        (1, 1, 1),
        [wrap_anonymous(generator, [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), nodes)])],
    )


def _score_nodes(q: str, k: str, d: int, scale: Expr) -> list:
    term = Expr.mul(Expr.load(q, Expr.add(Expr.mul(Expr.var("row"), Expr.u32(d)), Expr.var("k_idx"))),
                    Expr.load(k, Expr.add(Expr.mul(Expr.var("j"), Expr.u32(d)), Expr.var("k_idx"))))
    return [
        Node.let_bind("dot_val", Expr.f32(0.0)),
        Node.loop_for("k_idx", Expr.u32(0), Expr.u32(d), [Node.assign("dot_val", Expr.add(Expr.var("dot_val"), term))]),
        Node.let_bind("score", bounded_score(Expr.mul(Expr.var("dot_val"), scale))),
    ]


def tiled_attention_program(q: str, k: str, v: str, out: str, s: int, d: int, tile: int = ATTENTION_TILE) -> Program:
    scale = Expr.f32(inv_sqrt_scale(d))
    elements = s * d
    scratch_count = max(tile, 2)
    blocks_per_row = -(-d // tile)
    total_groups = s * blocks_per_row
    score = Expr.var("score")
    lane0 = Expr.eq(Expr.var("lane"), Expr.u32(0))
    max_row = [Node.let_bind("max_val", Expr.f32(F32_MIN)),
               Node.loop_for("j", Expr.u32(0), Expr.u32(s), _score_nodes(q, k, d, scale) + [
                   Node.assign("max_val", _nan_sticky_max(score, Expr.var("max_val")))]),
               Node.store("attention_scratch", Expr.u32(0), Expr.var("max_val"))]
    sum_row = [Node.let_bind("sum_val", Expr.f32(0.0)),
               Node.loop_for("j", Expr.u32(0), Expr.u32(s), _score_nodes(q, k, d, scale) + [
                   Node.assign("sum_val", Expr.add(Expr.var("sum_val"), Expr.exp(bounded_exp_arg(
                       Expr.sub(score, Expr.load("attention_scratch", Expr.u32(0)))))))]),
               Node.store("attention_scratch", Expr.u32(1), Expr.var("sum_val"))]
    output_lane = [
        Node.let_bind("accum", Expr.f32(0.0)),
        Node.loop_for("j", Expr.u32(0), Expr.u32(s), _score_nodes(q, k, d, scale) + [
            Node.let_bind("weight", Expr.div(Expr.exp(bounded_exp_arg(Expr.sub(score, Expr.var("max_val")))),
                                             Expr.var("denom"))),
            Node.let_bind("value", Expr.load(v, Expr.add(Expr.mul(Expr.var("j"), Expr.u32(d)), Expr.var("dim")))),
            Node.assign("accum", Expr.add(Expr.var("accum"), Expr.mul(Expr.var("weight"), Expr.var("value")))),
        ]),
        Node.store(out, Expr.add(Expr.mul(Expr.var("row"), Expr.u32(d)), Expr.var("dim")), flush_tiny(Expr.var("accum"))),
    ]
    body = [
        Node.let_bind("group", Expr.workgroup_x()),
        Node.let_bind("lane", Expr.local_x()),
        Node.let_bind("row", Expr.div(Expr.var("group"), Expr.u32(blocks_per_row))),
        Node.let_bind("dim_base", Expr.mul(Expr.rem(Expr.var("group"), Expr.u32(blocks_per_row)), Expr.u32(tile))),
        Node.let_bind("dim", Expr.add(Expr.var("dim_base"), Expr.var("lane"))),
        Node.block([Node.if_then(lane0, max_row)]),
        Node.block([Node.if_then(lane0, sum_row)]),
        Node.barrier(),
        Node.let_bind("max_val", Expr.load("attention_scratch", Expr.u32(0))),
        Node.let_bind("denom", positive_denominator(Expr.load("attention_scratch", Expr.u32(1)))),
        Node.block([Node.if_then(Expr.and_(Expr.lt(Expr.var("row"), Expr.u32(s)), Expr.lt(Expr.var("dim"), Expr.u32(d))),
                                 output_lane)]),
    ]
    return Program.wrapped(
        [ro_decl(q, 0, elements), ro_decl(k, 1, elements), ro_decl(v, 2, elements),
         BufferDecl.workgroup("attention_scratch", scratch_count, DataType.F32),
         out_decl(out, 3, total_groups * tile)
         .with_output_byte_range(0, elements * 4)],
        (tile, 1, 1),
        [wrap_anonymous(OP_ID, [Node.if_then(Expr.lt(Expr.workgroup_x(), Expr.u32(total_groups)), body)])],
    )


def attention(q: str, k: str, v: str, out: str, s: int, d: int) -> Program:
    if s == 0 or d == 0:
        raise OpParamError(f"Fix: attention needs a non-empty [S, D] shape; got [{s}, {d}].")
    if s <= 8 and d <= 16:
        return direct_attention_program(q, k, v, out, s, d)
    return tiled_attention_program(q, k, v, out, s, d)


def _build(seq_len: int = 2, head_dim: int = 4) -> Program:
    return attention("q", "k", "v", "out", seq_len, head_dim)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([0.5, -1.0, 1.5, 0.25, -0.75, 0.5, 1.0, -0.5]),   # q
                          pack_f32_slice([1.0, 0.25, -0.5, 1.5, 0.75, -1.25, 0.5, 0.5]),   # k
                          pack_f32_slice([2.0, -1.0, 0.5, 1.25, -0.25, 0.75, 1.5, -0.5]),  # v
                          bytes(512 * 4)]],  # out placeholder (legacy form; vyre sizes it 512 floats, ignored)
    # vyre lists the bytes: [0.2271, 0.3789, 1.2879, -0.1289, 0.6161, 0.0764, 1.1151, 0.1736]
    expected_output=lambda: [[bytes([0x46, 0x9B, 0x68, 0x3E, 0x82, 0xFC, 0xC1, 0x3E, 0xEE, 0xDA, 0xA4, 0x3F,
                                     0x02, 0xF9, 0x03, 0xBE, 0x9C, 0xB5, 0x1D, 0x3F, 0x90, 0x79, 0x9C, 0x3D,
                                     0x33, 0xBB, 0x8E, 0x3F, 0x38, 0xC3, 0x31, 0x3E])]],
    category="nn", ulp=ULP,
    bench=dict(seq_len=1024, head_dim=64),
)
