"""nn::linear_4bit_affine_grouped at sizes beyond its oracle run: the per-chunk sidecar path (group
sizes that are not multiples of 32, a partial last chunk, a partial last workgroup of outputs), the
per-group path, and the builder's errors. Reference vs NumPy (oracle window), Vulkan vs reference
(vyre's 4-ULP bit metric)."""
import pytest

from vyre_vk import ops
from vyre_vk.ir import node as N
from vyre_vk.opt.analysis import walk_nodes
from vyre_vk.testing.parity import compare

from ..harness import oracle_runs
from ..measure import np_error
from ..oracles.nn_linear import affine_window

OP = "vyre-libs::nn::linear_4bit_affine_grouped"


@pytest.mark.parametrize("params", [
    {"in_dim": 200, "out_dim": 13, "group_size": 24},   # chunk path, partial chunk, 2 workgroups
    {"in_dim": 64, "out_dim": 9, "group_size": 32},     # group_size == 32 stays on the chunk path
    {"in_dim": 128, "out_dim": 8, "group_size": 1},
    {"in_dim": 192, "out_dim": 17, "group_size": 96},   # group path, 3 chunks per group
])
def test_affine_grouped_sizes(params, vk_device):
    for program, ref, got, want in oracle_runs(OP, vk_device, params, [5]):
        loops = {n.var for n in walk_nodes(program.entry) if isinstance(n, N.Loop)}
        assert ("group_idx" in loops) == (params["group_size"] > 32 and params["group_size"] % 32 == 0)
        assert ref["out"].shape == (params["out_dim"],)
        assert np_error(ref, want) <= affine_window(params)
        report = compare(program, ref, got, ops.get(OP).ulp)
        assert report.ok, "; ".join(str(m) for m in report.mismatches)


def test_affine_grouped_builder_errors_name_the_fix():
    entry = ops.get(OP)
    for bad, what in (({"in_dim": 12}, "not divisible by 8"), ({"group_size": 0}, "group_size=0"),
                      ({"out_dim": 0}, "out_dim=0"), ({"in_dim": 0}, "in_dim=0")):
        with pytest.raises(ValueError, match=what) as info:
            entry.build_with(**bad)
        assert str(info.value).startswith("Fix:")
