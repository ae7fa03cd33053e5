"""math::scan_prefix_sum beyond the tables: every workgroup size the builder picks (next power
of two of n, up to 1024) against np.cumsum accumulated in uint32 (wrapping), on the reference
and on Vulkan; wrap-around at u32::MAX; n = 0 and n > 1024 are refused with a Fix."""
import numpy as np
import pytest

from vyre_vk.ops.math.scan import prefix_sum
from vyre_vk.ops.registry import OpParamError

from ..harness import run_equal
from ..oracles.math_scan import inclusive_scan_u32_np
from ..oracles.u32_edges import edgy_u32

U32 = np.uint32
OP = "vyre-libs::math::scan_prefix_sum"


@pytest.mark.parametrize("n", [1, 2, 3, 5, 63, 64, 65, 255, 256, 257, 1000, 1023, 1024])
def test_matches_wrapping_cumsum(n, vk_device):
    x = edgy_u32(np.random.default_rng(n), n)
    program, ref = run_equal(OP, vk_device, {"input": x}, n=n)
    assert program.workgroup_size == (1 << (n - 1).bit_length(), 1, 1)
    np.testing.assert_array_equal(ref["output"], inclusive_scan_u32_np(x))
    acc, want = 0, []
    for v in x.tolist():
        acc = (acc + v) % 2**32
        want.append(acc)
    assert ref["output"].tolist() == want


def test_wraps_at_u32_max(vk_device):
    _, ref = run_equal(OP, vk_device, {"input": np.asarray([0xFFFFFFFF, 1, 1], U32)}, n=3)
    assert ref["output"].tolist() == [0xFFFFFFFF, 0, 1]


@pytest.mark.parametrize("n,match", [(0, "requires n > 0"), (1025, "multi-block scan"), (1 << 20, "n <= 1024")])
def test_unsupported_sizes_are_refused_with_a_fix(n, match):
    with pytest.raises(OpParamError, match=f"{match}.*|Fix:") as e:
        prefix_sum.scan_prefix_sum("input", "output", n)
    assert "Fix:" in str(e.value) and match in str(e.value)
