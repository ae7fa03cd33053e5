"""The emitted artefacts run by vyre_vk.aot (plain kp) against Device.compile(...).run, on the seed op.

    PYTHONPATH=. python tools/bench/aot_vs_runtime.py [--model-dim 512] [--hidden-dim 2048] [--repeats 10]

First ``vyre-vk emit`` writes the seed op at the emit sizes (2048 x 8192) and prints its summary
(the stages run() dispatches, plus manifest.json). Then, at the timing sizes, the program is
emitted for the device's class and limits (the stages Device.compile makes), both paths run on
the same inputs, alternating call by call (a busy machine hurts both alike), each result checked
bit for bit against the reference; prints the median seconds of each and the ratio (bound 1.2x).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from vyre_vk import aot, reference  # noqa: E402
from vyre_vk.compile import Options  # noqa: E402
from vyre_vk.emit import emit_program  # noqa: E402
from vyre_vk.ops import get  # noqa: E402
from vyre_vk.runtime import Device  # noqa: E402

SEED = "vyre-libs::nn::mlp_backward"
MAX_RATIO = 1.2


def timed(fn) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def same_bits(want: dict, got: dict) -> bool:
    return set(want) == set(got) and all(np.array_equal(np.asarray(want[k]).view(np.uint32),
                                                        np.asarray(got[k]).view(np.uint32)) for k in want)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--emit-dims", type=int, nargs=2, default=(2048, 8192), metavar=("MODEL", "HIDDEN"))
    ap.add_argument("--model-dim", type=int, default=512)
    ap.add_argument("--hidden-dim", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--out", help="folder for the emitted artefacts (default: a temporary one)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, Device() as dev:
        out = Path(args.out or tmp)
        d, h = args.emit_dims
        cmd = [sys.executable, "-m", "vyre_vk.cli", "emit", SEED, "--arg", f"model_dim={d}", "--arg",
               f"hidden_dim={h}", "--device-class", dev.device_class, "-o", str(out / "big")]
        print("$ vyre-vk " + " ".join(cmd[3:]))
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        print(res.stdout + res.stderr, end="")
        if res.returncode:
            return res.returncode
        # What run() would dispatch for that program on this device (compiled only: no data needed).
        big = dev.compile(get(SEED).build_with(model_dim=d, hidden_dim=h))
        written = [(out / "big" / s["spirv"]).read_bytes() for s in aot.read_manifest(out / "big")[1]["stages"]]
        ok = written == [s.spirv for s in big.stages]
        print(f"emitted stages == the {len(big.stages)} stage(s) Device.compile(...).run dispatches: {ok}")
        dev.forget(big)
        program = get(SEED).build_with(model_dim=args.model_dim, hidden_dim=args.hidden_dim)
        rng = np.random.default_rng(0)
        inputs = {b.name: rng.standard_normal(b.count).astype(np.float32) for b in program.buffers if b.is_input}
        want = reference.run(program, inputs)
        # The device's class and limits: the same Compiled (stages, SPIR-V) Device.compile makes.
        emitted = emit_program(program, "mlp", out / "timed", op=SEED,
                               options=Options(device_class=dev.device_class, limits=dev.limits))
        kernel = dev.compile(program)
        ok &= [s.spirv for s in kernel.stages] == [s.spirv for s in emitted.compiled.stages]
        with aot.load(out / "timed", manager=dev.manager) as mod:
            ok &= same_bits(want, mod.run(inputs)) and same_bits(want, kernel.run(inputs))  # also warms both
            t_aot, t_rt = [], []
            for _ in range(args.repeats):
                t, got = timed(lambda: mod.run(inputs))
                t_aot.append(t)
                ok &= same_bits(want, got)
                t, got = timed(lambda: kernel.run(inputs))
                t_rt.append(t)
                ok &= same_bits(want, got)
        name = dev.name
    a, r = statistics.median(t_aot), statistics.median(t_rt)
    print(f"{SEED} {args.model_dim}x{args.hidden_dim} on {name}, {len(emitted.compiled.stages)} stage(s), "
          f"median of {args.repeats}:")
    print(f"  aot runner (plain kp) {a * 1e3:9.3f} ms")
    print(f"  Device.compile().run  {r * 1e3:9.3f} ms")
    print(f"  ratio aot/runtime     {a / r:9.3f}x (bound {MAX_RATIO}x)")
    print(f"  same stages as the runtime, every result bit-exact vs the reference: {'yes' if ok else 'NO'}")
    return 0 if ok and a / r <= MAX_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
