"""nn::attention::quest_paging beyond the tables: the straight-line program at its largest shape."""
from vyre_vk.testing.parity import compare

from ..harness import oracle_runs
from ..measure import np_error


def test_quest_paging_direct_program_random(vk_device):
    """num_pages <= 8, k <= 4, d_head <= 16: the straight-line program, at its largest shape.
    (vyre nests the picks and best scores inline, a tree exponential in num_pages * k; the port
    Let-binds each step: 8 pages x 4 ranks lowers to ~8 KB of GLSL instead of not compiling.)"""
    params = {"num_pages": 8, "k": 4, "d_head": 16}
    for program, ref, got, want in oracle_runs("vyre-libs::nn::attention::quest_paging", vk_device, params, range(3)):
        assert program.workgroup_size == (1, 1, 1)
        assert np_error(ref, want) <= 5
        assert compare(program, ref, got, 4).ok
