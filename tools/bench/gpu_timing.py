"""GPU time of one dispatch from Vulkan timestamps, for the probes that time hand-written shaders
on raw kp (gemv_layouts.py, welford_chain.py, seed_schedules.py)."""
from __future__ import annotations

import time


def dispatch_seconds(mgr, algo, reps: int, period_ns: float = 1.0, warm_s: float = 0.0,
                     warm_evals: int = 0, ordered: bool = False) -> list[float]:
    """Seconds of `reps` dispatches of `algo`, each its own submission, timed by timestamps around
    it; first `warm_evals` dispatches and then more for `warm_s` seconds (clocks up, caches warm).
    ``ordered``: recorded without kp's barriers (kp_bridge.dispatch)."""
    from vyre_vk.runtime import kp_bridge

    seq = mgr.sequence(0, 2).record(kp_bridge.dispatch(algo, ordered=ordered))
    try:
        for _ in range(warm_evals):
            seq.eval()
        end = time.perf_counter() + warm_s
        while time.perf_counter() < end:
            seq.eval()
        out = []
        for _ in range(reps):
            seq.eval()
            t = seq.get_timestamps()
            out.append((t[-1] - t[0]) * period_ns * 1e-9)
        return out
    finally:
        seq.destroy()
