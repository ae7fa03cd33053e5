"""What the op-specific tests share: one program run on the reference and on Vulkan."""
from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np

from vyre_vk import ops, reference
from vyre_vk.ir import Program


def build(target: Union[str, "ops.OpEntry", Program], **params) -> Program:
    """An op id or entry built with `params` (as registered where none), or a Program as is."""
    if isinstance(target, Program):
        return target
    entry = ops.get(target) if isinstance(target, str) else target
    return entry.build_with(**params)


def run_both(target, device, ins, *, grid: Optional[Sequence[int]] = None, optimize: bool = True,
             **params) -> tuple[Program, dict, dict]:
    """(program, reference results, Vulkan results) of `target` (see `build`) on `ins`."""
    program = build(target, **params)
    return (program, reference.run(program, ins, grid=grid),
            device.compile(program, optimize=optimize).run(ins, grid=grid))


def run_equal(target, device, ins, **params) -> tuple[Program, dict]:
    """`run_both` for integer ops: Vulkan must equal the reference exactly; (program, reference results)."""
    program, ref, got = run_both(target, device, ins, **params)
    label = target if isinstance(target, str) else program.entry[0].generator
    for name in ref:
        np.testing.assert_array_equal(got[name], ref[name], err_msg=f"{label} {params} `{name}`: Vulkan vs reference")
    return program, ref


def oracle_runs(op_id: str, device, params: dict, seeds: Sequence[int]):
    """The op built with `params` and compiled once, run on its oracle's random inputs for each
    seed: yields (program, reference results, Vulkan results, the oracle's want)."""
    from .oracles import ORACLES
    spec = ORACLES[op_id]
    program = build(op_id, **params)
    kernel = device.compile(program)
    for seed in seeds:
        ins = spec.inputs(np.random.default_rng(seed), params)
        yield program, reference.run(program, ins), kernel.run(ins), spec.numpy(ins, params)
