"""nn::logit_softcap beyond the tables: why vyre's vector differs from the math by 1 ULP (the
lane is listed in tests/ops/test_vectors.py VECTOR_DISAGREEMENTS)."""
import math

import numpy as np


def test_logit_softcap_disagreement_is_vyres_rounding():
    exact = 30.0 * math.tanh(0.5)
    assert np.float32(exact).view(np.uint32) == 0x415DD0F5
    assert np.float32(np.float32(math.tanh(0.5)) * np.float32(30.0)).view(np.uint32) == 0x415DD0F5
