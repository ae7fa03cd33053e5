"""Oracle of vyre_vk/ops/security/label_by_family: the set {v < node_count : tags[v] ∩ family ≠ ∅}
(family bits tested one at a time, per node), joined to the NodeSet's initial members (the kernel
only adds bits). Exact."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .security_catalog import members, nodeset, words_of
from .u32_edges import edgy_u32

# SANITIZER | RECEIVE | a launch bit: three families at once, one of them bit 31.
MASK = (1 << 3) | (1 << 1) | (1 << 31)


@oracle("vyre-libs::security::label_by_family", {"node_count": 5000, "family_mask": MASK}, 0,
        "per-node family-bit membership, OR the initial NodeSet: exact")
def _label_by_family():
    def inputs(rng, p):
        n = p["node_count"]
        tags = edgy_u32(rng, n)
        tags[rng.integers(0, 3, n) == 0] = 0   # a third of the nodes untagged
        init = np.zeros(words_of(n), U32)
        init[::7] = edgy_u32(rng, init[::7].size)   # some initial members (kept: the kernel ORs)
        return {"node_tags": tags, "out": init}

    def numpy(ins, p):
        n, mask = p["node_count"], p["family_mask"]
        fam_bits = [b for b in range(32) if mask >> b & 1]
        tags = np.asarray(ins["node_tags"], np.uint64)
        hit = np.zeros(words_of(n) * 32, bool)
        for b in fam_bits:
            hit[:n] |= ((tags >> np.uint64(b)) & np.uint64(1)).astype(bool)
        return {"out": nodeset(hit | members(ins["out"]))}
    return inputs, numpy
