"""nn::gelu beyond the tables: the tail x in [-10, -1], where 1 + tanh(u) cancels."""
import numpy as np

from vyre_vk import ops
from vyre_vk.testing.parity import ulp_distance

from ..harness import run_both
from ..measure import scaled_ulps

OP = "vyre-libs::nn::gelu"


def _tail(vk_device):
    x = np.linspace(-10, -1, 4001).astype(np.float32)
    _, ref, got = run_both(OP, vk_device, {"input": x}, n=x.size)
    return x, ref["output"], got["output"]


def test_gelu_tail_is_close_to_numpy_on_vulkan(vk_device):
    x, ref, got = _tail(vk_device)
    value = 0.5 * x.astype(np.float64) * (1 + np.tanh(0.7978846 * (x + 0.044715 * x.astype(np.float64) ** 3)))
    assert scaled_ulps(ref, value, np.abs(x)) <= 8
    assert scaled_ulps(got, value, np.abs(x)) <= 8


def test_gelu_tail_meets_vyres_bit_ulp_window(vk_device):
    """1 + tanh(u) cancels below x = -5: the driver's tanh reached -1.0 one ULP before the
    reference and gave -0.0 against a tiny value (874,822,422 bit-ULPs); ffmath's tanh matches."""
    _, ref, got = _tail(vk_device)
    assert int(ulp_distance(ref, got).max()) <= ops.get(OP).ulp
