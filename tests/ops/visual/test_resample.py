"""visual::downsample and visual::upsample: sizes around the 256-pixel workgroup against NumPy
(exact) on the reference and on Vulkan, the half-up rounding of the 2x2 mean, the odd-size
behaviour vyre leaves undocumented (downsample crops; upsample with an odd width reads the next
row, pinned), and builder errors."""
import numpy as np
import pytest

from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.visual.downsample import downsample_2x
from vyre_vk.ops.visual.upsample import upsample_2x

from ..harness import run_equal
from ..oracles.visual_downsample import downsample_np
from ..oracles.visual_pixels import edgy_pixels, pack, unpack
from ..oracles.visual_upsample import upsample_np


def down(device, pixels, w, h):
    n = (w // 2) * (h // 2)
    _, ref = run_equal(downsample_2x("src", "dst", w, h), device, {"src": pixels, "dst": np.ones(n, np.uint32)})
    return ref["dst"]


def up(device, pixels, w, h):
    _, ref = run_equal(upsample_2x("src", "dst", w, h), device, {"src": pixels, "dst": np.ones(w * h, np.uint32)})
    return ref["dst"]


@pytest.mark.parametrize("w,h", [(2, 2), (4, 4), (34, 32), (64, 18)])
def test_down_then_up_match_numpy(w, h, vk_device):
    pixels = edgy_pixels(np.random.default_rng(w * h), w * h)
    small = down(vk_device, pixels, w, h)
    np.testing.assert_array_equal(small, downsample_np(pixels, w, h))
    np.testing.assert_array_equal(up(vk_device, small, w, h), upsample_np(small, w, h))


def test_block_mean_rounds_half_up(vk_device):
    # channel sums 0+0+0+1 -> 0, 0+0+1+1 (0.5) -> 1, 1+1+1+2 (1.25) -> 1, 255*3+254 -> 255, 2+2+2+3 (2.25) -> 2
    blocks = [(0, 0, 0, 1), (0, 0, 1, 1), (1, 1, 1, 2), (255, 255, 255, 254)]
    ch = np.zeros((2, 8, 4), np.int64)
    for i, (a, b, c, d) in enumerate(blocks):
        ch[0, 2 * i], ch[0, 2 * i + 1], ch[1, 2 * i], ch[1, 2 * i + 1] = a, b, c, d
    out = unpack(down(vk_device, pack(ch).reshape(-1), 8, 2))
    assert out[:, 0].tolist() == [0, 1, 1, 255] and (out == out[:, :1]).all()


def test_odd_downsample_drops_the_last_row_and_column(vk_device):
    pixels = edgy_pixels(np.random.default_rng(3), 7 * 5)
    np.testing.assert_array_equal(down(vk_device, pixels, 7, 5), downsample_np(pixels, 7, 5))


def test_odd_upsample_width_reads_past_the_row_as_vyre_does(vk_device):
    # width 5: in_w = 2, output column 4 reads input column 2 = the next row's first pixel (or
    # 0 past the end of the buffer): vyre requires even sizes and does not check them.
    src = np.arange(1, 5, dtype=np.uint32)          # 2x2
    out = up(vk_device, src, 5, 4).reshape(4, 5)
    assert out[:, 4].tolist() == [3, 3, 0, 0]
    np.testing.assert_array_equal(out[:, :4], upsample_np(src, 4, 4).reshape(4, 4))


def test_bad_parameters_raise_with_a_fix():
    with pytest.raises(OpParamError, match="used twice.*Fix: "):
        downsample_2x("a", "a", 4, 4)
    with pytest.raises(OpParamError, match="`height`.*Fix: "):
        upsample_2x("a", "b", 4, 2**32)
