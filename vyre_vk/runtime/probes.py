"""The fused-fma probe: may this device's shaders use fma-based exact fast paths?

Vulkan lets ``fma()`` round twice (its precision is inherited from a multiply and an add);
NVIDIA's rounds once, lavapipe's may not. The fast division path (vyre_vk.lower.ieee.FUSED)
is exact only with a single rounding: its residuals ``|a| - q |b|`` must come out exact.
So when a device opens, the division itself is dispatched with the fast path on quotients
chosen to sit next to a rounding midpoint (where a doubly rounded residual picks the wrong
neighbour) plus random operands in the fast window, and compared bit for bit with the
correctly rounded quotients computed here. The GLSL is what the lowering emits for an IR
division (``lower(..., fused_fma=True)``), so the probe checks the very helper the
shaders call; GLSL makes every precise ``fma()`` of a device round the same way.

>>> cases = probe_cases()
>>> len(cases[0]) == len(cases[1]) == len(cases[2]) == PROBE_CASES
True
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from vyre_vk import spirv
from vyre_vk.runtime import kp_bridge

if TYPE_CHECKING:
    import kp

#: Operand pairs the probe divides: half near-midpoint quotients, half random in the window.
PROBE_CASES = 4096
PROBE_LOCAL_SIZE = 64


def probe_cases(n: int = PROBE_CASES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, expected a / b) as float32; the quotient is rounded once, to nearest even
    (float64 division then float32: double rounding cannot hit a midpoint for p = 24).
    Every quotient is normal: the reference flushes subnormal results, IEEE does not."""
    rng = np.random.default_rng(20261203)
    half = n // 2
    q = ((rng.random(half) + 1.0) * 2.0 ** rng.integers(-30, 30, half)).astype(np.float32)
    b_mid = ((rng.random(half) + 1.0) * 2.0 ** rng.integers(-40, 40, half)).astype(np.float32)
    a_mid = (q.astype(np.float64) * (1 + 2.0 ** -24) * b_mid.astype(np.float64)).astype(np.float32)
    sign = np.where(rng.random(n - half) < 0.5, -1.0, 1.0)
    a_rand = (sign * (rng.random(n - half) + 1.0) * 2.0 ** rng.integers(-60, 60, n - half)).astype(np.float32)
    b_rand = ((rng.random(n - half) + 1.0) * 2.0 ** rng.integers(-60, 60, n - half)).astype(np.float32)
    a, b = np.concatenate([a_mid, a_rand]), np.concatenate([b_mid, b_rand])
    return a, b, (a.astype(np.float64) / b.astype(np.float64)).astype(np.float32)


@dataclass(frozen=True)
class FmaProbe:
    """How many probe quotients the fused-fma division path got right."""
    correct: int
    total: int

    @property
    def passed(self) -> bool:
        return self.correct == self.total

    def __str__(self) -> str:
        verdict = "fused (fast exact division)" if self.passed else "not fused (integer division)"
        return f"fma probe: {verdict}, {self.correct} of {self.total} quotients exact"


@functools.lru_cache(maxsize=1)
def division_spirv() -> bytes:
    """SPIR-V of `q[i] = a[i] / b[i]` lowered with the fused-fma division (what the probe runs)."""
    from vyre_vk.ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program
    from vyre_vk.lower import lower

    f32, i = DataType.F32, Expr.var("i")
    program = Program.wrapped(
        [BufferDecl.storage("a", 0, BufferAccess.ReadOnly, f32).with_count(PROBE_CASES),
         BufferDecl.storage("b", 1, BufferAccess.ReadOnly, f32).with_count(PROBE_CASES),
         BufferDecl.output("q", 2, f32).with_count(PROBE_CASES)],
        (PROBE_LOCAL_SIZE, 1, 1),
        [Node.let_bind("i", Expr.gid_x()),
         Node.if_then(Expr.lt(i, Expr.u32(PROBE_CASES)),
                      [Node.store("q", i, Expr.div(Expr.load("a", i), Expr.load("b", i)))])])
    low = lower(program, fused_fma=True)
    return spirv.compile_glsl(low.glsl, name="vyre-vk-fma-probe.comp", target_env=low.target_env)


def fma_probe(mgr: "kp.Manager") -> FmaProbe:
    """Dispatch the probe on ``mgr``'s device (one small compile, cached, and one dispatch)."""
    a, b, want = probe_cases()
    words = division_spirv()
    tensors = [kp_bridge.tensor(mgr, a), kp_bridge.tensor(mgr, b), kp_bridge.tensor(mgr, np.zeros_like(a))]
    algo = kp_bridge.algorithm(mgr, tensors, words, (PROBE_CASES // PROBE_LOCAL_SIZE, 1, 1))
    seq = mgr.sequence()
    try:
        (seq.record(kp_bridge.sync_device(tensors)).record(kp_bridge.dispatch(algo))
            .record(kp_bridge.sync_local([tensors[2]])).eval())
        got = np.asarray(tensors[2].data()).view(np.float32)[:PROBE_CASES].copy()
    finally:
        for obj in (seq, algo, *tensors):
            obj.destroy()
    return FmaProbe(int(np.count_nonzero(got.view(np.uint32) == want.view(np.uint32))), PROBE_CASES)


__all__ = ["FmaProbe", "PROBE_CASES", "PROBE_LOCAL_SIZE", "division_spirv", "fma_probe", "probe_cases"]
