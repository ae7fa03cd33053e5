"""GPU time of ops with every optimiser pass and with named passes left out, alternated in one
process, to find which pass made an op slower (a probe, not a benchmark of record: ops.py is that).

    python3 tools/bench/pass_ab.py "decode::hex@input_len=16777216" --drop coarsen --drop coarsen,workgroup_size
    python3 tools/bench/pass_ab.py "math::reduce_variance@n=16777216" --env VYRE_VK_SPEC_DIV_U32=1

``--env NAME=VALUE`` (repeatable; several knobs of one variant joined by ``+``) adds a variant compiled with that schedule knob set (compile's caches
key on the knobs, vyre_vk.opt.pipeline.SCHEDULE_KNOBS); the others compile without it.

Each op argument is as stage_times.py takes it (an op id after ``vyre-libs::``, then ``@`` and
integer builder overrides); inputs are the benchmark's own (op_inputs.make_inputs). Every variant's
results are checked equal to the all-passes variant's before it is timed. Variants run in turn for
``--rounds`` rounds, each after 0.3 s of its own untimed dispatches (ops.py's per-op warm-up), so a
clock change shows as disagreement between rounds rather than as a difference between variants.
"""
from __future__ import annotations

import argparse
import os
import time
from typing import Optional
from unittest import mock

import numpy as np

from op_inputs import make_inputs
from stage_times import parse


def variants(drops: list[str]) -> list[tuple[str, object]]:
    """``[("all", True), ("-coarsen", {...every pass but coarsen})]`` for ``--drop coarsen``."""
    from vyre_vk.opt.pipeline import DEFAULT_PASSES

    out: list[tuple[str, object]] = [("all", True)]
    for d in drops:
        names = {n.strip() for n in d.split(",") if n.strip()}
        unknown = names - DEFAULT_PASSES
        if unknown:
            raise SystemExit(f"--drop {d}: no pass named {sorted(unknown)}. Fix: use names from {sorted(DEFAULT_PASSES)}.")
        out.append(("-" + "-".join(sorted(names)), frozenset(DEFAULT_PASSES - names) or False))
    return out


def knob(setting: str) -> list[tuple[str, str]]:
    """[(NAME, VALUE)] of an --env setting (NAME=VALUE, several joined by '+'), refused unless each
    NAME is a schedule knob."""
    from vyre_vk.opt.pipeline import SCHEDULE_KNOBS

    out = []
    for part in setting.split("+"):
        name, _, value = part.partition("=")
        if name not in SCHEDULE_KNOBS or not value:
            raise SystemExit(f"--env {setting}: not NAME=VALUE of a schedule knob. Fix: use one of {list(SCHEDULE_KNOBS)}.")
        out.append((name, value))
    return out


def knob_kernel(dev, entry, kw: dict, setting: str):
    """The op compiled with the knobs of `setting` set, from a fresh Program object (the device's
    same-object fast path reads no knobs); the environment is restored after."""
    with mock.patch.dict(os.environ, dict(knob(setting))):
        return dev.compile(entry.build_with(**kw))


def each_op(args: list[str]):
    """(op id, overrides, entry, program, the benchmark's inputs, grid) for each op argument."""
    from vyre_vk.ops import get

    for arg in args:
        op, kw = parse(arg)
        entry = get(op)
        program = entry.build_with(**kw)
        inputs, grid = make_inputs(entry, {**entry.params, **kw}, program)
        yield op, kw, entry, program, inputs, grid


def alternate(kernels: list, inputs: dict, grid, rounds: int, repeats: int) -> dict[str, list[float]]:
    """Median GPU ms of each (name, kernel) per round, the kernels in turn every round, each after
    0.3 s of its own untimed dispatches (a clock change shows as rounds that disagree)."""
    times: dict[str, list[float]] = {name: [] for name, _ in kernels}
    for _ in range(rounds):
        for name, k in kernels:
            end = time.perf_counter() + 0.3
            while time.perf_counter() < end:
                k.profile(inputs, repeats=5, grid=grid)
            gpu, _ = k.profile(inputs, repeats=repeats, grid=grid)
            times[name].append(float(np.median(gpu)) * 1e3)
    return times


def main(argv: Optional[list[str]] = None) -> list[dict]:
    from vyre_vk.runtime import Device

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ops", nargs="+")
    ap.add_argument("--drop", action="append", default=[], help="comma-separated passes to leave out (repeatable)")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="a variant compiled with this schedule knob set (repeatable)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warm-up", type=float, default=10.0, metavar="SECONDS", help="as ops.py's")
    args = ap.parse_args(argv)
    for setting in args.env:
        knob(setting)  # refused before the device opens
    rows = []
    with Device() as dev:
        from ops import warm_up

        warm_up(dev, args.warm_up)
        for op, kw, entry, program, inputs, grid in each_op(args.ops):
            kernels = [(name, dev.compile(program, optimize=passes)) for name, passes in variants(args.drop)]
            for setting in args.env:
                kernels.append((setting, knob_kernel(dev, entry, kw, setting)))
            want = kernels[0][1].run(inputs, grid=grid)
            for name, k in kernels[1:]:
                got = k.run(inputs, grid=grid)
                for buf, arr in want.items():
                    assert np.array_equal(arr.view(np.uint8), got[buf].view(np.uint8)), f"{op} {name}: `{buf}` differs"
            times = alternate(kernels, inputs, grid, args.rounds, args.repeats)
            for name, k in kernels:
                stages = [(s.local_size, s.factor) for s in k.compiled.stages]
                print(f"{op} {kw} {name:>28}: " + " / ".join(f"{t:.4f}" for t in times[name]) + f" ms  stages {stages}",
                      flush=True)
                rows.append({"op": op, "params": kw, "variant": name, "gpu_ms": times[name]})
            for _, k in kernels:
                dev.forget(k)
    return rows


if __name__ == "__main__":
    main()
