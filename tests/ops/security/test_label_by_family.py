"""label_by_family beyond its vector: vyre's own cases (label_by_family.rs and resolve_family.rs),
every word boundary (the atomic-OR word index past word 0), the initial NodeSet kept, node_count
past one workgroup, on the reference and on Vulkan against a Python loop; errors; doctest."""
import doctest

import numpy as np
import pytest

from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.security import label_by_family as lbf

from ..harness import run_equal
from ..oracles.u32_edges import edgy_u32

OP = lbf.OP_ID
U32 = np.uint32


def py_nodeset(tags, mask, init):
    out = [int(w) for w in init]
    for v, t in enumerate(tags):
        if int(t) & mask:
            out[v // 32] |= 1 << (v % 32)
    return out


@pytest.mark.parametrize("tags,mask,want", [
    ([0x01, 0x02, 0x06, 0x04], 0b0010, [0b0110]),       # registered: nodes 1 and 2
    ([0, 0, 0, 0], 0b0010, [0]),                       # empty tags
    ([0xFF] * 4, 0, [0]),                               # zero mask matches nothing
    ([0x01, 0x02, 0x04, 0x08], 0xFFFFFFFF, [0b1111]),   # universal mask
    ([0xFFFFFFFF] * 32, 0b0001, [0xFFFFFFFF]),          # a full word
    ([0x01, 0x02], 0, [0]),
])
def test_vyres_cases(tags, mask, want, vk_device):
    ins = {"node_tags": np.asarray(tags, np.uint64).astype(U32), "out": np.zeros(len(want), U32)}
    _, ref = run_equal(OP, vk_device, ins, node_count=len(tags), family_mask=mask)
    assert ref["out"].tolist() == want


@pytest.mark.parametrize("node_count", [31, 32, 33, 64, 65, 255, 256, 257, 1000])
def test_word_boundaries_and_initial_members(node_count, vk_device):
    rng = np.random.default_rng(node_count)
    tags = edgy_u32(rng, node_count)
    init = np.zeros(-(-node_count // 32), U32)
    init[-1] = 0x80000001   # kept: the kernel only ORs bits in
    mask = lbf.FAMILY_BITS["SANITIZER"] | lbf.FAMILY_BITS["GETS_LAUNCH"]
    _, ref = run_equal(OP, vk_device, {"node_tags": tags, "out": init}, node_count=node_count, family_mask=mask)
    assert ref["out"].tolist() == py_nodeset(tags.tolist(), mask, init.tolist())


def test_structure():
    p = lbf.label_by_family("tags", "set", 4, 2)
    (outer,) = p.entry
    assert (outer.generator, outer.body[0].generator, outer.body[0].source_region) == (
        OP, lbf.RESOLVE_FAMILY_OP_ID, OP)
    assert [(b.name, b.access.name, b.is_output) for b in p.buffers] == [
        ("tags", "ReadOnly", False), ("set", "ReadWrite", False)]


def test_errors_say_how_to_fix():
    with pytest.raises(OpParamError, match="node_count must be a positive u32.*Fix: "):
        lbf.label_by_family("tags", "out", 0, 0xFF)
    with pytest.raises(OpParamError, match="non-empty buffer name.*Fix: "):
        lbf.label_by_family("", "out", 4, 0xFF)
    with pytest.raises(OpParamError, match="family_mask must be a u32.*Fix: "):
        lbf.label_by_family("tags", "out", 4, 1 << 32)


def test_doctest():
    assert doctest.testmod(lbf).failed == 0
