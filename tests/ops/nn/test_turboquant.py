"""nn::attention::turboquant beyond the tables: the straight-line program on random codes, and
the 3-bit code packing."""
import numpy as np

from vyre_vk.testing.parity import compare

from ..harness import oracle_runs
from ..measure import np_error
from ..oracles import ORACLES
from ..oracles.nn_attention import pack_3bit

OP = "vyre-libs::nn::attention::turboquant"


def test_turboquant_direct_program_random(vk_device):
    """seq_len <= 8, d_head <= 16: the straight-line program, random codes (3 x 3)."""
    params = {"seq_len": 3, "d_head": 3}
    for program, ref, got, want in oracle_runs(OP, vk_device, params, range(3)):
        assert program.workgroup_size == (1, 1, 1)
        assert np_error(ref, want) <= ORACLES[OP].ulp(params)
        assert compare(program, ref, got, 4).ok


def test_turboquant_codes_are_ten_3bit_fields_per_word():
    assert pack_3bit(np.array([1, 2, 3, 4])).tolist() == [0x8D1]
    assert pack_3bit(np.array([7] * 10 + [5])).tolist() == [0x3FFFFFFF, 5]
