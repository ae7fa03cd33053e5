"""tools/bench/ops.py --smoke runs end to end on lavapipe, so the op-level benchmark cannot rot."""
import doctest
import json
import subprocess
import sys
from pathlib import Path

from vyre_vk.ops import all_ops

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools/bench"))

import op_inputs  # noqa: E402
import ops  # noqa: E402
import ops_report  # noqa: E402
import torch_equivalents  # noqa: E402

OPS = ["vyre-libs::nn::softmax", "vyre-libs::nn::gelu", "vyre-libs::math::reduce_variance", "vyre-libs::nn::embedding"]


def test_smoke_run_writes_checked_numbers_for_the_selected_ops(tmp_path):
    only = [a for op in OPS for a in ("--only", op.replace("vyre-libs", "*"))]  # globs: exact ids
    out = subprocess.run([sys.executable, str(ROOT / "tools/bench/ops.py"), "--smoke", "--fast", "--out", str(tmp_path),
                          *only], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads((tmp_path / "ops.json").read_text())
    assert sorted(r["op"] for r in result["ops"]) == sorted(OPS)
    for r in result["ops"]:
        assert r["check_registered"]["ok"], r
        for key in ("ours_gpu_ms", "ours_e2e_ms", "critical_path_ms", "memory_bound_ms", "bound_ms"):
            assert r[key] > 0, (r["op"], key)
        assert r["bound_ms"] == max(r["critical_path_ms"], r["memory_bound_ms"])
        assert r["fast_gpu_ms"] > 0 and r["fast_check"]["ok"], r  # --fast: both precisions side by side
    assert "geomean_gpu_ratio_vs_torch" in result and "geomean_fast_ratio_vs_torch" in result
    assert result["failures"] == []
    assert "geomean GPU-time ratio" in out.stdout and "nn::softmax" in out.stdout


def test_every_op_declares_a_bench_size_and_every_equivalent_names_an_op():
    ids = {e.id for e in all_ops()}
    assert [e.id for e in all_ops() if e.bench is None] == []
    assert set(torch_equivalents.EQUIVALENTS) <= ids
    assert set(op_inputs.OVERRIDES) <= ids and set(op_inputs.GRIDS) <= ids


def test_inputs_cover_every_input_buffer_at_the_registered_size():
    for entry in all_ops():
        program = entry.build()
        inputs, _ = op_inputs.make_inputs(entry, dict(entry.params), program)
        for b in program.input_buffers:
            assert inputs[b.name].dtype == b.element.numpy and inputs[b.name].size >= max(b.count, 1), (entry.id, b)


def test_selection_geomean_and_doctests():
    entries = all_ops()
    assert [e.id for e in ops.select(entries, ["*::nn::softmax"])] == ["vyre-libs::nn::softmax"]
    assert len(ops.select(entries, ["softmax"])) > 1  # a plain pattern is a substring
    assert ops.geomean([2.0, 8.0]) == 4.0 and ops.geomean([]) is None and ops.geomean([float("nan")]) is None
    for module in (op_inputs, ops_report):
        assert doctest.testmod(module).failed == 0


def test_stage_times_reports_every_dispatch_of_a_split_schedule():
    import stage_times

    assert stage_times.parse("nn::softmax@n=1000, k=2") == ("vyre-libs::nn::softmax", {"n": 1000, "k": 2})
    (row,) = stage_times.main(["nn::attention@seq_len=12,head_dim=20"], repeats=1)
    # the tabulated attention schedule: dispatches and barriers alternate, one time per recorded op
    assert len(row["per_op_s"]) >= 5 and row["total_s"] > 0 and all(t >= 0 for t in row["per_op_s"])


def test_fast_check_is_normwise():
    import numpy as np

    e = {"o": np.float32([4.0, 0.0, -2.0]), "n": np.uint32([1, 2])}
    same = {"o": e["o"].copy(), "n": e["n"].copy()}
    assert ops.normwise_ulps(e, same) == 0.0
    near_zero = {"o": np.float32([4.0, 2 ** -21, -2.0]), "n": e["n"]}  # 1 ULP of 4.0, unbounded ULPs of 0
    assert ops.normwise_ulps(e, near_zero) == 1.0
    assert ops.normwise_ulps(e, {"o": e["o"], "n": np.uint32([1, 3])}) == float("inf")  # integers: equal
    assert ops.normwise_ulps(e, {"o": np.float32([4.0, np.nan, -2.0]), "n": e["n"]}) == float("inf")
