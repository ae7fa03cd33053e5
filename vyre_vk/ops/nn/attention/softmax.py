"""`vyre-libs::nn::softmax`: numerically stable softmax over one f32 vector, in one workgroup
(port of vyre-libs/src/nn/attention/softmax.rs, the tiled program).

``tile = 256`` (the workgroup, whatever n), ``chunks = ceil(n/tile)``; in workgroup 0: each lane's
strided max (``select(x > acc, x, acc)`` from ``f32::MIN``) -> ``softmax_scratch``, barrier, tree
max; lane 0 stores it in ``softmax_max``; barrier; each lane's strided ``sum exp(x - max)`` ->
scratch, barrier, tree sum; then ``output[i] = exp(x[i] - max) / sum``. Buffers input ro f32
(0, n), workgroup ``softmax_scratch`` (f32, 256) and ``softmax_max`` (f32, 1), output (1, n).

Example::

    >>> p = softmax("input", "output", 4)
    >>> p.workgroup_size, [b.name for b in p.buffers]
    ((256, 1, 1), ['input', 'softmax_scratch', 'softmax_max', 'output'])
"""
from __future__ import annotations

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl, strided_accumulate_child, strided_writeback_child
from ...primitives import F32_MIN, FIRST_WORKGROUP, max_f32_child, sum_f32_child
from ...registry import register_op
from ...wire import pack_f32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::softmax"
SOFTMAX_TILE = 256
# 128 ULP: the program uses Exp (vyre: max(explicit 1, transcendental budget 128)).
ULP = 128


def softmax(input: str, output: str, n: int, workgroup: int = SOFTMAX_TILE) -> Program:
    if n == 0:
        raise OpParamError("Fix: softmax requires n > 0, got 0.")
    tile = max(workgroup, 1)
    chunks = -(-n // tile)
    local = Expr.var("local")

    def exp_shifted(idx: Expr, max_value: Expr) -> Expr:
        return Expr.exp(Expr.sub(Expr.load(input, idx), max_value))

    body = [
        Node.let_bind("local", Expr.local_x()),
        strided_accumulate_child(OP_ID, tile, chunks, n, "local_max", Expr.f32(F32_MIN), "softmax_scratch",
                                 lambda idx, acc: Expr.select(Expr.gt(Expr.load(input, idx), acc),
                                                              Expr.load(input, idx), acc)),
        Node.barrier(),
        max_f32_child(OP_ID, tile, "softmax_scratch", FIRST_WORKGROUP),
        Node.if_then(Expr.and_(Expr.eq(Expr.workgroup_x(), Expr.u32(0)), Expr.eq(local, Expr.u32(0))),
                     [Node.store("softmax_max", Expr.u32(0), Expr.load("softmax_scratch", Expr.u32(0)))]),
        Node.barrier(),
        strided_accumulate_child(OP_ID, tile, chunks, n, "local_sum", Expr.f32(0.0), "softmax_scratch",
                                 lambda idx, acc: Expr.add(acc, exp_shifted(idx, Expr.load("softmax_max", Expr.u32(0))))),
        Node.barrier(),
        sum_f32_child(OP_ID, tile, "softmax_scratch", FIRST_WORKGROUP),
        strided_writeback_child(OP_ID, tile, chunks, n, output,
                                [Node.let_bind("sum_val", Expr.load("softmax_scratch", Expr.u32(0))),
                                 Node.let_bind("max_val", Expr.load("softmax_max", Expr.u32(0)))],
                                lambda idx: Expr.div(exp_shifted(idx, Expr.var("max_val")), Expr.var("sum_val"))),
    ]
    return Program.wrapped(
        [ro_decl(input, 0, n), BufferDecl.workgroup("softmax_scratch", tile, DataType.F32),
         BufferDecl.workgroup("softmax_max", 1, DataType.F32), out_decl(output, 1, n)],
        (tile, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n: int = 4) -> Program:
    return softmax("input", "output", n)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([0.5, -1.0, 1.5, 0.25]), bytes(16)]],  # legacy form
    # vyre lists the bytes: [0.21185485, 0.04727883, 0.57587355, 0.16499276]
    expected_output=lambda: [[bytes([0x7B, 0xF0, 0x58, 0x3E, 0x74, 0x9F, 0x41, 0x3D,
                                     0xF3, 0x6C, 0x13, 0x3F, 0xDB, 0xF3, 0x28, 0x3E])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 20),
)
