"""`vyre-libs::nn::gqa_attention`: grouped-query attention, one invocation per Q element
(port of vyre-libs/src/nn/attention/gqa_attention.rs). No causal mask.

``flat = gid.x < q_total``; ``q_head = flat / (S*D)``, ``row``/``col`` its query position and
channel, ``kv_head = q_head / (n_q_heads / n_kv_heads)``; dots
``dot_j = fma(q[row, d], k[kv_head, j, d], dot)`` over d (straight-line when D <= 8, else a loop),
``scale = 1 / sqrt(f32(D))`` folded on the host in f32. Three passes (child Regions of
vyre-primitives' attention max/sum/write pass ids), each recomputing the dots:
``max_score`` from ``f32::MIN`` (NaN sticks; scores via ``bounded_score``),
``sum_exp += exp(bounded_exp_arg(dot*scale - max))``, ``denom = positive_denominator(sum_exp)``,
``val = fma(exp(..)/denom, v[kv_head, j, col], val)``; ``out[flat] = flush_tiny(val)``.
Buffers q ro (0, n_q*S*D), k ro (1, n_kv*S*D), v ro (2, n_kv*S*D), output (3, n_q*S*D);
workgroup [64,1,1].

Example::

    >>> [b.name for b in gqa_attention("q", "k", "v", "out", 2, 1, 2, 2).buffers]
    ['q', 'k', 'v', 'out']
"""
from __future__ import annotations

import numpy as np

from ....ir import Expr, Node, Program, wrap_anonymous, wrap_child
from ...builder import out_decl, ro_decl
from ...primitives import F32_MIN, flush_tiny
from ...registry import register_op
from ...wire import pack_f32_slice
from .stability import (ATTENTION_MAX_PASS_OP_ID, ATTENTION_SUM_PASS_OP_ID, ATTENTION_WRITE_PASS_OP_ID,
                        bounded_exp_arg, bounded_score, positive_denominator)
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::gqa_attention"
# 128 ULP: the program uses Exp (vyre: max(explicit 4, transcendental budget 128)).
ULP = 128


def inv_sqrt_scale(head_dim: int) -> float:
    """``1.0f32 / (head_dim as f32).sqrt()`` as vyre folds it on the host (two f32 roundings)."""
    return float(np.float32(1.0) / np.sqrt(np.float32(head_dim)))


def gqa_attention(q: str, k: str, v_buf: str, output: str, n_q_heads: int, n_kv_heads: int,
                  seq_len: int, head_dim: int) -> Program:
    if 0 in (n_q_heads, n_kv_heads, seq_len, head_dim):
        raise OpParamError("Fix: gqa_attention requires non-zero dims")
    if n_q_heads % n_kv_heads != 0:
        raise OpParamError("Fix: n_q_heads must be multiple of n_kv_heads")
    group = n_q_heads // n_kv_heads
    q_total, per_head = n_q_heads * seq_len * head_dim, seq_len * head_dim
    kv_total = n_kv_heads * seq_len * head_dim
    scale = Expr.f32(inv_sqrt_scale(head_dim))

    flat = Expr.var("flat")
    q_head = Expr.div(flat, Expr.u32(per_head))
    pos_in_head = Expr.sub(flat, Expr.mul(q_head, Expr.u32(per_head)))
    row = Expr.div(pos_in_head, Expr.u32(head_dim))
    col = Expr.sub(pos_in_head, Expr.mul(row, Expr.u32(head_dim)))
    kv_base = Expr.mul(Expr.div(q_head, Expr.u32(group)), Expr.u32(per_head))
    q_row_base = Expr.add(Expr.mul(q_head, Expr.u32(per_head)), Expr.mul(row, Expr.u32(head_dim)))
    key_row = Expr.add(kv_base, Expr.mul(Expr.var("j"), Expr.u32(head_dim)))

    def dot_loop(name: str) -> list:
        def step(d: Expr) -> Node:
            return Node.assign(name, Expr.fma(Expr.load(q, Expr.add(q_row_base, d)),
                                              Expr.load(k, Expr.add(key_row, d)), Expr.var(name)))
        body = [Node.let_bind(name, Expr.f32(0.0))]
        if head_dim <= 8:
            body += [step(Expr.u32(lane)) for lane in range(head_dim)]
        else:
            body.append(Node.loop_for("d", Expr.u32(0), Expr.u32(head_dim), [step(Expr.var("d"))]))
        return body

    def exp_of(name: str) -> Expr:
        return Expr.exp(bounded_exp_arg(Expr.sub(Expr.mul(Expr.var(name), scale), Expr.var("max_score"))))

    score, max_score = Expr.var("score"), Expr.var("max_score")
    max_pass = [Node.loop_for("j", Expr.u32(0), Expr.u32(seq_len), dot_loop("dot") + [
        Node.let_bind("score", bounded_score(Expr.mul(Expr.var("dot"), scale))),
        Node.assign("max_score", Expr.select(Expr.is_nan(score), score,
                                             Expr.select(Expr.gt(score, max_score), score, max_score))),
    ])]
    sum_pass = [Node.loop_for("j", Expr.u32(0), Expr.u32(seq_len), dot_loop("dot2") + [
        Node.assign("sum_exp", Expr.add(Expr.var("sum_exp"), exp_of("dot2"))),
    ])]
    write_pass = [
        Node.let_bind("val", Expr.f32(0.0)),
        Node.loop_for("j", Expr.u32(0), Expr.u32(seq_len), dot_loop("dot3") + [
            Node.let_bind("w", Expr.div(exp_of("dot3"), Expr.var("denom"))),
            Node.assign("val", Expr.fma(Expr.var("w"), Expr.load(v_buf, Expr.add(key_row, col)), Expr.var("val"))),
        ]),
        Node.store(output, flat, flush_tiny(Expr.var("val"))),
    ]
    body = [
        Node.let_bind("flat", Expr.gid_x()),
        Node.if_then(Expr.lt(flat, Expr.u32(q_total)), [
            Node.let_bind("max_score", Expr.f32(F32_MIN)),
            Node.let_bind("sum_exp", Expr.f32(0.0)),
            wrap_child(ATTENTION_MAX_PASS_OP_ID, OP_ID, max_pass),
            wrap_child(ATTENTION_SUM_PASS_OP_ID, OP_ID, sum_pass),
            Node.let_bind("denom", positive_denominator(Expr.var("sum_exp"))),
            wrap_child(ATTENTION_WRITE_PASS_OP_ID, OP_ID, write_pass),
        ]),
    ]
    return Program.wrapped(
        [ro_decl(q, 0, q_total), ro_decl(k, 1, kv_total), ro_decl(v_buf, 2, kv_total), out_decl(output, 3, q_total)],
        (64, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n_q_heads: int = 2, n_kv_heads: int = 1, seq_len: int = 2, head_dim: int = 2) -> Program:
    return gqa_attention("q", "k", "v", "out", n_q_heads, n_kv_heads, seq_len, head_dim)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]),  # q
                          pack_f32_slice([1.0, 0.0, 0.0, 1.0]),                      # k
                          pack_f32_slice([10.0, 20.0, 30.0, 40.0]),                  # v
                          bytes(32)]],                                               # out (legacy form)
    # vyre lists the bytes: [16.604769, 26.60477, 23.395231, 33.39523, 23.395231, 33.39523, 16.604769, 26.60477]
    expected_output=lambda: [[bytes([145, 214, 132, 65, 146, 214, 212, 65, 111, 41, 187, 65, 183, 148, 5, 66,
                                     111, 41, 187, 65, 183, 148, 5, 66, 145, 214, 132, 65, 146, 214, 212, 65])]],
    category="nn", ulp=ULP,
    bench=dict(n_q_heads=8, n_kv_heads=2, seq_len=512, head_dim=64),
)
