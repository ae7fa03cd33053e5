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
