"""Table, size labels and plot of tools/bench/ops.py's results (kept apart: ops.py measures)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional

import numpy as np


def _num(v: Any) -> str:
    """2^k for powers of two from 1024 up, else the value."""
    if isinstance(v, int) and not isinstance(v, bool) and v >= 1024 and v & (v - 1) == 0:
        return f"2^{v.bit_length() - 1}"
    return f"{v:g}" if isinstance(v, float) else str(v)


def size_label(entry, params: Mapping[str, Any]) -> str:
    """The size-like builder parameters (ints), e.g. ``seq_len=1024 head_dim=64``; 'fixed' if none.

    >>> class E: params = {"n": 4, "eps": 1e-5}
    >>> size_label(E, {"n": 1 << 20, "eps": 1e-5})
    'n=2^20'
    """
    parts = [f"{k}={_num(v)}" for k, v in params.items() if isinstance(v, int) and not isinstance(v, bool)]
    return " ".join(parts) or "fixed"


def _ms(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v:.4f}" if v < 0.01 else f"{v:.3f}" if v < 100 else f"{v:.1f}"


COLUMNS = ("op", "size", "ours GPU ms", "ours e2e ms", "torch GPU ms", "torch e2e ms", "ratio",
           "fast GPU ms", "fast ratio", "crit path ms", "mem bound ms", "ours/bound", "check")


def row_cells(r: dict) -> list[str]:
    if "error" in r:
        return [r["op"].replace("vyre-libs::", ""), r.get("size", "?"), *["-"] * 10, "ERROR"]
    check = "ok" if r["check_registered"]["ok"] and (r["check_bench"] or {"ok": True})["ok"] else "FAIL"
    if not r.get("fast_check", {"ok": True})["ok"]:
        check += " (fast over its bound)"
    fast = r.get("ratio_fast")
    if r.get("torch_agrees") is False:
        check += f" (torch differs {r['torch_rel_err']:.1e})"
    ratio = r.get("ratio_gpu")
    dist = r.get("distance_to_bound")
    return [r["op"].replace("vyre-libs::", ""), r["size"], _ms(r["ours_gpu_ms"]), _ms(r["ours_e2e_ms"]),
            _ms(r.get("torch_gpu_ms")), _ms(r.get("torch_e2e_ms")), f"{ratio:.2f}x" if ratio else "-",
            _ms(r.get("fast_gpu_ms")), f"{fast:.2f}x" if fast else "-", _ms(r["critical_path_ms"]), _ms(r["memory_bound_ms"]), f"{dist:.1f}x" if dist else "-", check]


def print_table(result: dict) -> None:
    rows = [list(COLUMNS)] + [row_cells(r) for r in result["ops"]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    dev = result["device"]
    print(f"device: {dev['name']} ({dev['class']}); torch {result['torch'] or 'not available'}; "
          f"bound model {result['model']['name']} ({result['model']['clock_ghz']} GHz, "
          f"{result['model']['bandwidth_gbps']:g} GB/s); {result['repeats']} repeats, medians")
    for k, row in enumerate(rows):
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if k == 0:
            print("  ".join("-" * w for w in widths))
    g = result["geomean_gpu_ratio_vs_torch"]
    print(f"geomean GPU-time ratio ours/PyTorch over {result['ops_with_torch']} op(s) with an equivalent: "
          + (f"{g:.2f}x" if g else "n/a (no PyTorch with CUDA in this run)"))
    gf = result.get("geomean_fast_ratio_vs_torch")
    if gf:
        print(f"geomean GPU-time ratio in the fast precision: {gf:.2f}x")
    if result["failures"]:
        print(f"FAILED checks: {', '.join(result['failures'])}")
    if result["torch_disagrees"]:
        print(f"PyTorch differs from ours (reported, not a failure): {', '.join(result['torch_disagrees'])}")


def plot(result: dict, path: Path) -> bool:
    """Per op, GPU ms of ours, PyTorch's and the bound (log scale); False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [r for r in result["ops"] if "error" not in r]
    names = [f"{r['op'].replace('vyre-libs::', '')} {r['size']}" for r in rows]
    y = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(11, max(3.0, 0.22 * len(rows) + 1.5)))
    series = (("ours_gpu_ms", "vyre-vk GPU"), ("torch_gpu_ms", "PyTorch GPU"), ("bound_ms", "bound"))
    for j, (key, label) in enumerate(series):
        vals = [r.get(key) or np.nan for r in rows]
        ax.barh(y + (j - 1) * 0.27, vals, 0.27, label=label)
    ax.set_yticks(y, names, fontsize=6)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("ms (median)")
    g = result["geomean_gpu_ratio_vs_torch"]
    ax.set_title(f"vyre-vk ops on {result['device']['name']}" + (f": geomean {g:.2f}x PyTorch" if g else ""))
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
