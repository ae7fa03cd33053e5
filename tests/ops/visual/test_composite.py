"""visual::composite: every (background channel, foreground alpha) pair through the op on the
reference and on Vulkan, showing vyre's ``(x + 128) * 257 >> 16`` is exactly round(x / 255);
float Porter-Duff within half a level; the clamp; builder errors."""
import numpy as np
import pytest

from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.visual.composite import alpha_over

from ..harness import run_equal
from ..oracles.visual_composite import over_np
from ..oracles.visual_pixels import edgy_pixels, pack, unpack


def test_every_background_channel_and_foreground_alpha_pair(vk_device):
    bg_c, fg_a = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    bg_c, fg_a = bg_c.reshape(-1), fg_a.reshape(-1)
    zeros = np.zeros_like(bg_c)
    fg = pack(np.stack([zeros, zeros, zeros, fg_a], -1))          # colour 0: out_c is the scaled background
    bg = pack(np.stack([bg_c, bg_c, bg_c, bg_c], -1))
    n = fg.size
    _, ref = run_equal(alpha_over("fg", "bg", "out", n), vk_device, {"fg": fg, "bg": bg, "out": np.zeros(n, np.uint32)})
    ch = unpack(ref["out"])
    x = bg_c * (255 - fg_a)
    rounded = np.floor(x / 255 + 0.5).astype(np.int64)           # round half up of the exact quotient
    np.testing.assert_array_equal(ch[:, 0], rounded)
    np.testing.assert_array_equal(ch[:, 3], np.minimum(fg_a + rounded, 255))
    np.testing.assert_array_equal(ref["out"], over_np(fg, bg))


@pytest.mark.parametrize("n", [1, 255, 257])
def test_float_porter_duff_within_half_a_level(n, vk_device):
    rng = np.random.default_rng(n)
    fg, bg = edgy_pixels(rng, n), edgy_pixels(rng, n)
    _, ref = run_equal("vyre-libs::visual::composite", vk_device, {"fg": fg, "bg": bg, "out": np.ones(n, np.uint32)},
                       count=n)
    f, b = unpack(fg).astype(float), unpack(bg).astype(float)
    ideal = np.minimum(f + b * (1 - f[:, 3:4] / 255), 255)       # fg treated as premultiplied, as vyre does
    assert np.abs(unpack(ref["out"]) - ideal).max() <= 0.5


def test_opaque_foreground_wins_and_transparent_adds(vk_device):
    fg = np.asarray([0xFF123456, 0x00808080, 0x00000000], np.uint32)
    bg = np.asarray([0xFFFFFFFF, 0xFFA0A0A0, 0x7F010203], np.uint32)
    _, ref = run_equal(alpha_over("fg", "bg", "out", 3), vk_device, {"fg": fg, "bg": bg, "out": np.zeros(3, np.uint32)})
    # opaque fg: itself; transparent non-premultiplied fg: 0x80 + 0xA0 clamps to 255; empty fg: bg
    assert [hex(v) for v in ref["out"]] == ["0xff123456", "0xffffffff", "0x7f010203"]


def test_bad_parameters_raise_with_a_fix():
    with pytest.raises(OpParamError, match="used twice.*Fix: "):
        alpha_over("a", "a", "out", 2)
    with pytest.raises(OpParamError, match="`count`.*Fix: "):
        alpha_over("fg", "bg", "out", -2)
