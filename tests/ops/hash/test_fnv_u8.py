"""vyre-primitives' packed-byte FNV-1a builders (fnv1a32_program_u8 / _dyn_u8, fnv1a64_program_u8 /
_n_u8) on the reference and on Vulkan (as written and optimised), against the FNV-1a spec
(codecs_ref) and the u32-per-byte ops they pack: lengths that are not a multiple of 4 (the
unsized variants hash exactly the bytes bound, never the padding of the last word)."""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import DataType
from vyre_vk.ops.hash.fnv1a32 import fnv1a32_n, fnv1a32_program_dyn_u8, fnv1a32_program_u8
from vyre_vk.ops.hash.fnv1a64 import fnv1a64_n, fnv1a64_program_n_u8, fnv1a64_program_u8

from ..oracles import codecs_ref as R

DYN32 = fnv1a32_program_dyn_u8("input", "out")
DYN64 = fnv1a64_program_u8("input", "out")


def both(device, program, data: bytes) -> list[int]:
    """`out` on the reference, checked equal on Vulkan as written and optimised."""
    inputs = {"input": np.frombuffer(data, np.uint8)}
    want = reference.run(program, inputs)["out"].tolist()
    for opt in (False, True):
        assert device.compile(program, optimize=opt).run(inputs)["out"].tolist() == want, opt
    return want


def split64(h: int) -> list[int]:
    return [h & 0xFFFFFFFF, h >> 32]


@pytest.mark.parametrize("data", [b"a", b"abc", b"Wikipedia", b"\xff\x00\x80\x7f\x01", bytes(range(256)) * 3 + b"xy"])
def test_unsized_u8_variants_hash_exactly_the_bound_bytes(vk_device, data):
    assert both(vk_device, DYN32, data) == [R.fnv1a32(data)]
    assert both(vk_device, DYN64, data) == split64(R.fnv1a64(data))


def test_sized_u8_variants_match_the_spec_and_the_u32_ops(vk_device):
    rng = np.random.default_rng(8)
    data = rng.integers(0, 256, 13).astype(np.uint8).tobytes()
    p32, p64 = fnv1a32_program_u8("input", "out", 13), fnv1a64_program_n_u8("input", "out", 13)
    assert both(vk_device, p32, data) == [R.fnv1a32(data)]
    assert both(vk_device, p64, data) == split64(R.fnv1a64(data))
    # the u32-per-byte ops (one byte in each word's low 8 bits, junk above) give the same hashes
    words = np.frombuffer(data, np.uint8).astype(np.uint32) | (rng.integers(0, 2**24, 13).astype(np.uint32) << 8)
    for op, want in ((fnv1a32_n, [R.fnv1a32(data)]), (fnv1a64_n, split64(R.fnv1a64(data)))):
        p = op("input", "out", 13)
        (inp,), (out,) = [b.name for b in p.buffers if b.is_input], [b.name for b in p.buffers if b.is_result]
        assert reference.run(p, {inp: words})[out].tolist() == want
    # a longer bound input: only the first n bytes count
    assert both(vk_device, p32, data + b"zzz") == [R.fnv1a32(data)]


def test_u8_programs_are_vyre_primitives_shape():
    p = fnv1a32_program_u8("src", "h", 513)
    assert [(b.name, b.element, b.count, b.access.value) for b in p.buffers] == [
        ("src", DataType.U8, 513, "ReadOnly"), ("h", DataType.U32, 1, "ReadWrite")]
    assert p.workgroup_size == (1, 1, 1) and p.entry[0].generator == "vyre-primitives::hash::fnv1a32"
    assert fnv1a64_program_n_u8("i", "o", 5).buffers[1].count == 2 and DYN64.buffers[0].count == 0
    assert DYN32.entry[0].source_region is None
