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
