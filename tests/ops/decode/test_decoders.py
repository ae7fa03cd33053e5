"""decode::hex, base64 and inflate_stored_block on the reference and on Vulkan against the
stdlib (binascii, base64, zlib): valid random inputs of several lengths, then each op's
documented handling of invalid input (invalid characters, '=' and high bits, bad stored-block
headers: traps on both backends), and the builder's length checks."""
import base64
import binascii
import zlib

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ops import get
from vyre_vk.ops.decode.base64 import standard_decode_table
from vyre_vk.ops.decode.hex import hex_decode, hex_decode_table
from vyre_vk.ops.decode.inflate import DYNAMIC_HUFFMAN_REJECT, FIXED_HUFFMAN_REJECT, RESERVED_BTYPE_FIX, \
    STORED_HEADER_FIX
from vyre_vk.ops.registry import OpParamError
from vyre_vk.reference.errors import TrapError
from vyre_vk.runtime import KernelTrapError

from ..harness import run_equal
from ..oracles import codecs_ref as R
from ..oracles.decode_inflate import stored_block

U32 = np.uint32
HEX, B64, INF = "vyre-libs::decode::hex", "vyre-libs::decode::base64", "vyre-libs::decode::inflate_stored_block"


def w(data) -> np.ndarray:
    return np.frombuffer(bytes(data), np.uint8).astype(U32)


# ------------------------------------------------------------------ hex
def run_hex(text: bytes, device, high_bits=None) -> list[int]:
    words = w(text) if high_bits is None else w(text) | high_bits
    ins = {"__vyre_decode_hex_input": words, "__vyre_decode_hex_table": np.asarray(hex_decode_table(), U32)}
    _, out = run_equal(HEX, device, ins, input_len=len(text))
    return out["__vyre_decode_hex_decoded"].tolist()


@pytest.mark.parametrize("n", [1, 3, 32, 1001])
def test_hex_matches_binascii(n, vk_device):
    data = np.random.default_rng(n).bytes(n)
    text = binascii.hexlify(data)
    assert run_hex(text, vk_device) == list(data)
    assert run_hex(text.upper(), vk_device) == list(data)
    assert binascii.unhexlify(text.upper()) == data


def test_hex_invalid_characters_are_zero_nibbles_and_high_bits_are_ignored(vk_device):
    assert run_hex(b"7aZ100", vk_device) == [0x7A, 0x01, 0x00]      # vyre's vector: Z -> 0
    assert run_hex(b"g1 f", vk_device) == [0x01, 0x0F]
    high = np.asarray([0x100, 0xABCD00, 0, 0xFFFFFF00], U32)
    assert run_hex(b"4D6E", vk_device, high) == [0x4D, 0x6E]


def test_hex_odd_length_is_refused():
    with pytest.raises(OpParamError, match="multiple of 2.*Fix:"):
        get(HEX).build_with(input_len=7)
    with pytest.raises(OpParamError):
        hex_decode("input", "output", -2)


# ------------------------------------------------------------------ base64
def run_b64(text: bytes, device):
    ins = {"__vyre_decode_base64_input": w(text), "__vyre_decode_base64_table": np.asarray(standard_decode_table(), U32),
           "__vyre_decode_base64_decoded_len": np.asarray([0xDEAD], U32)}
    _, out = run_equal(B64, device, ins, input_len=len(text))
    return out["__vyre_decode_base64_decoded"].tolist(), int(out["__vyre_decode_base64_decoded_len"][0])


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 47, 48, 100, 2000])
def test_base64_matches_the_stdlib(n, vk_device):
    data = np.random.default_rng(n).bytes(n)
    text = base64.b64encode(data)
    out, length = run_b64(text, vk_device)
    assert length == n
    assert out[:n] == list(data) and not any(out[n:])          # padded slots keep the output's zeros
    assert base64.b64decode(text) == data


def test_base64_invalid_characters_decode_as_zero_sextets(vk_device):
    assert run_b64(b"SGVsbG8*", vk_device) == ([72, 101, 108, 108, 111, 0], 6)   # vyre's vector
    out, length = run_b64(b"S!Vs", vk_device)
    assert (out, length) == (list(base64.b64decode(b"SAVs")), 3)                 # '!' reads as 'A'
    text = w(b"TWFu")
    text[1] = 0x100 + ord("W")                                                   # beyond the table: 0
    ins = {"__vyre_decode_base64_input": text, "__vyre_decode_base64_table": np.asarray(standard_decode_table(), U32),
           "__vyre_decode_base64_decoded_len": np.zeros(1, U32)}
    _, got = run_equal(B64, vk_device, ins, input_len=4)
    assert got["__vyre_decode_base64_decoded"].tolist() == list(base64.b64decode(b"TAFu"))


def test_base64_padding_inside_the_text_and_the_length_rule(vk_device):
    # vyre's vector: '=' in every quad drops those bytes; only the last two characters shorten the length
    assert run_b64(b"TWE=TWE=", vk_device) == ([77, 97, 0, 77, 97, 0], 5)
    assert run_b64(b"TQ==TQ==", vk_device) == ([77, 0, 0, 77, 0, 0], 4)
    words, _ = R.base64_decode(w(b"TQ==TQ=="), standard_decode_table())
    assert words.tolist() == [77, 0, 0, 77, 0, 0]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7, 10])
def test_base64_length_not_a_multiple_of_4_is_refused(n):
    with pytest.raises(OpParamError, match="multiple of 4.*Fix:"):
        get(B64).build_with(input_len=n)


# ------------------------------------------------------------------ inflate_stored_block
def run_inflate(block: bytes, n: int, device):
    words = np.zeros(n, U32)
    words[:len(block)] = w(block)[:n]
    ins = {"__vyre_decode_inflate_input": words, "__vyre_decode_inflate_inflated_len": np.asarray([7], U32)}
    _, out = run_equal(INF, device, ins, input_len=n)
    return out["__vyre_decode_inflate_decoded"].tolist(), int(out["__vyre_decode_inflate_inflated_len"][0])


@pytest.mark.parametrize("size", [0, 1, 5, 63, 64, 65, 1000])
def test_inflate_copies_zlib_stored_blocks(size, vk_device):
    payload = np.random.default_rng(size).bytes(size)
    block = stored_block(payload)
    assert block[0] & 0b111 == 0b001                        # BFINAL = 1, BTYPE = 00
    assert zlib.decompress(block, -15) == payload           # zlib inflates it to the payload
    for n in (len(block), len(block) + 9):                  # exact size, or with trailing bytes
        out, length = run_inflate(block, n, vk_device)
        assert length == size
        assert out[:size] == list(payload) and not any(out[size:])


def test_inflate_len_past_the_end_copies_what_is_there(vk_device):
    block = bytes([0x01, 0x20, 0x00, 0xDF, 0xFF]) + b"abc"  # LEN 32, NLEN its complement, 3 bytes present
    out, length = run_inflate(block, 8, vk_device)
    assert length == 32 and out == list(b"abc") + [0] * 5


@pytest.mark.parametrize("header,tag", [
    (bytes([0x01, 0x05, 0x00, 0xFA, 0xFE]), STORED_HEADER_FIX),     # NLEN != ~LEN
    (bytes([0x03, 0, 0, 0, 0]), FIXED_HUFFMAN_REJECT),               # BTYPE 01
    (bytes([0x05, 0, 0, 0, 0]), DYNAMIC_HUFFMAN_REJECT),             # BTYPE 10
    (bytes([0x07, 0, 0, 0, 0]), RESERVED_BTYPE_FIX),                 # BTYPE 11
])
def test_inflate_rejects_other_blocks_with_a_trap_on_both_backends(header, tag, vk_device):
    program = get(INF).build_with(input_len=12)
    ins = {"__vyre_decode_inflate_input": w(header.ljust(12, b"x")),
           "__vyre_decode_inflate_inflated_len": np.zeros(1, U32)}
    with pytest.raises(TrapError, match=tag[:40]):
        reference.run(program, ins)
    with pytest.raises(KernelTrapError) as info:
        vk_device.compile(program).run(ins)
    assert "Fix:" in str(info.value)


def test_inflate_real_zlib_compressed_block_is_not_stored_and_traps(vk_device):
    block = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = block.compress(b"abcabcabcabc" * 8) + block.flush()
    assert (data[0] >> 1) & 3 in (1, 2)
    program = get(INF).build_with(input_len=len(data))
    with pytest.raises(TrapError):
        reference.run(program, {"__vyre_decode_inflate_input": w(data),
                                "__vyre_decode_inflate_inflated_len": np.zeros(1, U32)})
