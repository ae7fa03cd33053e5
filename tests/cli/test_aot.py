"""Issue 14: the emitted artefacts (stages + manifest.json) run with plain kp (vyre_vk.aot) and
match the reference for every registered op; the runner needs nothing of the compiler."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.fakes import ManagerWith
from vyre_vk import aot, reference
from vyre_vk.cli import main
from vyre_vk.compile import Options
from vyre_vk.emit import emit_program, file_stem
from vyre_vk.ops import all_ops, get
from vyre_vk.reference.errors import EvalError
from vyre_vk.runtime.inputs import Binder
from vyre_vk.testing.parity import compare
from vyre_vk.testing.vectors import expected_arrays

from tests.ops.oracles import ORACLES

ROOT = Path(__file__).resolve().parents[2]
SEED = "vyre-libs::nn::mlp_backward"


@pytest.mark.parametrize("op_id", [e.id for e in all_ops()])
def test_emitted_op_runs_standalone_and_matches_reference(op_id, vk_device, tmp_path):
    entry = get(op_id)
    program = entry.build()
    # Where vyre's inferred grid races on a GPU (fft_convolve_circular_complex: every invocation
    # reruns the convolution in place), run the program as written on the oracle's grid.
    grid = getattr(ORACLES.get(op_id), "grid", None)
    emitted = emit_program(program, file_stem(op_id), tmp_path, op=op_id,
                           options=Options(passes=False) if grid else None)
    with aot.load(tmp_path, manager=vk_device.manager) as mod:
        assert mod.manifest == emitted.manifest and mod.manifest["op"] == op_id
        if not mod.manifest["unsized"]:  # the runner's grid rule agrees with the compiler's
            assert mod.grids(mod.manifest["sizes"]) == [s["grid"]["for_sizes"] for s in mod.manifest["stages"]]
        for case, exp_bytes in zip(entry.test_inputs(), entry.expected_output()):
            arrays = Binder(program.buffers)(case)
            inputs = {n: arrays[n] for n in mod.inputs}
            try:
                want = reference.run(program, case, grid=grid)
            except EvalError:
                with pytest.raises(aot.AotTrapError):
                    mod.run(inputs, grid=grid)
                continue
            for _ in range(2):  # the second run replays the recorded sequence
                got = mod.run(inputs, grid=grid)
                report = compare(program, want, got, entry.ulp)
                assert report.ok and set(got) == set(want), (report.mismatches, sorted(got), sorted(want))
            assert compare(program, expected_arrays(entry, program, exp_bytes), got, entry.ulp).ok


def _trap_and_canon_programs():
    from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program

    i = Expr.var("i")
    div = Program.wrapped(
        [BufferDecl.read("a", 0, DataType.I32).with_count(64), BufferDecl.read("b", 1, DataType.I32).with_count(64),
         BufferDecl.output("q", 2, DataType.I32).with_count(64)], (64, 1, 1),
        [Node.let_bind("i", Expr.gid_x()), Node.store("q", i, Expr.div(Expr.load("a", i), Expr.load("b", i)))])
    canon = Program.wrapped(
        [BufferDecl.read_write("y", 0, DataType.F32).with_count(4)], (64, 1, 1),
        [Node.let_bind("i", Expr.gid_x()),
         Node.if_then(Expr.eq(i, Expr.u32(0)), [Node.store("y", Expr.u32(0), Expr.f32(1.0))])])
    return div, canon


def test_trap_words_and_f32_canonicalisation_come_from_the_manifest(vk_device, tmp_path):
    div, canon = _trap_and_canon_programs()
    emit_program(div, "div", tmp_path / "div")
    emit_program(canon, "canon", tmp_path / "canon")
    stage = json.loads((tmp_path / "div" / "manifest.json").read_text())["stages"][0]
    assert stage["trap"]["words"] == 4 and stage["trap"]["codes"]["1"].startswith("i32 division")
    assert stage["bindings"][-1] == {"name": "trap", "binding": stage["trap"]["binding"], "dtype": "u32",
                                     "count": 4, "access": "ReadWrite", "role": "trap", "storage": "uint32"}
    a, b = np.arange(64, dtype=np.int32) - 32, np.full(64, 3, np.int32)
    with aot.load(tmp_path / "div", manager=vk_device.manager) as mod:
        np.testing.assert_array_equal(mod.run({"a": a, "b": b})["q"], reference.run(div, {"a": a, "b": b})["q"])
        b[17] = 0
        with pytest.raises(aot.AotTrapError, match="at invocation 17") as err:
            mod.run({"a": a, "b": b})
        assert err.value.code == 1 and err.value.stage == 0
        b[17] = 5  # the trap words are cleared for the next run
        np.testing.assert_array_equal(mod.run({"a": a, "b": b})["q"], reference.run(div, {"a": a, "b": b})["q"])
    y = np.array([5.0, 0, 0, 2.0], np.float32)
    y.view(np.uint32)[1:3] = [0x7F800001, 0x00000003]  # NaN payload, subnormal
    with aot.load(tmp_path / "canon", manager=vk_device.manager) as mod:
        assert mod.manifest["canonicalization"]["on_upload"] == ["y"]
        got = mod.run({"y": y})["y"].view(np.uint32)
        np.testing.assert_array_equal(got, reference.run(canon, {"y": y})["y"].view(np.uint32))
        assert got[1] == 0x7FC00000 and got[2] == 0


def test_runner_imports_nothing_of_the_compiler(tmp_path):
    emit_program(get(SEED).build(), "mlp", tmp_path)
    code = ("import sys, numpy as np; from vyre_vk import aot\n"
            f"m = aot.load({str(tmp_path)!r})\n"
            "ins = {b['name']: np.ones(b['count'], np.float32) for b in m.buffers if b['role'] == 'input'}\n"
            "print(m.run(ins)['grad_x'].tolist()); m.close()\n"
            "print(sorted(k for k in sys.modules if k.startswith('vyre_vk')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    grad, mods = out.stdout.splitlines()
    assert eval(mods) == ["vyre_vk", "vyre_vk.aot", "vyre_vk.errors"]
    ones = {b.name: np.ones(b.count, np.float32) for b in get(SEED).build().buffers if b.is_input}
    assert eval(grad) == reference.run(get(SEED).build(), ones)["grad_x"].tolist()


def test_cli_emit_writes_stages_and_manifest(capsys, tmp_path):
    assert main(["emit", SEED, "--arg", "model_dim=4", "--arg", "hidden_dim=8", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    man = json.loads((tmp_path / "manifest.json").read_text())
    n = len(man["stages"])
    assert n == 3 and "3 stage(s)" in out and "ops: dispatch 0, barrier(" in out and "scratch: opt_" in out
    assert man["schema_version"] == 1 and man["op"] == SEED and man["options"]["passes"] is True
    assert [b["role"] for b in man["buffers"]] == ["input"] * 5 + ["output"]
    assert [op["op"] for op in man["ops"]].count("dispatch") == n
    assert all((tmp_path / s["spirv"]).read_bytes()[:4] == b"\x03\x02\x23\x07" and (tmp_path / s["comp"]).exists()
               and s["entry_point"] == "main" for s in man["stages"])
    # --as-written: one stage, and the optimised run's extra stage files are removed
    assert main(["emit", SEED, "--arg", "model_dim=4", "--arg", "hidden_dim=8", "--as-written",
                 "-o", str(tmp_path)]) == 0
    assert "(as written): 1 stage(s)" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", f"{file_stem(SEED)}.stage0.comp",
                                                          f"{file_stem(SEED)}.stage0.spv"]
    assert json.loads((tmp_path / "manifest.json").read_text())["options"]["passes"] is False
    out = subprocess.run([sys.executable, "-m", "vyre_vk.aot", str(tmp_path)], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert out.returncode == 0 and "as written" in out.stdout and "stage 0:" in out.stdout, out.stderr


def test_cli_emit_sizes_give_concrete_grids(capsys, tmp_path):
    op = "vyre-libs::nn::embedding"
    man = lambda: json.loads((tmp_path / "manifest.json").read_text())  # noqa: E731
    assert main(["emit", op, "-o", str(tmp_path)]) == 0
    assert "pass --size NAME=COUNT" in capsys.readouterr().out
    unsized = man()["unsized"]
    assert unsized and all(s["grid"]["for_sizes"] is None for s in man()["stages"])
    assert main(["emit", op, "-o", str(tmp_path), *[f"--size={n}=5000" for n in unsized]]) == 0
    m = man()
    assert not m["unsized"] and all(m["sizes"][n] == 5000 for n in unsized)
    assert aot.load(tmp_path).grids(m["sizes"]) == [s["grid"]["for_sizes"] for s in m["stages"]]  # no kp yet
    rc = main(["emit", op, "-o", str(tmp_path), "--size", "nope=3"])
    assert rc == 2 and "binds no buffer `nope`" in capsys.readouterr().err


def test_manifest_of_another_schema_is_refused(tmp_path):
    emit_program(get(SEED).build(), "mlp", tmp_path)
    data = json.loads((tmp_path / "manifest.json").read_text())
    (tmp_path / "manifest.json").write_text(json.dumps({**data, "schema_version": 2}))
    with pytest.raises(aot.ManifestError, match="schema_version 2"):
        aot.load(tmp_path)
    assert aot.main([str(tmp_path)]) == 2


def test_fused_fma_folders_carry_a_probe_the_runner_checks(capsys, tmp_path, vk_device):
    """--fma fused (the nvidia default) writes the division probe; the runner dispatches it and
    refuses a device whose fma() rounds twice (lavapipe's), so divisions are never silently off."""
    op, x = "vyre-libs::nn::silu", np.array([-3.5, -0.25, 0.75, 3.0], np.float32)
    assert main(["emit", op, "--device-class", "nvidia", "-o", str(tmp_path)]) == 0
    man = json.loads((tmp_path / "manifest.json").read_text())
    probe = man["fma_probe"]
    assert man["options"]["limits"]["fused_fma"] is True and probe["count"] % probe["local_size"] == 0
    assert (tmp_path / probe["cases"]).stat().st_size == 12 * probe["count"]
    assert "vyre_fdiv_int" in (tmp_path / man["stages"][0]["comp"]).read_text()
    mod = aot.load(tmp_path, manager=vk_device.manager)
    want = reference.run(get(op).build(), {"input": x})["output"]
    if vk_device.limits.fused_fma:
        np.testing.assert_array_equal(mod.run({"input": x})["output"].view(np.uint32), want.view(np.uint32))
    else:
        with pytest.raises(aot.ManifestError, match="rounds twice|is not .*Fix: emit again with --fma unfused"):
            mod.run({"input": x})
    # --fma unfused: no probe, the integer division, runs anywhere; the stale probe files go
    assert main(["emit", op, "--device-class", "nvidia", "--fma", "unfused", "-o", str(tmp_path)]) == 0
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert man["fma_probe"] is None and man["options"]["limits"]["fused_fma"] is False
    assert not list(tmp_path.glob("*.fma_probe.*"))
    with aot.load(tmp_path, manager=vk_device.manager) as mod:
        np.testing.assert_array_equal(mod.run({"input": x})["output"].view(np.uint32), want.view(np.uint32))


def test_float64_folders_run_where_the_device_has_it_and_are_refused_elsewhere(tmp_path, vk_device):
    """--float64 on (the nvidia and llvmpipe default) evaluates exp/tanh in double: the manifest says
    so, the result is the reference's bits on lavapipe, and a device without shaderFloat64 is refused."""
    op, x = "vyre-libs::nn::gelu", np.linspace(-9, 9, 64, dtype=np.float32)
    want = reference.run(get(op).build(), {"input": x})["output"].view(np.uint32)
    assert main(["emit", op, "--device-class", "llvmpipe", "-o", str(tmp_path)]) == 0
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert man["options"]["limits"]["float64"] is True
    assert "double vyre_expm1_64" in (tmp_path / man["stages"][0]["comp"]).read_text()  # tanh in double
    with aot.load(tmp_path, manager=vk_device.manager) as mod:
        np.testing.assert_array_equal(mod.run({"input": x})["output"].view(np.uint32), want)
    mod = aot.load(tmp_path, manager=ManagerWith(vk_device.manager, shader_float64=False))
    with pytest.raises(aot.ManifestError, match="shaderFloat64.*Fix: emit again with --float64 off"):
        mod.run({"input": x})
    assert main(["emit", op, "--device-class", "llvmpipe", "--float64", "off", "-o", str(tmp_path)]) == 0
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert man["options"]["limits"]["float64"] is False
    assert "double" not in (tmp_path / man["stages"][0]["comp"]).read_text()
    with aot.load(tmp_path, manager=ManagerWith(vk_device.manager, shader_float64=False)) as mod:
        np.testing.assert_array_equal(mod.run({"input": x})["output"].view(np.uint32), want)


@pytest.mark.parametrize("flags,want", [([], True), (["--storage-8bit", "off"], False), (["--device-class", "default"], False),
                                        (["--device-class", "default", "--storage-8bit", "on"], True)])
def test_emit_storage_8bit_flag_reaches_the_manifest(tmp_path, flags, want):
    args = ["--device-class", "llvmpipe", *flags] if "--device-class" not in flags else flags
    assert main(["emit", "vyre-libs::nn::silu", "-o", str(tmp_path), *args]) == 0
    assert json.loads((tmp_path / "manifest.json").read_text())["options"]["limits"]["storage_8bit"] is want


def test_folders_record_workgroup_memory_and_a_smaller_device_is_refused(tmp_path, vk_device):
    """Each stage's workgroup memory is in the manifest; a device whose maxComputeSharedMemorySize is
    smaller refuses the folder with a Fix before anything runs. --device-class nvidia plans for 48 KB."""
    op = "vyre-libs::nn::softmax"  # one workgroup's tree reduction through workgroup memory, as written
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    assert main(["emit", op, "--as-written", "--device-class", "llvmpipe", "-o", str(tmp_path)]) == 0
    man = json.loads((tmp_path / "manifest.json").read_text())
    need = man["stages"][0]["shared_memory_bytes"]
    assert need == sum(b.count * b.element.size for b in get(op).build().buffers if b.is_workgroup) > 0
    assert man["options"]["limits"]["shared_memory_bytes"] == 32768
    want = reference.run(get(op).build(), {"input": x})["output"].view(np.uint32)
    with aot.load(tmp_path, manager=ManagerWith(vk_device.manager, max_compute_shared_memory_size=need)) as mod:
        np.testing.assert_array_equal(mod.run({"input": x})["output"].view(np.uint32), want)
    mod = aot.load(tmp_path, manager=ManagerWith(vk_device.manager, max_compute_shared_memory_size=need - 4))
    with pytest.raises(aot.ManifestError, match=f"needs {need:,} bytes of workgroup memory.*Fix: emit again"):
        mod.run({"input": x})
    assert main(["emit", op, "--device-class", "nvidia", "-o", str(tmp_path / "nv")]) == 0
    assert json.loads((tmp_path / "nv" / "manifest.json").read_text())["options"]["limits"]["shared_memory_bytes"] == 49152
