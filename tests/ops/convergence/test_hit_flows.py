"""The fused source-to-sink flows (fixpoint_hit.py): vyre's arm order and barriers, and the
one-workgroup bound that stands in for vyre's GridSync barriers."""
import numpy as np
import pytest

from vyre_vk import ops
from vyre_vk.ir import node as N
from vyre_vk.ops.registry import OpParamError

from .graph_oracles import csr

P = "vyre-libs::security::"


def arms(program):
    inline = program.entry[0].body[0]
    return [("barrier" if isinstance(n, N.Barrier) else n.body[0].generator) for n in inline.body]


def test_arms_and_barriers_are_vyres_fuse_order():
    bitset = "vyre-primitives::bitset::"
    hit = [P + "flows_to", "barrier", bitset + "and", "barrier", bitset + "any"]
    assert arms(ops.get(P + "flows_to_to_sink").build()) == hit
    assert arms(ops.get(P + "taint_pollution").build()) == hit
    assert arms(ops.get(P + "flows_to_with_sanitizer").build()) == [
        bitset + "and_not", "barrier", P + "flows_to", "barrier", bitset + "and_not", "barrier", *hit[2:]]


@pytest.mark.parametrize("op", ["flows_to_to_sink", "taint_pollution", "flows_to_with_sanitizer"])
def test_only_one_workgroup_graphs_are_built(op):
    e = ops.get(P + op)
    e.build_with(node_count=255, edge_count=256)
    for bad in (dict(node_count=256), dict(edge_count=257)):
        with pytest.raises(OpParamError, match="workgroup.*Fix: keep node_count <= 255"):
            e.build_with(**bad)


def test_a_sanitizer_on_the_path_blocks_the_hit(vk_device):
    # 0 -> 1 -> 2 (ASSIGNMENT); source {0, 1}, sink {2}: 1 -> 2 is one step, unless 1 is a sanitizer.
    n = 3
    g = csr(n, [(0, 1, 1), (1, 2, 1)])
    e = ops.get(P + "flows_to_with_sanitizer")
    program = e.build_with(node_count=n, edge_count=2)
    base = {**g, "source": np.array([0b011], np.uint32), "sink": np.array([0b100], np.uint32),
            "clean": np.zeros(1, np.uint32), "reach": np.zeros(1, np.uint32), "alive": np.zeros(1, np.uint32),
            "hits": np.zeros(1, np.uint32), "out_scalar": np.zeros(1, np.uint32)}
    for sanitizer, hit in ((0b000, 1), (0b010, 0)):
        got = vk_device.compile(program).run({**base, "sanitizer": np.array([sanitizer], np.uint32)})
        assert int(got["out_scalar"][0]) == hit
