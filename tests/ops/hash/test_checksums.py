"""hash::crc32, adler32, fnv1a32, fnv1a64, multi_hash on the reference and on Vulkan against
zlib and the FNV-1a spec: published check values, random lengths (1, not a multiple of 4, long),
high bits in the packed words, the unsized (buf_len) variants, names and builder errors."""
import zlib

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ops import get
from vyre_vk.ops.hash import fnv1a32 as fnv32_mod, fnv1a64 as fnv64_mod
from vyre_vk.ops.hash.crc32 import crc32
from vyre_vk.ops.hash.multi_hash import multi_hash
from vyre_vk.ops.registry import OpParamError

from ..harness import run_equal
from ..oracles import codecs_ref as R

U32 = np.uint32
H = "vyre-libs::hash::"


def words(data: bytes, rng=None) -> np.ndarray:
    w = np.frombuffer(data, np.uint8).astype(U32)
    if rng is not None:  # junk above the byte: the ops read the low 8 bits only
        w |= rng.integers(0, 2**24, w.size).astype(U32) << U32(8)
    return w


def run_hash(op: str, data: bytes, device, rng=None) -> list[int]:
    prefix = {"multi_hash": "hash_multi"}.get(op, f"hash_{op}")
    _, ref = run_equal(H + op, device, {f"__vyre_{prefix}_input": words(data, rng)}, n=len(data))
    return ref[f"__vyre_{prefix}_out"].tolist()


@pytest.mark.parametrize("data,crc,adler,fnv32,fnv64", [
    (b"123456789", 0xCBF43926, 0x091E01DE, 0xBB86B11C, 0x06D5573923C6CDFC),
    (b"Wikipedia", zlib.crc32(b"Wikipedia"), 0x11E60398, R.fnv1a32(b"Wikipedia"), R.fnv1a64(b"Wikipedia")),
    (b"a", 0xE8B7BE43, 0x00620062, 0xE40C292C, 0xAF63DC4C8601EC8C),
])
def test_published_check_values(data, crc, adler, fnv32, fnv64, vk_device):
    assert run_hash("crc32", data, vk_device) == [crc]
    assert run_hash("adler32", data, vk_device) == [adler]
    assert run_hash("fnv1a32", data, vk_device) == [fnv32]
    assert run_hash("fnv1a64", data, vk_device) == [fnv64 & 0xFFFFFFFF, fnv64 >> 32]
    assert run_hash("multi_hash", data, vk_device) == [crc, fnv32, adler]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 63, 64, 255, 1000])
def test_random_bytes_with_high_bits_match_zlib_and_the_spec(n, vk_device):
    rng = np.random.default_rng(n)
    data = rng.bytes(n)
    assert run_hash("crc32", data, vk_device, rng) == [zlib.crc32(data)]
    assert run_hash("adler32", data, vk_device, rng) == [zlib.adler32(data)]
    assert run_hash("fnv1a32", data, vk_device, rng) == [R.fnv1a32(data)]
    h = R.fnv1a64(data)
    assert run_hash("fnv1a64", data, vk_device, rng) == [h & 0xFFFFFFFF, h >> 32]
    assert run_hash("multi_hash", data, vk_device, rng) == [zlib.crc32(data), R.fnv1a32(data), zlib.adler32(data)]


def test_adler32_modulus_wraps_on_long_runs_of_0xff(vk_device):
    data = b"\xff" * 6000   # a and b pass 65521 many times
    assert run_hash("adler32", data, vk_device) == [zlib.adler32(data)]
    assert run_hash("multi_hash", data, vk_device)[2] == zlib.adler32(data)


@pytest.mark.parametrize("mod,ref", [(fnv32_mod, lambda d: [R.fnv1a32(d)]),
                                     (fnv64_mod, lambda d: [R.fnv1a64(d) & 0xFFFFFFFF, R.fnv1a64(d) >> 32])])
@pytest.mark.parametrize("n", [1, 7, 100])
def test_unsized_fnv_variants_hash_every_element(mod, ref, n, vk_device):
    name = mod.__name__.rsplit(".", 1)[1]
    program = getattr(mod, name)("bytes", "digest")
    assert program.buffers[0].count == 0
    data = np.random.default_rng(n).bytes(n)
    _, out = run_equal(program, vk_device, {"bytes": words(data)})
    assert out["digest"].tolist() == ref(data)


def test_empty_input_gives_the_initial_state():
    # n = 0: the loop never runs (the input buffer is then unsized and needs one element bound)
    p = crc32("input", "out", 0)
    assert reference.run(p, {p.buffers[0].name: np.zeros(1, U32)})[p.buffers[1].name].tolist() == [0]
    p = fnv32_mod.fnv1a32_n("input", "out", 0)
    assert reference.run(p, {p.buffers[0].name: np.zeros(1, U32)})[p.buffers[1].name].tolist() == [0x811C9DC5]


def test_explicit_names_are_kept_and_generic_ones_scoped():
    p = crc32("bytes", "digest", 4)
    assert [b.name for b in p.buffers] == ["bytes", "digest"]
    p = multi_hash("input", "out", "ignored", "ignored", 4)
    assert [b.name for b in p.buffers] == ["__vyre_hash_multi_input", "__vyre_hash_multi_out"]
    p = multi_hash("input", "sums", "x", "y", 4)
    assert [b.name for b in p.buffers] == ["__vyre_hash_multi_input", "sums"]


@pytest.mark.parametrize("op", ["crc32", "adler32", "fnv1a32", "fnv1a64", "multi_hash"])
@pytest.mark.parametrize("n", [-1, 2**32, 2.0, "3", True])
def test_bad_n_is_an_op_param_error_with_a_fix(op, n):
    with pytest.raises(OpParamError) as info:
        get(H + op).build_with(n=n)
    assert "Fix:" in str(info.value)
