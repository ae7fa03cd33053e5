"""hash::blake3_compress against the BLAKE3 spec: the published hashes of "" and "abc" (one
chunk, one block, root), vyre's vector, and random chaining values / blocks / counters / flags
through the spec's compression function (codecs_ref), on the reference and on Vulkan."""
import numpy as np
import pytest

from vyre_vk.ops.hash.blake3_compress import IV, blake3_compress

from ..harness import run_equal
from ..oracles import codecs_ref as R

U32 = np.uint32
P = "__vyre_hash_blake3_compress_"
OP = "vyre-libs::hash::blake3_compress"


def compress(device, cv, block, counter, block_len, flags) -> list[int]:
    ins = {P + "chaining_in": np.asarray(cv, U32), P + "message": np.asarray(block, U32),
           P + "params": np.asarray([counter & 0xFFFFFFFF, counter >> 32, block_len, flags], U32)}
    _, out = run_equal(OP, device, ins)
    return out[P + "chaining_out"].tolist()


@pytest.mark.parametrize("data,digest", [
    (b"", "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"),
    (b"abc", "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"),
])
def test_published_blake3_hashes_of_one_block_inputs(data, digest, vk_device):
    block = data.ljust(64, b"\0")
    words = [int.from_bytes(block[4 * i:4 * i + 4], "little") for i in range(16)]
    out = compress(vk_device, IV, words, 0, len(data), R.CHUNK_START | R.CHUNK_END | R.ROOT)
    assert b"".join(w.to_bytes(4, "little") for w in out).hex() == digest
    assert R.blake3_hash_one_block(data).hex() == digest  # the spec reference agrees with itself


def test_random_states_match_the_spec_compression(vk_device):
    rng = np.random.default_rng(3)
    for _ in range(6):
        cv = rng.integers(0, 2**32, 8, dtype=np.uint64).tolist()
        block = rng.integers(0, 2**32, 16, dtype=np.uint64).tolist()
        counter = int(rng.integers(0, 2**63))
        block_len, flags = int(rng.integers(0, 65)), int(rng.integers(0, 128))
        want = R.blake3_compress(cv, block, counter, block_len, flags)[:8]
        assert compress(vk_device, cv, block, counter, block_len, flags) == want


def test_one_flipped_message_bit_changes_the_output(vk_device):
    block = [0] * 16
    a = compress(vk_device, IV, block, 0, 64, 11)
    block[15] = 1 << 31
    assert compress(vk_device, IV, block, 0, 64, 11) != a


def test_names_scoped_and_explicit():
    assert [b.name for b in blake3_compress("cv", "m", "p", "o").buffers] == ["cv", "m", "p", "o"]
    assert blake3_compress("input", "message", "params", "out").buffers[0].name == P + "chaining_in"
