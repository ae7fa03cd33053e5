"""substrate::{indexed_map, strided_accumulate} beyond the tables: indexed_map at sizes around its
4-lane workgroup (wrapping at u32::MAX); strided_accumulate's lane-0 partial over several tiles
and chunk counts on one workgroup, against NumPy, on the reference and on Vulkan; the child
Regions; the racy grid vyre infers when n > tile is pinned, not relied on."""
import numpy as np
import pytest

from vyre_vk.ops.builder import INDEXED_MAP_OP_ID, STRIDED_ACCUMULATE_OP_ID
from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.substrate import catalog

from ..harness import run_both, run_equal
from ..oracles.substrate_catalog import strided_lane0_np
from ..oracles.u32_edges import edgy_u32

U32 = np.uint32


@pytest.mark.parametrize("n", [1, 3, 4, 5, 1001])
def test_indexed_map_adds_one_wrapping(n, vk_device):
    x = edgy_u32(np.random.default_rng(n), n)
    x[-1] = 0xFFFFFFFF
    _, ref = run_equal(INDEXED_MAP_OP_ID, vk_device, {"input": x}, n=n)
    assert ref["out"].tolist() == [(v + 1) % 2**32 for v in x.tolist()]


def test_indexed_map_child_region():
    (outer,) = catalog.indexed_map().entry
    (child,) = outer.body
    assert (outer.generator, child.generator, child.source_region) == (INDEXED_MAP_OP_ID,) * 3


@pytest.mark.parametrize("n,tile", [(1, 1), (4, 4), (7, 2), (100, 8), (1000, 64), (5000, 256), (3, 64)])
def test_strided_accumulate_lane0_partial(n, tile, vk_device):
    values = edgy_u32(np.random.default_rng(n * 7 + tile), n)
    program, ref, got = run_both(STRIDED_ACCUMULATE_OP_ID, vk_device, {"values": values}, grid=(1, 1, 1),
                                 n=n, tile=tile)
    assert program.workgroup_size == (tile, 1, 1)
    want = sum(values[::tile].tolist()) % 2**32
    assert ref["out"].tolist() == [want] == got["out"].tolist()
    np.testing.assert_array_equal(ref["out"], strided_lane0_np(values, tile))


def test_strided_accumulate_child_region_and_inferred_grid():
    p = catalog.strided_accumulate()
    (outer,) = p.entry
    child = outer.body[1]
    assert (outer.generator, child.generator, child.source_region) == (STRIDED_ACCUMULATE_OP_ID,) * 3


def test_strided_accumulate_inferred_grid_is_one_workgroup_when_n_fits_the_tile(vk_device):
    values = np.asarray([5, 6, 7], U32)
    _, ref = run_equal(STRIDED_ACCUMULATE_OP_ID, vk_device, {"values": values}, n=3, tile=4)
    assert ref["out"].tolist() == [5]


@pytest.mark.parametrize("n,tile", [(0, 4), (4, 0)])
def test_strided_accumulate_refuses_empty_sizes(n, tile):
    with pytest.raises(OpParamError, match="Fix: "):
        catalog.strided_accumulate(n, tile)
