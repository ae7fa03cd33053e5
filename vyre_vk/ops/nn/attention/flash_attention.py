"""`vyre-libs::nn::flash_attention`: single-head attention ``softmax(q k^T / sqrt(D)) v`` with an
online (running max / running sum) softmax, one invocation per query row (port of
vyre-libs/src/nn/attention/flash_attention.rs with planner.rs ``plan_flash_attention_scalar``).

``S <= 8`` and ``D <= 16`` reuse attention's direct program (generator nn::flash_attention).
Otherwise: workgroup [128,1,1], ``row = gid.x < S``; per key j: ``score = bounded_score(dot*scale)``
(sequential dot), ``m' = select(score > m, score, m)`` from ``f32::MIN``,
``r = exp(bounded_exp_arg(m - m'))``, ``p = exp(bounded_exp_arg(score - m'))``, ``l' = r*l + p``,
``flash_o[lane*D + t] = r * (j == 0 ? 0 : flash_o[lane*D + t]) + p * v[j, t]``; finally
``out[row, t] = flush_tiny(flash_o[lane*D + t] / positive_denominator(l))``. Buffers q, k, v ro
(0-2, S*D), workgroup ``flash_o`` (f32, 128*D), out (3, S*D).

Example::

    >>> p = flash_attention("q", "k", "v", "out", 9, 1)
    >>> p.workgroup_size, [(b.name, b.count) for b in p.buffers][3]
    ((128, 1, 1), ('flash_o', 128))
"""
from __future__ import annotations

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...primitives import F32_MIN, flush_tiny
from ...registry import register_op
from ...wire import pack_f32_slice
from .attention import direct_attention_program
from .gqa_attention import inv_sqrt_scale
from .stability import bounded_exp_arg, bounded_score, positive_denominator
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::flash_attention"
SCALAR_ONLINE_WORKGROUP_LANES = 128
# 128 ULP: the program uses Exp (vyre's transcendental budget; no explicit window).
ULP = 128


def flash_attention(q: str, k: str, v: str, out: str, s: int, d: int) -> Program:
    if s == 0:
        raise OpParamError("Fix: flash_attention s=0 is invalid: empty sequence")
    if d == 0:
        raise OpParamError("Fix: flash_attention d=0 is invalid: empty head dimension")
    if s <= 8 and d <= 16:
        return direct_attention_program(q, k, v, out, s, d, OP_ID)
    lanes = SCALAR_ONLINE_WORKGROUP_LANES
    elements = s * d
    scale = Expr.f32(inv_sqrt_scale(d))

    def scratch(t: Expr) -> Expr:
        return Expr.add(Expr.mul(Expr.var("flash_local"), Expr.u32(d)), t)

    j, t = Expr.var("j"), Expr.var("t")
    dot_term = Expr.mul(Expr.load(q, Expr.add(Expr.mul(Expr.var("row"), Expr.u32(d)), Expr.var("k_idx"))),
                        Expr.load(k, Expr.add(Expr.mul(j, Expr.u32(d)), Expr.var("k_idx"))))
    m, m_new, score = Expr.var("flash_m"), Expr.var("flash_m_new"), Expr.var("score")
    per_row = [
        Node.let_bind("flash_m", Expr.f32(F32_MIN)),
        Node.let_bind("flash_l", Expr.f32(0.0)),
        Node.loop_for("j", Expr.u32(0), Expr.u32(s), [
            Node.let_bind("dot_val", Expr.f32(0.0)),
            Node.loop_for("k_idx", Expr.u32(0), Expr.u32(d), [Node.assign("dot_val", Expr.add(Expr.var("dot_val"), dot_term))]),
            Node.let_bind("score", bounded_score(Expr.mul(Expr.var("dot_val"), scale))),
            Node.let_bind("flash_m_new", Expr.select(Expr.gt(score, m), score, m)),
            Node.let_bind("flash_rescale", Expr.exp(bounded_exp_arg(Expr.sub(m, m_new)))),
            Node.let_bind("flash_prob", Expr.exp(bounded_exp_arg(Expr.sub(score, m_new)))),
            Node.let_bind("flash_l_new", Expr.add(Expr.mul(Expr.var("flash_rescale"), Expr.var("flash_l")),
                                                  Expr.var("flash_prob"))),
            Node.loop_for("t", Expr.u32(0), Expr.u32(d), [Node.store("flash_o", scratch(t), Expr.add(
                Expr.mul(Expr.var("flash_rescale"),
                         Expr.select(Expr.eq(j, Expr.u32(0)), Expr.f32(0.0), Expr.load("flash_o", scratch(t)))),
                Expr.mul(Expr.var("flash_prob"), Expr.load(v, Expr.add(Expr.mul(j, Expr.u32(d)), t)))))]),
            Node.assign("flash_m", m_new),
            Node.assign("flash_l", Expr.var("flash_l_new")),
        ]),
        Node.let_bind("flash_denom", positive_denominator(Expr.var("flash_l"))),
        Node.loop_for("out_t", Expr.u32(0), Expr.u32(d), [Node.store(
            out, Expr.add(Expr.mul(Expr.var("row"), Expr.u32(d)), Expr.var("out_t")),
            flush_tiny(Expr.div(Expr.load("flash_o", scratch(Expr.var("out_t"))), Expr.var("flash_denom"))))]),
    ]
    body = [
        Node.let_bind("row", Expr.gid_x()),
        Node.let_bind("flash_local", Expr.local_x()),
        Node.if_then(Expr.lt(Expr.var("row"), Expr.u32(s)), per_row),
    ]
    return Program.wrapped(
        [ro_decl(q, 0, elements), ro_decl(k, 1, elements), ro_decl(v, 2, elements),
         BufferDecl.workgroup("flash_o", lanes * d, DataType.F32), out_decl(out, 3, elements)],
        (lanes, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(seq_len: int = 9, head_dim: int = 1) -> Program:
    return flash_attention("q", "k", "v", "out", seq_len, head_dim)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([0.0] * 9), pack_f32_slice([0.0] * 9),
                          pack_f32_slice([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]),
                          bytes(36)]],  # out placeholder (legacy form)
    # uniform scores: every row is mean(v) = 4.0
    expected_output=lambda: [[pack_f32_slice([4.0] * 9)]],
    category="nn", ulp=ULP,
    bench=dict(seq_len=1024, head_dim=64),
)
