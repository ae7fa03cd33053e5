"""Adversarial indices never touch memory outside their buffer.

The target buffer `t` sits between canary buffers (bindings just below and above it, and
larger ones after), all filled with a sentinel the program never writes. Stores, atomics
and loads at indices count, count+1, 2**31, 2**32-1, ... must leave every canary word
unchanged, and the result must equal the reference (OOB load -> 0, OOB store dropped,
OOB atomic returns 0 and writes nothing). Workgroup memory: an OOB store into one shared
array must not show up in its neighbour.
"""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous

U32 = DataType.U32
SENTINEL = np.uint32(0xC0FFEE11)
EDGES = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 2**16, 2**30, 2**31 - 1, 2**31, 2**32 - 4, 2**32 - 2, 2**32 - 1]


def _program(count: int, n: int) -> Program:
    i = Expr.gid_x()
    idx = Expr.load("idx", i)
    body = [
        Node.store("t", idx, Expr.add(Expr.u32(1000), i)),
        Node.let_bind("old", Expr.atomic_add("ta", Expr.add(idx, Expr.u32(1)), Expr.u32(1))),
        Node.store("out", i, Expr.add(Expr.load("t", Expr.sub(idx, Expr.u32(1))), Expr.var("old"))),
    ]
    return Program.wrapped([
        BufferDecl.read_write("canary_lo", 0, U32).with_count(16),
        BufferDecl.read_write("t", 1, U32).with_count(count),
        BufferDecl.read_write("canary_mid", 2, U32).with_count(16),
        BufferDecl.read_write("ta", 3, U32).with_count(count),
        BufferDecl.read_write("canary_hi", 4, U32).with_count(16),
        BufferDecl.read("idx", 5, U32).with_count(n),
        BufferDecl.output("out", 6, U32).with_count(n),
        BufferDecl.read_write("canary_far", 7, U32).with_count(4096),
    ], (4, 1, 1), [wrap_anonymous("bounds", [Node.if_then(Expr.lt(i, Expr.buf_len("idx")), body)])])


@settings(settings.get_profile("reliability"), max_examples=60)
@given(st.integers(1, 16), st.lists(st.sampled_from(EDGES) | st.integers(0, 2**32 - 1), min_size=1, max_size=32))
def test_out_of_bounds_accesses_stay_inside_their_buffer(vk_device, count, idx):
    p = _program(count, len(idx))
    inputs = {"canary_lo": np.full(16, SENTINEL), "t": np.arange(count, dtype=np.uint32),
              "canary_mid": np.full(16, SENTINEL), "ta": np.arange(count, dtype=np.uint32) * 10,
              "canary_hi": np.full(16, SENTINEL), "idx": np.array(idx, np.uint32),
              "canary_far": np.full(4096, SENTINEL)}
    got = vk_device.compile(p).run(inputs)
    for c in ("canary_lo", "canary_mid", "canary_hi", "canary_far"):
        assert (got[c] == SENTINEL).all(), f"{c} was written: {np.flatnonzero(got[c] != SENTINEL)[:8]}"
    want = reference.run(p, inputs)
    assert got["ta"].tolist() == want["ta"].tolist()  # atomics commute: exact whatever the order
    if len(set(idx)) == len(idx):  # no two lanes store the same word: `t` is order-independent
        assert got["t"].tolist() == want["t"].tolist()
        if not {(v - 1) % 2**32 for v in idx} & set(idx):  # no lane loads a word another stores
            assert got["out"].tolist() == want["out"].tolist()
    for k, v in enumerate(idx):  # OOB load -> 0 and OOB atomic -> 0 on every backend
        if (v + 1) % 2**32 >= count and (v - 1) % 2**32 >= count:
            assert got["out"][k] == 0


def test_workgroup_oob_store_does_not_reach_the_neighbour_array(vk_device):
    i = Expr.local_x()
    body = [
        Node.store("a", Expr.add(i, Expr.u32(4)), Expr.u32(7)),   # all 4 lanes store past a's end
        Node.store("a", Expr.sub(i, Expr.u32(1)), Expr.u32(9)),   # lane 0 stores at 2**32-1
        Node.barrier(),
        Node.store("out", Expr.gid_x(), Expr.add(Expr.load("b", i), Expr.mul(Expr.load("a", Expr.add(i, Expr.u32(4))), Expr.u32(100)))),
    ]
    p = Program.wrapped([BufferDecl.workgroup("a", 4, U32), BufferDecl.workgroup("b", 4, U32),
                         BufferDecl.output("out", 0, U32).with_count(8)], (4, 1, 1), [wrap_anonymous("wg", body)])
    got = vk_device.compile(p).run({})["out"]
    assert got.tolist() == [0] * 8 == reference.run(p, {})["out"].tolist()
