"""Oracles of the ops in vyre_vk/ops/math/conv (3x3, zero padding)."""
from __future__ import annotations

import numpy as np

from .core import d, exact, normal, oracle


def _patches(img, h, w):
    """[h*w, 9] zero-padded 3x3 neighbourhoods, tap order ky*3+kx."""
    pad = np.zeros((h + 2, w + 2))
    pad[1:-1, 1:-1] = d(img).reshape(h, w)
    return np.stack([pad[ky:ky + h, kx:kx + w].reshape(-1) for ky in range(3) for kx in range(3)], axis=1)


@oracle("vyre-libs::math::conv::conv2d_3x3_direct", {"h": 16, "w": 16}, 10,
        "9 products summed in sequence (<= 10 roundings), in ULPs of sum |terms|")
def _():
    def np_fn(ins, p):
        terms = _patches(ins["input"], p["h"], p["w"]) * d(ins["kernel"])[None, :]
        return {"output": (terms.sum(axis=1), np.abs(terms).sum(axis=1))}
    return (lambda rng, p: {"input": normal(rng, p["h"] * p["w"]), "kernel": normal(rng, 9)}, np_fn)


@oracle("vyre-libs::math::conv::im2col_3x3", {"h": 12, "w": 14}, 0, "copies and zeros: exact")
def _():
    return (lambda rng, p: {"input": normal(rng, p["h"] * p["w"])},
            lambda ins, p: {"output": exact(_patches(ins["input"], p["h"], p["w"]).reshape(-1))})
