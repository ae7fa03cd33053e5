"""representation::unpack_4bit_f32 beyond the tables: all 16 nibble values in every position,
random words, sizes around the 64-lane workgroup, on the reference and on Vulkan, against NumPy;
vyre's floor(n/8) input count for n not a multiple of 8 (trailing nibbles read as 0)."""
import numpy as np
import pytest

from vyre_vk.ops.representation import unpack

from ..harness import run_both
from ..oracles.representation_unpack import unpack_4bit_np
from ..oracles.u32_edges import edgy_u32

U32 = np.uint32
OP = "vyre-libs::representation::unpack_4bit_f32"


def nibbles_by_hand(words, n):
    out = []
    for i in range(n):
        w = i // 8
        out.append(float((int(words[w]) >> (4 * (i % 8))) & 0xF) if w < len(words) else 0.0)
    return out


@pytest.mark.parametrize("n", [8, 64, 72, 1000, 1024])
def test_unpacks_every_nibble(n, vk_device):
    words = edgy_u32(np.random.default_rng(n), n // 8)
    _, ref, got = run_both(OP, vk_device, {"input": words}, n=n)
    want = nibbles_by_hand(words, n)
    assert ref["output"].tolist() == want == got["output"].tolist()
    np.testing.assert_array_equal(ref["output"], unpack_4bit_np(words, n))


def test_every_value_in_every_position(vk_device):
    # word k holds nibble values (k + j) % 16 at positions j = 0..7
    words = np.asarray([sum(((k + j) % 16) << (4 * j) for j in range(8)) for k in range(16)], U32)
    _, ref, got = run_both(OP, vk_device, {"input": words}, n=128)
    want = [float((k + j) % 16) for k in range(16) for j in range(8)]
    assert ref["output"].tolist() == want == got["output"].tolist()


@pytest.mark.parametrize("n", [12, 65])
def test_partial_last_word_reads_zero(n, vk_device):
    p = unpack.unpack_4bit_f32("input", "output", n)
    assert p.buffers[0].count == n // 8
    words = edgy_u32(np.random.default_rng(n), n // 8)
    _, ref, got = run_both(OP, vk_device, {"input": words}, n=n)
    assert ref["output"].tolist() == nibbles_by_hand(words, n) == got["output"].tolist()
    assert ref["output"][8 * (n // 8):].tolist() == [0.0] * (n % 8)


def test_fewer_than_eight_values_declare_a_runtime_sized_input(vk_device):
    # vyre's count n // 8 is 0 here: the input is sized by the bound words, so they are all read
    p = unpack.unpack_4bit_f32("input", "output", 5)
    assert p.buffers[0].count == 0
    words = np.asarray([0x00054321], U32)
    _, ref, got = run_both(OP, vk_device, {"input": words}, n=5)
    assert ref["output"].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0] == got["output"].tolist()
