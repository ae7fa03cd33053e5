#!/usr/bin/env python3
"""Submit+wait latency of kp with and without the fence patch, side by side in one run.

Builds a second kp module from the same sdist and patch series minus
0001-sequence-reuse-fence (and 0006, which builds on it) in build/kp-nofence-<tag>,
then alternates child
processes importing either module, each timing empty-sequence evals and one tiny
dispatch. Prints a table of medians over rounds.

    .venv/bin/python tools/bench/fence_latency.py [--evals 2000] [--rounds 5]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1]) if sys.argv[1] else None
import numpy as np, kp
from vyre_vk import spirv
n = int(sys.argv[2])
if hasattr(kp, "set_spin_wait_us"):
    kp.set_spin_wait_us(int(sys.argv[3]))
mgr = kp.Manager()
empty = mgr.sequence()
t = mgr.tensor_t(np.zeros(64, dtype=np.uint32))
words = spirv.compile_glsl('''#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint a[]; };
void main() { a[gl_GlobalInvocationID.x] += 1u; }
''')
c = np.zeros(0, dtype=np.uint32)
algo = mgr.algorithm([t], words, [1, 1, 1], c, c)
tiny = mgr.sequence().record(kp.OpAlgoDispatch(algo, c))
out = {"module": kp.__file__, "patches": list(getattr(kp, "__vyre_patches__", ()))}
for name, seq in (("empty", empty), ("tiny_dispatch", tiny)):
    for _ in range(50):
        seq.eval()
    t0 = time.perf_counter()
    for _ in range(n):
        seq.eval()
    out[name] = (time.perf_counter() - t0) / n * 1e6
print(json.dumps(out))
"""


def build_unpatched(python: str) -> Path:
    import build_native

    info = build_native.python_info(python)
    build = ROOT / "build" / f"kp-nofence-{info['tag']}"
    sdist = build_native.fetch_sdist("kp", ROOT / "wheelhouse" / "sdist")
    pybind11_dir = subprocess.run([python, "-m", "pybind11", "--cmakedir"], check=True,
                                  capture_output=True, text=True).stdout.strip()
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                    f"-DKP_SDIST={sdist}", f"-DPython_EXECUTABLE={python}", f"-DPYTHON_EXECUTABLE={python}",
                    f"-Dpybind11_DIR={pybind11_dir}", "-DKP_SKIP_PATCHES=0001-sequence-reuse-fence;0006-sequence-spin-wait",
                    "-Wno-dev"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build), "--target", "kp", "-j2"], check=True, capture_output=True)
    (module,) = build.rglob(f"kp{info['ext_suffix']}")
    return module.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--nofence-dir", type=Path, help="folder with a prebuilt kp module lacking the fence patch")
    args = ap.parse_args()
    nofence = args.nofence_dir or build_unpatched(sys.executable)
    variants = {"fence reused (patched)": ("", "0"), "fence reused + 200us poll": ("", "200"),
                "fence per eval (stock)": (str(nofence.resolve()), "0")}
    results: dict[str, list[dict]] = {k: [] for k in variants}
    for _ in range(args.rounds):
        for label, (path, spin) in variants.items():
            out = subprocess.run([sys.executable, "-c", CHILD, path, str(args.evals), spin], check=True,
                                 capture_output=True, text=True).stdout
            results[label].append(json.loads(out.strip().splitlines()[-1]))
    print(f"kp submit+wait, median of {args.rounds} rounds x {args.evals} evals (us)")
    print(f"{'variant':26} {'empty sequence':>15} {'1 tiny dispatch':>16}  patches")
    summary = {}
    for label, rows in results.items():
        e = statistics.median(r["empty"] for r in rows)
        d = statistics.median(r["tiny_dispatch"] for r in rows)
        summary[label] = {"empty_us": e, "tiny_dispatch_us": d, "patches": rows[0]["patches"]}
        print(f"{label:26} {e:15.1f} {d:16.1f}  {','.join(rows[0]['patches'])}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
