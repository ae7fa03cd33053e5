"""`vyre-libs::nn::cross_entropy`: per-token loss
``loss[t] = (max_v l[t,v] + log(sum_v exp(l[t,v] - max))) - l[t, targets[t]]``
(port of vyre-libs/src/nn/activation/cross_entropy.rs).

One workgroup of 256 lanes per token (``token = WorkgroupId.x``): each lane folds
``max`` over its strided vocabulary slice (start ``f32::MIN``) into ``ce_scratch``, a tree max
(every workgroup), lane 0 stores the max and the target logit in workgroup scalars, then each
lane sums ``exp(l - max)`` over its slice, a tree sum, and lane 0 writes the loss.
``loss`` is declared with ``n*256`` elements so the inferred grid is ``n`` workgroups; only
bytes ``0..4n`` are read back.

Example::

    >>> p = cross_entropy("logits", "targets", "loss", 2, 4)
    >>> p.workgroup_size, p.buffers[-1].count, p.buffers[-1].output_byte_range
    ((256, 1, 1), 512, (0, 8))
"""
from __future__ import annotations

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...primitives import EVERY_WORKGROUP, F32_MIN, max_f32_child, sum_f32_child
from ...registry import register_op
from ...wire import pack_f32_slice, pack_u32_slice
from .unary import f32_bits
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::cross_entropy"
CROSS_ENTROPY_TILE = 256
# 128 ULP: the program uses Exp and Log (vyre's transcendental budget; no explicit entry).
ULP = 128


def cross_entropy(logits: str, targets: str, loss_out: str, n: int, vocab_size: int) -> Program:
    if n == 0 or vocab_size == 0:
        raise OpParamError(f"{OP_ID}: n={n}, vocab_size={vocab_size}. Fix: both must be >= 1.")
    tile = CROSS_ENTROPY_TILE
    if n * vocab_size > 0xFFFFFFFF or n * tile > 0xFFFFFFFF:
        raise OpParamError(f"{OP_ID}: element count overflows u32. Fix: use fewer tokens.")
    return Program.wrapped(
        [ro_decl(logits, 0, n * vocab_size), ro_decl(targets, 1, n, DataType.U32),
         BufferDecl.workgroup("ce_scratch", tile, DataType.F32),
         BufferDecl.workgroup("ce_max_logit", 1, DataType.F32),
         BufferDecl.workgroup("ce_target_logit", 1, DataType.F32),
         out_decl(loss_out, 2, n * tile).with_output_byte_range(0, n * 4)],
        (tile, 1, 1),
        [wrap_anonymous(OP_ID, _body(logits, targets, loss_out, n, vocab_size))],
    )


def _body(logits: str, targets: str, loss_out: str, n: int, vocab_size: int) -> list:
    tile = CROSS_ENTROPY_TILE
    chunks = -(-vocab_size // tile)
    local, token, base = Expr.var("local"), Expr.var("token"), Expr.var("base")
    vocab_idx = Expr.var("vocab_idx")
    live = Expr.lt(token, Expr.u32(n))
    lane0 = Expr.and_(live, Expr.eq(local, Expr.u32(0)))

    def vocab_loop(update: Node) -> Node:
        return Node.loop_for("chunk", Expr.u32(0), Expr.u32(chunks), [
            Node.let_bind("vocab_idx", Expr.add(Expr.mul(Expr.var("chunk"), Expr.u32(tile)), local)),
            Node.if_then(Expr.lt(vocab_idx, Expr.u32(vocab_size)), [update]),
        ])

    return [
        Node.let_bind("local", Expr.local_x()),
        Node.let_bind("token", Expr.workgroup_x()),
        Node.let_bind("base", Expr.mul(token, Expr.u32(vocab_size))),
        Node.if_then(live, [
            Node.let_bind("local_max", Expr.f32(F32_MIN)),
            vocab_loop(Node.assign("local_max", Expr.max(
                Expr.var("local_max"), Expr.load(logits, Expr.add(base, vocab_idx))))),
            Node.store("ce_scratch", local, Expr.var("local_max")),
        ]),
        Node.barrier(),
        max_f32_child(OP_ID, tile, "ce_scratch", EVERY_WORKGROUP),
        Node.if_then(lane0, [Node.store("ce_max_logit", Expr.u32(0), Expr.load("ce_scratch", Expr.u32(0)))]),
        Node.if_then(lane0, [Node.store("ce_target_logit", Expr.u32(0),
                                        Expr.load(logits, Expr.add(base, Expr.load(targets, token))))]),
        Node.barrier(),
        Node.if_then(live, [
            Node.let_bind("max_logit", Expr.load("ce_max_logit", Expr.u32(0))),
            Node.let_bind("local_sum", Expr.f32(0.0)),
            vocab_loop(Node.assign("local_sum", Expr.add(Expr.var("local_sum"), Expr.exp(
                Expr.sub(Expr.load(logits, Expr.add(base, Expr.var("vocab_idx"))), Expr.var("max_logit")))))),
            Node.store("ce_scratch", local, Expr.var("local_sum")),
        ]),
        Node.barrier(),
        sum_f32_child(OP_ID, tile, "ce_scratch", EVERY_WORKGROUP),
        Node.if_then(lane0, [Node.store(loss_out, token, Expr.sub(
            Expr.add(Expr.load("ce_max_logit", Expr.u32(0)), Expr.log(Expr.load("ce_scratch", Expr.u32(0)))),
            Expr.load("ce_target_logit", Expr.u32(0))))]),
    ]


def _build(n: int = 2, vocab_size: int = 4) -> Program:
    return cross_entropy("logits", "targets", "loss", n, vocab_size)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 0.5, 0.1, 0.2, 0.3, 0.4]),  # 2 tokens x 4 vocab
                          pack_u32_slice([2, 0])]],                                   # targets
    # vyre computes max + logf(sum expf(l - max)) - l[target] on the host (libm, sequential sum):
    # [0.46077347, 1.5425355]
    expected_output=lambda: [[f32_bits([0x3EEBEA80, 0x3FC571CE])]],
    category="nn", ulp=ULP,
    bench=dict(n=1024, vocab_size=32000),
)
