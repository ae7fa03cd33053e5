"""Seed op (nn::mlp_backward) with the optimiser passes off and on, side by side.

    PYTHONPATH=. python tools/bench/seed_passes.py [--sizes 512x2048] [--repeat 5] [--wg]

Prints the best-of-N wall time per run (upload + dispatches + download, one submission)
for the program as written and for Device.compile(program, optimize=True), each checked
against the NumPy reference (bit-exact count and worst ULP). --wg also times an
elementwise program at local size 64 vs 256 (the workgroup_size pass's table entry).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from vyre_vk import reference
from vyre_vk.ops import get
from vyre_vk.opt import optimize
from vyre_vk.runtime import Device
from vyre_vk.testing.parity import compare, ulp_distance


def _best(fn, repeat: int) -> float:
    fn()  # warm: plan built, pipelines compiled
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def compiled(dev: Device, program):
    """(as written, optimised) kernels of `program`."""
    return dev.compile(program, optimize=False), dev.compile(program, optimize=True)


def seed(dev: Device, d: int, h: int, repeat: int) -> None:
    entry = get("vyre-libs::nn::mlp_backward")
    program = entry.build_with(model_dim=d, hidden_dim=h)
    rng = np.random.default_rng(0)
    inputs = {"x": rng.standard_normal(d, dtype=np.float32),
              "w1": rng.standard_normal(d * h, dtype=np.float32) / np.float32(np.sqrt(d)),
              "b1": rng.standard_normal(h, dtype=np.float32),
              "w2": rng.standard_normal(h * d, dtype=np.float32) / np.float32(np.sqrt(h)),
              "grad_out": rng.standard_normal(d, dtype=np.float32)}
    ref = reference.run(program, inputs)["grad_x"]
    _, reports = optimize(program)
    off, on = compiled(dev, program)
    rows = []
    for label, k in (("passes off", off), ("passes on", on)):
        got = k.run(inputs)["grad_x"]
        exact = int(np.count_nonzero(got.view(np.uint32) == ref.view(np.uint32)))
        worst = int(ulp_distance(ref, got).max())
        ok = compare(program, {"grad_x": ref}, {"grad_x": got}).ok
        t = _best(lambda: k.run(inputs), repeat if label == "passes on" else max(1, repeat // 5))
        rows.append((label, t, exact, worst, ok))
    print(f"mlp_backward {d}x{h} on {dev.name}")
    for label, t, exact, worst, ok in rows:
        print(f"  {label:10}  {1e3 * t:10.2f} ms   bit-exact {exact}/{d}   worst {worst} ULP   "
              f"{'matches reference' if ok else 'MISMATCH'}")
    print(f"  speedup     {rows[0][1] / rows[1][1]:10.1f}x")
    for r in reports:
        if r.changed:
            print(f"  pass {r}")


def wg(dev: Device, n: int, repeat: int) -> None:
    from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
    i = Expr.var("i")
    for size in (64, 256):
        p = Program.wrapped([BufferDecl.read("a", 0, DataType.F32).with_count(n),
                             BufferDecl.read("b", 1, DataType.F32).with_count(n),
                             BufferDecl.output("y", 2, DataType.F32).with_count(n)], (size, 1, 1),
                            [wrap_anonymous("bench::axpy", [Node.let_bind("i", Expr.gid_x()), Node.if_then(
                                Expr.lt(i, Expr.u32(n)), [Node.store("y", i, Expr.add(
                                    Expr.mul(Expr.f32(2.5), Expr.load("a", i)), Expr.load("b", i)))])])])
        rng = np.random.default_rng(1)
        inputs = {"a": rng.standard_normal(n, dtype=np.float32), "b": rng.standard_normal(n, dtype=np.float32)}
        k = dev.compile(p)
        t = _best(lambda: k.run(inputs), repeat)
        print(f"  axpy n={n} local size {size:4}: {1e3 * t:8.2f} ms")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="512x2048")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--wg", action="store_true")
    ap.add_argument("--n", type=int, default=(1 << 22) - 64)
    args = ap.parse_args()
    with Device() as dev:
        for s in args.sizes.split(","):
            d, h = (int(v) for v in s.split("x"))
            seed(dev, d, h, args.repeat)
        if args.wg:
            wg(dev, args.n, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
