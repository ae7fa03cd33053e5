"""decode::encodex: the histogram against np.histogram and the encoding id against the classifier's
rules (codecs_ref.encodex), on vyre's own test inputs and random texts of every kind, on the
reference and on Vulkan; the program is the nested-Region shape of issue 16."""
import numpy as np
import pytest

from vyre_vk.ir.validate import validate
from vyre_vk.ops import get
from vyre_vk.ops.decode.encodex import ENC_ASCII, ENC_ISO8859_1, ENC_UTF8, ENC_UTF16LE, encodex_gpu
from vyre_vk.ops.registry import OpParamError

from ..harness import run_equal
from ..oracles import codecs_ref as R
from ..oracles.decode_encodex import sample_text

U32 = np.uint32
OP = "vyre-libs::decode::encodex"
P = "__vyre_decode_encodex_"


def run(data: bytes, device, junk_histogram: bool = False):
    words = np.frombuffer(data, np.uint8).astype(U32) if data else np.zeros(1, U32)
    hist = np.full(256, 77, U32) if junk_histogram else np.zeros(256, U32)
    _, out = run_equal(OP, device, {P + "input": words, P + "histogram": hist}, count=len(data))
    return out[P + "histogram"], int(out[P + "encoding_id"][0])


@pytest.mark.parametrize("data,enc", [
    (b"Hello", ENC_ASCII), (bytes([0xC3, 0xA9, 0xC3, 0xA9]), ENC_UTF8), (bytes([0, 0, 0, 0x41]), ENC_UTF16LE),
    (bytes([0xE9, 0xE8, 0xEA]), ENC_ISO8859_1), (b"", ENC_ASCII),
    ("Grüße, naïve café".encode(), ENC_UTF8), ("hello".encode("utf-16-le"), ENC_UTF16LE),
])
def test_vyres_cases_and_plain_texts(data, enc, vk_device):
    hist, got = run(data, vk_device, junk_histogram=True)
    want_hist = np.histogram(np.frombuffer(data, np.uint8), bins=256, range=(0, 256))[0]
    assert hist.tolist() == want_hist.tolist()
    assert got == enc == R.encodex(data)[1]


@pytest.mark.parametrize("count", [1, 2, 7, 100, 255, 256])
def test_random_texts_match_numpy(count, vk_device):
    rng = np.random.default_rng(count)
    for _ in range(4):
        data = sample_text(rng, count)
        hist, enc = run(data, vk_device)
        want_hist, want_enc = R.encodex(data)
        assert hist.tolist() == np.bincount(np.frombuffer(data, np.uint8), minlength=256).tolist()
        assert hist.tolist() == want_hist.tolist() and enc == want_enc


def test_rule_order_utf16_over_ascii_then_utf8_over_utf16(vk_device):
    # the classifier's order (vyre's GPU body): the NUL rule overrides ASCII, UTF-8 overrides the NUL rule
    assert run(b"\0\0ab", vk_device)[1] == ENC_UTF16LE == R.encodex(b"\0\0ab")[1]
    data = b"\0" * 10 + "é".encode() * 20           # 10 NULs > 50 / 8, and a perfect UTF-8 shape
    assert run(data, vk_device)[1] == ENC_UTF8 == R.encodex(data)[1]


def test_program_is_the_nested_region_shape_and_validates():
    p = encodex_gpu("input", "output", 300)
    hist_child, classify_child = p.entry[0].body
    assert hist_child.generator == "vyre-primitives::text::byte_histogram_256"
    assert type(hist_child.body[-1]).__name__ == "Barrier"
    assert classify_child.generator == "vyre-primitives::text::encoding_classify"
    validate(p)


def test_bad_count_is_refused():
    with pytest.raises(OpParamError, match="Fix:"):
        get(OP).build_with(count=-1)
