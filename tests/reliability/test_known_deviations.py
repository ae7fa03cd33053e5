"""Pinned disagreements between the NumPy reference and vyre's documented semantics.

Strict xfail: when someone fixes one, the test starts passing and fails the suite, so the
pin (and the matching workaround in strategies.inputs_for) is removed on purpose.
"""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Program, wrap_anonymous


@pytest.mark.xfail(strict=True, reason=(
    "vyre_vk.reference canonicalises whole f32 input arrays when binding them; in vyre a storage "
    "buffer is bytes and canonical_f32 applies per load/store (IR-SPEC 8.2/8.3), so an element of a "
    "ReadWrite buffer no invocation touches keeps its bytes -- as the Vulkan kernel returns them. "
    "Found by tools/fuzz (seed 7): an empty program returned rw=[0.0] on the reference, [1.2e-42] on Vulkan."))
def test_untouched_read_write_f32_keeps_its_bytes(vk_device):
    p = Program.wrapped([BufferDecl.read_write("rw", 0, DataType.F32).with_count(3)], (1, 1, 1),
                        [wrap_anonymous("t", [])])
    raw = np.array([0x00000371, 0x7FC00001, 0x80000001], np.uint32).view(np.float32)  # subnormal, NaN payload, -subnormal
    gpu = vk_device.compile(p).run({"rw": raw})["rw"]
    assert gpu.view(np.uint32).tolist() == raw.view(np.uint32).tolist()  # the GPU keeps the bytes
    ref = reference.run(p, {"rw": raw})["rw"]
    assert ref.view(np.uint32).tolist() == raw.view(np.uint32).tolist()  # the reference does not (xfail)
