"""tools/bench/run.py --smoke runs end to end, so the benchmark cannot rot."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_smoke(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "tools/bench/run.py"), "--smoke", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads((tmp_path / "bench.json").read_text())
    lat = result["latency"]
    assert lat["vyre_vk_kernel_run_us"] > 0 and lat["raw_kp_same_work_us"] > 0
    assert result["elementwise"][0]["ours_gbps"] > 0
    seed = result["seed"][0]
    assert (seed["model_dim"], seed["hidden_dim"]) == (16, 64)
    assert all(v < 1e-3 for k, v in seed.items() if k.endswith("rel_err"))
    assert result["compile"]["cold_ms"] > result["compile"]["warm_disk_ms"] > 0
    # the wgpu-py peer (a test dependency) ran in the same run, its results checked inside
    assert result["peers"]["wgpu"] == result["device"], result["peers"]
    assert lat["wgpu_submit_wait_us"] > 0
    assert result["elementwise"][0]["wgpu_gbps"] > 0
    assert seed["wgpu_ms"] > 0 and seed["wgpu_rel_err"] < 1e-3


def test_wgpu_peer_results_are_checked():
    """The peer's kernels compute the right numbers (a wrong WGSL seed op would fail the run)."""
    import numpy as np
    sys.path.insert(0, str(ROOT / "tools/bench"))
    import peer_wgpu
    import pytest
    assert peer_wgpu.available() is None
    peer = peer_wgpu.Peer()
    rng = np.random.default_rng(5)
    m, h = 24, 40
    x, b1, go = (rng.standard_normal(k).astype(np.float32) for k in (m, h, m))
    w1, w2 = rng.standard_normal(m * h).astype(np.float32), rng.standard_normal(h * m).astype(np.float32)
    W1, W2 = w1.astype(np.float64).reshape(m, h), w2.astype(np.float64).reshape(h, m)
    hid = b1 + x.astype(np.float64) @ W1
    want = W1 @ ((W2 @ go) * np.maximum(0.5 * hid, 2 * hid))
    assert peer_wgpu.seed(peer, x, w1, b1, w2, go, want, 1)["wgpu_rel_err"] < 1e-5
    with pytest.raises(AssertionError, match="relative error"):
        peer_wgpu.seed(peer, x, w1, b1, w2, go, want * 1.01, 1)


def test_seed_passes_times_the_program_as_written_against_the_optimised_graph(vk_device):
    """tools/bench/seed_passes.py once compared the optimised kernel with itself
    (Device.compile optimises by default), reporting 1.0x on lavapipe instead of ~300x."""
    sys.path.insert(0, str(ROOT / "tools/bench"))
    import seed_passes
    from vyre_vk.ops import get
    program = get("vyre-libs::nn::mlp_backward").build_with(model_dim=16, hidden_dim=64)
    off, on = seed_passes.compiled(vk_device, program)
    assert len(off.stages) == 1 and off.stages[0].program == program
    assert len(on.stages) == 3 and on.stages[-1].program != program


def test_transcendental_bench_smoke(tmp_path):
    """tools/bench/transcendental.py --smoke: ours matches the reference on every element (the
    float-float lowering), and the builtin column is measured against the same reference."""
    out = subprocess.run([sys.executable, str(ROOT / "tools/bench/transcendental.py"), "--smoke", "--out",
                          str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = json.loads((tmp_path / "transcendental.json").read_text())["rows"]
    assert [r["fn"] for r in rows] == ["exp", "tanh"]
    for r in rows:
        assert r["n"] == 4096
        assert r["ours"]["max_ulp"] <= 1 and r["ours"]["differ_share"] < 1e-3
        assert r["builtin"]["max_ulp"] >= 0 and r["ours_gpu_ms"] > 0 and r["builtin_gpu_ms"] > 0


def test_chain_latency_runs_and_every_exact_spelling_matches_numpy():
    out = subprocess.run([sys.executable, str(ROOT / "tools/bench/chain_latency.py"), "--steps", "256", "--reps", "1",
                          "--ring-log2", "10"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "bits differ" not in out.stdout.replace("plain", ""), out.stdout + out.stderr
    lines = [ln for ln in out.stdout.splitlines() if "ns/step" in ln]
    assert [ln.split()[0] for ln in lines] == ["fadd_plain", "fadd_branchless", "fadd_branchy", "fadd_alt", "welford_exact",
                                                   "welford_plain", "load_chase"]
    assert all(float(ln.split()[1]) > 0 for ln in lines)
