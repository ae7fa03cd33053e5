"""A reduction with workgroup memory and barriers: each workgroup of 256 lanes sums its
256 inputs by a tree (sums[w] = x[256w] + ... in the tree's order), checked against the reference.

    python examples/workgroup_sum.py
"""
import numpy as np

import vyre_vk
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.testing.parity import assert_parity

U32, LANES = DataType.U32, 256
lid, gid = Expr.var("lid"), Expr.var("gid")
tree = []
stride = LANES // 2
while stride:  # halve the active lanes each step; a barrier between steps orders the reads
    tree += [Node.if_then(Expr.lt(lid, Expr.u32(stride)), [
        Node.store("tile", lid, Expr.add(Expr.load("tile", lid), Expr.load("tile", Expr.add(lid, Expr.u32(stride)))))]),
        Node.barrier()]
    stride //= 2
program = Program.wrapped(
    [BufferDecl.read("x", 0, U32), BufferDecl.output("sums", 1, U32).with_count(64),
     BufferDecl.workgroup("tile", LANES, U32)],
    (LANES, 1, 1),
    [wrap_anonymous("example::workgroup_sum", [
        Node.let_bind("lid", Expr.local_x()),
        Node.let_bind("gid", Expr.gid_x()),
        Node.store("tile", lid, Expr.select(Expr.lt(gid, Expr.buf_len("x")), Expr.load("x", gid), Expr.u32(0))),
        Node.barrier(),
        *tree,
        Node.if_then(Expr.eq(lid, Expr.u32(0)), [Node.store("sums", Expr.workgroup_x(), Expr.load("tile", Expr.u32(0)))]),
    ])])

x = np.random.default_rng(1).integers(0, 1000, 64 * LANES, dtype=np.uint32)
assert_parity(program, {"x": x})                      # u32: exact
sums = vyre_vk.run(program, {"x": x})["sums"]
assert np.array_equal(sums, x.reshape(64, LANES).sum(axis=1, dtype=np.uint32))
print(f"workgroup_sum: 64 workgroups of {LANES} lanes, sums[:4] = {sums[:4].tolist()}")
