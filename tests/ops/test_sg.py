"""linear_4bit_affine_grouped at sizes beyond its oracle run: the per-chunk sidecar path (group sizes
that are not multiples of 32, a partial last chunk, a partial last workgroup of outputs), the per-group
path, and the builder's errors. Reference vs NumPy (oracle window), Vulkan vs reference (vyre's
4-ULP bit metric)."""
import numpy as np
import pytest

from vyre_vk import ops, reference
from vyre_vk.ir import node as N
from vyre_vk.opt.analysis import walk_nodes
from vyre_vk.testing.parity import compare

from .measure import np_error
from .oracles import ORACLES
from .oracles_sg import affine_window

OP = "vyre-libs::nn::linear_4bit_affine_grouped"


@pytest.mark.parametrize("params", [
    {"in_dim": 200, "out_dim": 13, "group_size": 24},   # chunk path, partial chunk, 2 workgroups
    {"in_dim": 64, "out_dim": 9, "group_size": 32},     # group_size == 32 stays on the chunk path
    {"in_dim": 128, "out_dim": 8, "group_size": 1},
    {"in_dim": 192, "out_dim": 17, "group_size": 96},   # group path, 3 chunks per group
])
def test_affine_grouped_sizes(params, vk_device):
    entry, spec = ops.get(OP), ORACLES[OP]
    program = entry.build_with(**params)
    loops = {n.var for n in walk_nodes(program.entry) if isinstance(n, N.Loop)}
    assert ("group_idx" in loops) == (params["group_size"] > 32 and params["group_size"] % 32 == 0)
    ins = spec.inputs(np.random.default_rng(5), params)
    ref, got = reference.run(program, ins), vk_device.compile(program).run(ins)
    assert ref["out"].shape == (params["out_dim"],)
    want = spec.numpy(ins, params)
    assert np_error(ref, want) <= affine_window(params)
    report = compare(program, ref, got, entry.ulp)
    assert report.ok, "; ".join(str(m) for m in report.mismatches)


def test_affine_grouped_builder_errors_name_the_fix():
    entry = ops.get(OP)
    for bad, what in (({"in_dim": 12}, "not divisible by 8"), ({"group_size": 0}, "group_size=0"),
                      ({"out_dim": 0}, "out_dim=0"), ({"in_dim": 0}, "in_dim=0")):
        with pytest.raises(ValueError, match=what) as info:
            entry.build_with(**bad)
        assert str(info.value).startswith("Fix:")
