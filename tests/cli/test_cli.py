"""The vyre-vk command line: main job, run table, emit, shaders/ drift and spirv-val."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vyre_vk.cli import SHADERS_DIR, main
from vyre_vk.ops import all_ops, get

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vyre_vk.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def test_main_job_runs_the_seed_op_and_matches_reference():
    out = cli("main", "--model-dim", "16", "--hidden-dim", "32")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "device     [0]" in out.stdout
    assert "grad_x = [2.0, 4.0]" in out.stdout
    assert out.stdout.strip().endswith("matches reference")


RUN_TABLE_OPS = ("vyre-libs::nn::softmax", "vyre-libs::hash::crc32", "vyre-libs::parsing::bracket_match")


def test_run_prints_a_pass_table():
    out = cli("run", *RUN_TABLE_OPS)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    for op in RUN_TABLE_OPS:
        rows = [line.split() for line in lines if line.startswith(op + " ")]
        assert rows and all(r[2:4] == ["pass", "pass"] for r in rows), out.stdout
    assert "all passed" in out.stdout


def test_run_all_checks_every_registered_op_once(monkeypatch, capsys):
    # what --all selects; each op's own check (vyre_vk.testing.vectors.check_op, the work behind every
    # row) runs for every op in tests/ops/test_vectors.py, so here it is counted, not repeated
    import vyre_vk.testing.vectors as vectors

    seen = []
    monkeypatch.setattr(vectors, "check_op", lambda entry, dev, precision: seen.append(entry.id) or [])
    assert main(["run", "--all"]) == 0
    assert seen == [e.id for e in all_ops()] and len(set(seen)) == len(seen) >= 200
    assert "all passed" in capsys.readouterr().out


def test_run_unknown_op_is_a_clear_error():
    out = cli("run", "vyre-libs::nn::nope")
    assert out.returncode != 0 and "no op `vyre-libs::nn::nope` is registered" in out.stderr


def test_emit_registered_op_with_builder_args(tmp_path):
    # --as-written: the one stage of the program as given
    assert main(["emit", "vyre-libs::nn::mlp_backward", "--arg", "model_dim=4", "--arg", "hidden_dim=8",
                 "-o", str(tmp_path), "--disasm", "--validate", "--as-written"]) == 0
    stem = "vyre-libs__nn__mlp_backward"
    glsl = (tmp_path / f"{stem}.stage0.comp").read_text()
    assert "layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;" in glsl
    assert re.search(r"if \((v_)?i < 4u\)", glsl)  # model_dim=4 reached the program (any local-name prefix)
    assert (tmp_path / f"{stem}.stage0.spv").read_bytes()[:4] == b"\x03\x02\x23\x07"
    assert "OpEntryPoint GLCompute" in (tmp_path / f"{stem}.stage0.spvasm").read_text()
    # default: the optimised stages the runtime dispatches, each with its .spvasm
    assert main(["emit", "vyre-libs::nn::mlp_backward", "--arg", "model_dim=4", "--arg", "hidden_dim=8",
                 "-o", str(tmp_path), "--disasm", "--validate"]) == 0
    stages = json.loads((tmp_path / "manifest.json").read_text())["stages"]
    assert len(stages) == 3 and all("local_size_x = 256" in (tmp_path / s["comp"]).read_text() for s in stages)
    assert all("OpEntryPoint GLCompute" in (tmp_path / f"{stem}.stage{k}.spvasm").read_text() for k in range(3))


def test_emit_program_json_file(tmp_path):
    src = tmp_path / "seed.json"
    src.write_text(get("vyre-libs::nn::mlp_backward").build().to_json())
    assert main(["emit", str(src), "-o", str(tmp_path / "out"), "--validate"]) == 0
    assert (tmp_path / "out" / "seed.stage0.spv").exists()
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["op"] is None and manifest["name"] == "seed"


def test_emit_malformed_json_fails_cleanly(tmp_path):
    src = tmp_path / "bad.json"
    src.write_text(json.dumps({"format": "vyre-vk-program", "version": 1, "buffers": 3}))
    out = cli("emit", str(src), "-o", str(tmp_path))
    assert out.returncode != 0
    assert out.returncode == 2 and f"vyre-vk: error: {src}: $" in out.stderr and "Fix:" in out.stderr
    assert "Traceback" not in out.stderr
    assert not list(tmp_path.glob("*.spv"))


def test_shaders_folder_has_no_drift(capsys):
    # in-process, like the drift test below: the second regeneration in one worker is compile-cache hits
    assert main(["shaders", "--check"]) == 0, capsys.readouterr().out


def test_shaders_drift_is_detected(tmp_path, capsys):
    copy = tmp_path / "shaders"
    shutil.copytree(SHADERS_DIR, copy)
    comp = next(copy.glob("*/*.comp"))
    comp.write_text(comp.read_text() + "// edited\n")
    (copy / "old.spv").write_bytes(b"")  # a flat file of the old layout: an orphan
    manifest = next(copy.glob("*/manifest.json"))
    manifest.unlink()
    assert main(["shaders", "--check", "--dir", str(copy)]) == 1
    out = capsys.readouterr().out
    for line in (f"drift: {comp.parent.name}/{comp.name} (stale)", "drift: old.spv (orphan)",
                 f"drift: {manifest.parent.name}/manifest.json (missing)"):
        assert line in out


def _shader_stages():
    for manifest in sorted(SHADERS_DIR.glob("*/manifest.json")):
        for stage in json.loads(manifest.read_text())["stages"]:
            yield pytest.param(manifest.parent / stage["spirv"], stage["target_env"], id=stage["spirv"])


@pytest.mark.parametrize("spv,target_env", list(_shader_stages()))
def test_every_shader_passes_spirv_val(spv, target_env):
    res = subprocess.run(["spirv-val", "--target-env", target_env, str(spv)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_registered_op_has_its_stages_and_manifest():
    for e in all_ops():
        folder = SHADERS_DIR / e.id.replace("::", "__")
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["op"] == e.id and manifest["program_hash"] == e.build().content_hash()
        assert manifest["options"]["passes"] is True and manifest["stages"]
        assert all((folder / s["spirv"]).exists() and (folder / s["comp"]).exists() for s in manifest["stages"])
