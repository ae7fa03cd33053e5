"""CLI error paths: a `vyre-vk: error: ... Fix: ...` line and the documented exit code, never a
traceback (0 ok, 1 a check failed, 2 usage or input, 3 environment)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vyre_vk import cli, emit
from vyre_vk.cli import main
from vyre_vk.errors import VyreError
from vyre_vk.ops import OpEntry, all_ops, get
from vyre_vk.ops.registry import OpParamError, UnknownOp

ROOT = Path(__file__).resolve().parents[2]
SEED = "vyre-libs::nn::mlp_backward"
SEED_STEM = "vyre-libs__nn__mlp_backward"


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    """main(argv) in-process; argparse's own exits count as the return code."""
    try:
        rc = main(list(argv))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


def assert_error(rc: int, err: str, code: int, *needles: str) -> None:
    assert rc == code, err
    assert "Fix:" in err, err
    for n in needles:
        assert n in err, err


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*"))


def cli_env(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vyre_vk.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, **env})


# ---- 1. user errors: no traceback, exit 2, a Fix: hint ---------------------------------------
@pytest.mark.parametrize("arg,needles", [
    ("foo=3", ["['foo']", "hidden_dim", "model_dim"]),
    ("model_dim=abc", ["model_dim takes an integer", "--arg model_dim=2"]),
    ("model_dim=2.5", ["model_dim takes an integer"]),
    ("x", ["expected NAME=VALUE"]),
    ("=3", ["expected NAME=VALUE"]),
    ("model_dim=0", ["model_dim=0", "does not validate", "registered defaults"]),
    ("model_dim=-3", ["model_dim=-3"]),
    ("model_dim=99999999999", ["model_dim=99999999999"]),
])
def test_emit_bad_builder_arg_is_a_usage_error(capsys, tmp_path, arg, needles):
    rc, _, err = run_main(capsys, "emit", SEED, "--arg", arg, "-o", str(tmp_path / "out"))
    assert_error(rc, err, 2, "vyre-vk: error:", *needles)
    assert files_under(tmp_path) == []


def test_emit_float_builder_arg_is_parsed_as_a_number(capsys, tmp_path):
    rc, out, err = run_main(capsys, "emit", "vyre-libs::optim::ema_apply", "--arg", "decay=0.5",
                            "--arg", "n=8", "-o", str(tmp_path))
    assert rc == 0, err
    assert (tmp_path / "vyre-libs__optim__ema_apply.stage0.spv").exists() and (tmp_path / "manifest.json").exists()


def test_builder_rejecting_a_value_is_a_typed_error():
    with pytest.raises(OpParamError, match="power of two") as info:
        get("vyre-libs::math::fft::fft_radix2").build_with(n=3)
    e = info.value
    assert isinstance(e, VyreError) and isinstance(e, ValueError) and e.exit_code == 2
    assert "registered defaults: n=4" in str(e) and e.fix
    with pytest.raises(OpParamError, match=r"takes none"):
        get("vyre-libs::math::fft::fft4_complex").build_with(n=3)


def test_builder_bug_is_not_disguised_as_a_bad_value():
    def broken(n):
        raise TypeError("a bug in the builder")
    entry = OpEntry(id="test::broken", build=lambda: broken(1), builder=broken, params={"n": 1})
    with pytest.raises(TypeError, match="a bug") as info:
        entry.build_with(n=2)
    assert not isinstance(info.value, VyreError)


def test_builder_environment_error_passes_through():
    from vyre_vk.errors import EnvironmentProblem

    def build(n):
        if n > 1:
            raise EnvironmentProblem("simulated: cache unwritable. Fix: free space.")
        return get(SEED).build()
    entry = OpEntry(id="test::env", build=lambda: build(1), builder=build, params={"n": 1})
    with pytest.raises(EnvironmentProblem) as info:
        entry.build_with(n=2)
    assert not isinstance(info.value, OpParamError) and info.value.exit_code == 3


@pytest.mark.parametrize("argv,flag", [
    (["main", "--model-dim", "-1"], "--model-dim"),
    (["main", "--hidden-dim", "abc"], "--hidden-dim"),
    (["demo", "-n", "0"], "-n"),
])
def test_numeric_flags_must_be_positive(capsys, argv, flag):
    rc, _, err = run_main(capsys, *argv)
    assert_error(rc, err, 2, f"argument {flag}: expected a positive integer")


def test_emit_non_utf8_file(capsys, tmp_path):
    src = tmp_path / "bad.json"
    src.write_bytes(b'{"format": "\xff\xfe"}')
    rc, _, err = run_main(capsys, "emit", str(src), "-o", str(tmp_path / "out"))
    assert_error(rc, err, 2, str(src), "not UTF-8", "byte 0xff at offset 12")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("make,needle", [
    (lambda p: p / "missing.json", "no such file"),
    (lambda p: p, "is a directory"),
    (lambda p: p / "sub" / "nothing-here", "no such file"),
])
def test_emit_missing_file_or_directory(capsys, tmp_path, make, needle):
    rc, _, err = run_main(capsys, "emit", str(make(tmp_path)), "-o", str(tmp_path / "out"))
    assert_error(rc, err, 2, needle)


def test_emit_file_with_builder_args_is_refused(capsys, tmp_path):
    src = tmp_path / "seed.json"
    src.write_text(get(SEED).build().to_json())
    rc, _, err = run_main(capsys, "emit", str(src), "--arg", "model_dim=4", "-o", str(tmp_path))
    assert_error(rc, err, 2, "--arg applies to registered ops")


# ---- 2. --name cannot escape -o ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["../../x", "..", "a/b", "/tmp/evil", ".hidden", "", "a\\b", "-x"])
def test_emit_name_with_path_parts_is_refused(capsys, tmp_path, name):
    out = tmp_path / "a" / "b"
    rc, _, err = run_main(capsys, "emit", SEED, f"--name={name}", "-o", str(out))
    assert_error(rc, err, 2, "not a plain file stem")
    assert files_under(tmp_path) == []


def test_emit_plain_name_is_used(capsys, tmp_path):
    rc, out, _ = run_main(capsys, "emit", SEED, "--name", "mlp.v2", "-o", str(tmp_path))
    assert rc == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"] + [
        f"mlp.v2.stage{k}.{ext}" for k in range(3) for ext in ("comp", "spv")]


# ---- 3. --device-class is one the optimiser knows ----------------------------------------------
def test_device_class_choices(capsys, tmp_path):
    from vyre_vk.opt import device_class

    rc, _, err = run_main(capsys, "emit", SEED, "--explain", "--device-class", "bogus", "-o", str(tmp_path))
    assert_error(rc, err, 2, "invalid choice: 'bogus'", "llvmpipe")
    assert files_under(tmp_path) == []
    known = {device_class(n) for n in ("llvmpipe", "NVIDIA H200", "AMD Radeon", "Intel Arc", "unknown")}
    for cls in sorted(known):
        rc, out, _ = run_main(capsys, "emit", SEED, "--explain", "--device-class", cls, "-o", str(tmp_path))
        assert rc == 0 and f"passes (device class {cls})" in out


# ---- 4. unknown ops: close matches, not the whole registry -------------------------------------
def test_run_unknown_op_names_close_matches(capsys):
    rc, _, err = run_main(capsys, "run", "vyre-libs::nn::gleu")
    assert_error(rc, err, 2, "no op `vyre-libs::nn::gleu` is registered", "Did you mean: vyre-libs::nn::gelu",
                 "vyre-vk list")
    rc, _, err = run_main(capsys, "run", "no::op")
    assert_error(rc, err, 2, "no op `no::op`", "vyre-vk list", "vyre-vk run --all")
    assert len(err) < 400 and err.count("\n") == 1


def test_get_raises_a_typed_key_error():
    with pytest.raises(KeyError) as info:
        get("matmul")
    e = info.value
    assert isinstance(e, UnknownOp) and isinstance(e, VyreError) and e.exit_code == 2
    assert str(e).startswith("no op `matmul`") and "vyre-libs::math::matmul" in str(e)
    suggested = str(e).split("Did you mean: ")[1].split("?")[0].split(", ")
    assert 1 <= len(suggested) <= 5


def test_list_prints_ids_one_a_line(capsys):
    rc, out, _ = run_main(capsys, "list")
    assert rc == 0 and out.splitlines() == [e.id for e in all_ops()]
    rc, out, _ = run_main(capsys, "list", "vyre-libs::nn::att")
    assert rc == 0 and out.splitlines()[0] == "vyre-libs::nn::attention"
    assert all(i.startswith("vyre-libs::nn::att") for i in out.splitlines())
    rc, _, err = run_main(capsys, "list", "zzz")
    assert_error(rc, err, 2, "no registered op id starts with `zzz`")


def test_run_without_ops_is_a_usage_error(capsys):
    rc, _, err = run_main(capsys, "run")
    assert_error(rc, err, 2, "no ops given")


# ---- 5. exit codes: documented, and returned ---------------------------------------------------
@pytest.mark.parametrize("argv", [["--help"], ["emit", "--help"], ["doctor", "--help"]])
def test_help_documents_exit_codes(capsys, argv):
    rc, out, _ = run_main(capsys, *argv)
    assert rc == 0
    for line in ("0  ok", "1  a check failed", "2  usage or input error", "3  environment"):
        assert line in out


class _FakeDevice:
    index, name = 0, "fake"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_run_with_a_failing_op_exits_1(capsys, monkeypatch):
    import vyre_vk.runtime
    import vyre_vk.testing.vectors

    def check_op(entry, dev, precision):
        raise RuntimeError("simulated failure")
    monkeypatch.setattr(vyre_vk.runtime, "Device", _FakeDevice)
    monkeypatch.setattr(vyre_vk.testing.vectors, "check_op", check_op)
    rc, out, _ = run_main(capsys, "run", SEED)
    assert rc == 1 and "simulated failure" in out and "1 failed" in out


def test_environment_error_exits_3_in_process(capsys, monkeypatch):
    import vyre_vk.runtime
    from vyre_vk.runtime.kp_bridge import KomputeError

    def no_device(*a, **k):
        raise KomputeError("simulated: VYRE_VK_SPIN_WAIT_US is bad. Fix: unset it.")
    monkeypatch.setattr(vyre_vk.runtime, "Device", no_device)
    rc, _, err = run_main(capsys, "main")
    assert_error(rc, err, 3, "vyre-vk: error: simulated")


@pytest.mark.parametrize("argv,env,needle", [
    (["main"], {"VYRE_VK_DEVICE": "7"}, "device 7"),
    (["main"], {"VYRE_VK_SPIN_WAIT_US": "abc"}, "VYRE_VK_SPIN_WAIT_US"),
    (["main"], {"VK_ICD_FILENAMES": "/nonexistent.json", "VK_DRIVER_FILES": "/nonexistent.json"}, "vkCreateInstance"),
    (["doctor"], {"VK_ICD_FILENAMES": "/nonexistent.json", "VK_DRIVER_FILES": "/nonexistent.json"}, "vkCreateInstance"),
    (["main"], {"VYRE_VK_DEVICE": "99999999999999999999"}, "VYRE_VK_DEVICE"),
], ids=["device-index", "spin-wait", "no-driver-main", "no-driver-doctor", "huge-device-index"])
def test_environment_errors_exit_3(argv, env, needle):
    out = cli_env(*argv, **env)
    assert out.returncode == 3, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and needle in out.stdout + out.stderr
    assert "Fix:" in out.stderr  # errors go to stderr, doctor's report included


def test_missing_spirv_tool_exits_3(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(emit.shutil, "which", lambda tool: None)
    rc, _, err = run_main(capsys, "emit", SEED, "--validate", "-o", str(tmp_path))
    assert_error(rc, err, 3, "spirv-val not found")
    assert files_under(tmp_path) == []


# ---- 6. nothing half-written -------------------------------------------------------------------
def test_rejected_module_writes_nothing_and_keeps_old_files(capsys, monkeypatch, tmp_path):
    old = [tmp_path / f"{SEED_STEM}.stage0.comp", tmp_path / "manifest.json"]
    for path in old:
        path.write_text("OLD")
    real_run = subprocess.run

    def run(cmd, *a, **k):
        if cmd[0] == "spirv-val":
            return subprocess.CompletedProcess(cmd, 1, "simulated rejection\n", "")
        return real_run(cmd, *a, **k)
    monkeypatch.setattr(emit.subprocess, "run", run)
    rc, _, err = run_main(capsys, "emit", SEED, "--validate", "--disasm", "-o", str(tmp_path))
    assert_error(rc, err, 1, "spirv-val rejected", "simulated rejection", "nothing written")
    assert sorted(tmp_path.iterdir()) == sorted(old)  # no .spv, no temp folder
    assert all(path.read_text() == "OLD" for path in old)


def test_write_atomic_failure_leaves_the_old_file(tmp_path):
    target = tmp_path / "x.spv"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        cli.write_atomic(target, None)  # the write itself fails, after the temp file exists
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["x.spv"]
    target.chmod(0o640)
    cli.write_atomic(target, b"new")
    assert target.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["x.spv"]
    assert target.stat().st_mode & 0o777 == 0o640  # the old mode, not mkstemp's 0600


def test_unwritable_output_folder_is_an_error(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    rc, _, err = run_main(capsys, "emit", SEED, "-o", str(blocker / "out"))
    assert_error(rc, err, 2, "cannot write", "-o")


def test_shaders_writes_whole_files_with_normal_modes(capsys, monkeypatch, tmp_path):
    import vyre_vk.ops

    monkeypatch.setattr(vyre_vk.ops, "all_ops", lambda: [get(SEED), get("vyre-libs::nn::gelu")])  # fast
    target = tmp_path / "shaders"
    rc, out, _ = run_main(capsys, "shaders", "--dir", str(target))
    assert rc == 0 and "updated" in out
    files = [p for p in target.rglob("*") if p.is_file()]
    assert sorted(p.name for p in target.iterdir()) == sorted([SEED_STEM, "vyre-libs__nn__gelu"])
    assert {p.name for p in files} >= {"manifest.json", f"{SEED_STEM}.stage2.spv"}
    assert all(p.suffix in (".comp", ".spv", ".json") for p in files)  # no temp files left
    assert all(p.stat().st_mode & 0o077 for p in files)  # not mkstemp's private 0600
    rc, out, _ = run_main(capsys, "shaders", "--check", "--dir", str(target))
    assert rc == 0 and "up to date" in out


def test_negative_seed_is_a_usage_error(capsys):
    rc, _, err = run_main(capsys, "main", "--seed", "-1")
    assert_error(rc, err, 2, "--seed")


def test_emit_refuses_a_file_that_is_not_regular(capsys, tmp_path):
    """A symlink to /dev/zero named like a program was read until memory ran out."""
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    rc, _, err = run_main(capsys, "emit", str(link), "-o", str(tmp_path / "out"))
    assert_error(rc, err, 2, "not a regular file")
    assert not (tmp_path / "out").exists()
