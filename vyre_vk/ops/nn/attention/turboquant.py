"""`vyre-libs::nn::attention::turboquant`: attention over 3-bit quantised K and V for one query,
``out[dim] = sum_i (q . K_i) * V[i, dim]`` (no softmax, no scale) (port of
vyre-libs/src/nn/attention/turboquant.rs).

Values are 3-bit codes, ten per u32 word: element ``f`` is ``(word[f/10] >> ((f%10)*3)) & 7``,
decoded to f32 through a select chain (0 -> 0.0, ..., 7 -> 7.0). Buffers q ro f32 (0, d_head),
k_packed / v_packed ro u32 (1-2, ceil(seq_len*d_head/10)), out plain ReadWrite f32 (3, d_head).

- **direct** (``seq_len <= 8`` and ``d_head <= 16``; the registered shape): invocation 0,
  straight-line ``acc_dim = ((0 + s_0 V_0d) + s_1 V_1d) + ...`` with ``s_i = ((0 + q_0 K_i0) + ...)``;
  workgroup [1,1,1].
- **loop** (otherwise): one invocation per dim (``gid.x < d_head``), the same sums in loops;
  workgroup [64,1,1].

Example::

    >>> [b.count for b in turboquant_attention("q", "kp", "vp", "out", 2, 2).buffers]
    [2, 1, 1, 2]
"""
from __future__ import annotations

from ....ir import DataType, Expr, Node, Program, wrap_anonymous
from ...builder import ro_decl, rw_decl
from ...registry import register_op
from ...wire import pack_f32_slice, pack_u32_slice

OP_ID = "vyre-libs::nn::attention::turboquant"
# 4 ULP: elementary ops only (integer decode, then mul/add sums; vyre's program budget).
ULP = 4


def unpack_3bit(buf: str, flat: Expr) -> Expr:
    word = Expr.load(buf, Expr.div(flat, Expr.u32(10)))
    shift = Expr.mul(Expr.rem(flat, Expr.u32(10)), Expr.u32(3))
    nib = Expr.bitand(Expr.shr(word, shift), Expr.u32(0x7))
    value = Expr.f32(7.0)
    for code in range(6, -1, -1):
        value = Expr.select(Expr.eq(nib, Expr.u32(code)), Expr.f32(float(code)), value)
    return value


def turboquant_attention(q: str, k_packed: str, v_packed: str, out: str, seq_len: int, d_head: int) -> Program:
    packed_words = -(-(seq_len * d_head) // 10)
    buffers = [ro_decl(q, 0, d_head), ro_decl(k_packed, 1, packed_words, DataType.U32),
               ro_decl(v_packed, 2, packed_words, DataType.U32), rw_decl(out, 3, d_head)]
    if seq_len <= 8 and d_head <= 16:
        stores = []
        for dim in range(d_head):
            acc = Expr.f32(0.0)
            for i in range(seq_len):
                score = Expr.f32(0.0)
                for e in range(d_head):
                    score = Expr.add(score, Expr.mul(Expr.load(q, Expr.u32(e)), unpack_3bit(k_packed, Expr.u32(i * d_head + e))))
                acc = Expr.add(acc, Expr.mul(score, unpack_3bit(v_packed, Expr.u32(i * d_head + dim))))
            stores.append(Node.store(out, Expr.u32(dim), acc))
        return Program.wrapped(buffers, (1, 1, 1),
                               [wrap_anonymous(OP_ID, [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), stores)])])
    row = Expr.mul(Expr.var("i"), Expr.u32(d_head))
    inner = [
        Node.let_bind("d", Expr.gid_x()),
        Node.let_bind("acc", Expr.f32(0.0)),
        Node.loop_for("i", Expr.u32(0), Expr.u32(seq_len), [
            Node.let_bind("score", Expr.f32(0.0)),
            Node.loop_for("e", Expr.u32(0), Expr.u32(d_head), [Node.assign("score", Expr.add(
                Expr.var("score"), Expr.mul(Expr.load(q, Expr.var("e")), unpack_3bit(k_packed, Expr.add(row, Expr.var("e"))))))]),
            Node.assign("acc", Expr.add(Expr.var("acc"), Expr.mul(
                Expr.var("score"), unpack_3bit(v_packed, Expr.add(row, Expr.var("d")))))),
        ]),
        Node.store(out, Expr.var("d"), Expr.var("acc")),
    ]
    return Program.wrapped(buffers, (64, 1, 1),
                           [wrap_anonymous(OP_ID, [Node.if_then(Expr.lt(Expr.gid_x(), Expr.u32(d_head)), inner)])])


def _build(seq_len: int = 2, d_head: int = 2) -> Program:
    return turboquant_attention("q", "kp", "vp", "out", seq_len, d_head)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 1.0]),
                          pack_u32_slice([0x8D1]),   # K codes [1, 2, 3, 4]
                          pack_u32_slice([0x201]),   # V codes [1, 0, 0, 1]
                          bytes(8)]],                # out (initial contents)
    # scores [3, 7]; out = [3*1 + 7*0, 3*0 + 7*1]
    expected_output=lambda: [[pack_f32_slice([3.0, 7.0])]],
    category="nn", ulp=ULP,
    bench=dict(seq_len=4096, d_head=128),
)
