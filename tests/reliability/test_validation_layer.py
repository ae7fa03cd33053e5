"""The reliability suite under the Khronos validation layer reports nothing.

kp 0.9.0's debug callback is compiled out, so the layer is told to print itself: a
vk_layer_settings.txt (VK_LAYER_SETTINGS_PATH) with debug_action = LOG_MSG and
log_filename = stdout, report_flags = error,warn. A subprocess runs a subset of this suite
(`pytest -s`, so stdout is not captured per test) plus `tools/fuzz --count 60`; any
"Validation Error"/"Validation Warning"/"VUID-" in its output fails the test. The detector
is proven by a deliberately invalid dispatch (groupCountX over maxComputeWorkGroupCount,
made through kp directly, bypassing the runtime's check), which must be reported.
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYER_JSON = [Path(p) / "VkLayer_khronos_validation.json" for p in ("/usr/share/vulkan/explicit_layer.d", "/etc/vulkan/explicit_layer.d")]
pytestmark = pytest.mark.skipif(not any(p.exists() for p in LAYER_JSON), reason="vulkan-validationlayers not installed")
MARKERS = ("Validation Error", "Validation Warning", "VUID-")


def _env(tmp_path: Path) -> dict:
    (tmp_path / "vk_layer_settings.txt").write_text(textwrap.dedent("""\
        khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG
        khronos_validation.log_filename = stdout
        khronos_validation.report_flags = error,warn
        """))
    env = dict(os.environ, VK_INSTANCE_LAYERS="VK_LAYER_KHRONOS_validation", VK_LAYER_SETTINGS_PATH=str(tmp_path),
               PYTHONPATH=str(ROOT))
    return env


def _run(args, tmp_path, timeout=400) -> str:
    p = subprocess.run(args, cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def _findings(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(m in line for m in MARKERS)]


def test_detector_sees_a_deliberately_invalid_dispatch(tmp_path):
    script = textwrap.dedent("""\
        import numpy as np
        from vyre_vk import spirv
        from vyre_vk.runtime import Device, kp_bridge
        d = Device()
        words = spirv.compile_glsl("#version 450\\nlayout(local_size_x=1) in;\\n"
            "layout(std430, binding=0) buffer B { uint b[]; };\\nvoid main(){ b[0] = 1u; }\\n")
        t = kp_bridge.tensor(d.manager, np.zeros(4, np.uint32))
        algo = d.manager.algorithm([t], words, [70000, 1, 1], np.zeros(0, np.uint32), np.zeros(0, np.uint32))
        d.manager.sequence().record(kp_bridge.dispatch(algo)).eval()
        print("dispatched")
        """)
    rc, out = _run([sys.executable, "-c", script], tmp_path, 120)
    assert "dispatched" in out, out[-2000:]
    assert any("VUID-vkCmdDispatch-groupCountX-00386" in line for line in _findings(out)), out[-2000:]


def test_suite_subset_and_fuzz_are_clean_under_the_validation_layer(tmp_path):
    files = ["test_runtime_regressions.py", "test_lowering_regressions.py", "test_bounds.py", "test_threads.py",
             "test_limits.py", "test_corpus.py"]
    rc, out = _run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                    *[str(ROOT / "tests/reliability" / f) for f in files]], tmp_path)
    assert rc == 0, out[-3000:]
    assert not _findings(out), "\n".join(_findings(out)[:20])
    rc, out = _run([sys.executable, str(ROOT / "tools/fuzz"), "--count", "60", "--seed", "11", "--every", "1000",
                    "--corpus", str(tmp_path / "corpus")], tmp_path)
    assert rc == 0, out[-3000:]
    assert "60 programs" in out
    assert not _findings(out), "\n".join(_findings(out)[:20])
