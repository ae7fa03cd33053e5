"""What each part of a generated stage costs (a probe, not a benchmark of record): the op's kernel as
run() builds it, and the same kernel with named text edits to its GLSL, alternated in one process.

    VYRE_VK_STREAM=1 python3 tools/bench/glsl_edits.py "nn::linear_relu@in_dim=4096,out_dim=4096"

Edits (each alone, then all together): ``bar`` tile barriers without the device-scope buffer fence
(``memoryBarrierShared(); memoryBarrierBuffer(); barrier();`` -> ``barrier();``); ``stn`` workgroup
stores without the bounds check and canonicalisation; ``ldn`` storage loads without the bounds check;
``raw`` every load without the bounds check or canonicalisation;
``peel`` speculative loops without their exact first iteration; ``mul`` plain ``a * b`` for vyre_fmul; ``add`` plain ``a + b`` for vyre_fadd;
``lite`` canonicalisation that flushes subnormals but keeps NaN payloads; ``nofb`` speculative loops without
their exact re-run (never entered). Any edit may change
bits (subnormals, NaN, reads past the end): each variant's results are compared with the unedited kernel's and the
answer printed, not asserted. Op arguments as stage_times.py takes them; inputs are the benchmark's.
"""
from __future__ import annotations

import argparse
import re
from typing import Callable, Optional

import numpy as np

from pass_ab import alternate, each_op

EDITS: dict[str, Callable[[str], str]] = {
    "bar": lambda s: s.replace("memoryBarrierShared(); memoryBarrierBuffer(); barrier();", "barrier();"),
    "stn": lambda s: re.sub(r"void (vk_st_opt_\w+)\(uint vk_i, float vk_v\) \{ if \(vk_i < \d+u\) (\w+)\[vk_i\] = vyre_canon\(vk_v\); \}",
                            r"void \1(uint vk_i, float vk_v) { \2[vk_i] = vk_v; }", s),
    "ldn": lambda s: re.sub(r"float (vk_ld_\w+)\(uint vk_i\) \{ uint vk_n = [^;]+; float vk_x = (\w+)\[min\(vk_i, vk_n - 1u\)\];"
                            r" return vk_i < vk_n \? vyre_canon\(vk_x\) : 0.0; \}",
                            r"float \1(uint vk_i) { return vyre_canon(\2[vk_i]); }", s),
    "raw": lambda s: re.sub(r"float (vk_ldn?_\w+)\(uint vk_i\) \{ (?:uint vk_n = [^;]+; )?float vk_x = (\w+)\[[^;]+\];[^}]+\}",
                            r"float \1(uint vk_i) { return \2[vk_i]; }", s),
    "peel": lambda s: re.sub(r"(uint vk_sppe\d+ = )vk_sphi\d+ > (vk_splo\d+) \? vk_splo\d+ \+ 1u : vk_splo\d+;", r"\1\2;", s),
    "mul": lambda s: s.replace("float vyre_fmul(float a, float b) {",
                               "float vyre_fmul(float a, float b) { precise float q = a * b; return q; }\nfloat vyre_fmul_x(float a, float b) {"),
    "add": lambda s: s.replace("float vyre_fadd(float a, float b) {",
                               "float vyre_fadd(float a, float b) { precise float q = a + b; return q; }\nfloat vyre_fadd_x(float a, float b) {"),
    # subnormals still flushed, NaN payloads kept: what the NaN half of canonicalisation costs
    "lite": lambda s: s.replace("float vyre_canon(float x) {",
                                "float vyre_canon(float x) { uint b = floatBitsToUint(x); "
                                "return (b & 0x7F800000u) == 0u ? uintBitsToFloat(b & 0x80000000u) : x; }\n"
                                "float vyre_canon_x(float x) {", 1),
    # the exact re-run loops never entered (the driver drops their code): what their size costs
    "nofb": lambda s: re.sub(r"if \((?:min\()?vyre_sp_state[^{]*\) \{  // a chain value", "if (false) {  // a chain value", s),
}


def edited_kernel(dev, program, edits: list[str]):
    """``program`` compiled for ``dev`` with ``edits`` applied to each stage's GLSL (compile's cache
    cleared around it, the device's bypassed)."""
    from vyre_vk import compile as vc
    from vyre_vk.compile import Options, compile_program, stage
    from vyre_vk.runtime.kernel import Kernel

    orig = stage.spirv.compile_glsl

    def patched(src: str, **kw):
        for e in edits:
            new = EDITS[e](src)
            if new == src:
                print(f"   (edit {e} changed nothing)")
            src = new
        return orig(src, **kw)

    vc.clear_cache()
    stage.spirv.compile_glsl = patched
    try:
        return Kernel(dev, compile_program(program, Options(True, dev.device_class, dev.limits, "exact")))
    finally:
        stage.spirv.compile_glsl = orig
        vc.clear_cache()


def main(argv: Optional[list[str]] = None) -> None:
    from vyre_vk.runtime import Device

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ops", nargs="+")
    ap.add_argument("--edits", default="bar,stn,ldn,raw,peel,mul,add,raw+mul+add,raw+mul+add+peel",
                    help="comma-separated variants, each a +-joined list of edits")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warm-up", type=float, default=5.0)
    args = ap.parse_args(argv)
    with Device() as dev:
        from ops import warm_up

        warm_up(dev, args.warm_up)
        for op, kw, _, program, inputs, grid in each_op(args.ops):
            kernels = [("as generated", edited_kernel(dev, program, []))]
            kernels += [(v, edited_kernel(dev, program, v.split("+"))) for v in args.edits.split(",") if v]
            want = kernels[0][1].run(inputs, grid=grid)
            same = {}
            for name, k in kernels[1:]:
                got = k.run(inputs, grid=grid)
                same[name] = all(np.array_equal(a.view(np.uint8), got[b].view(np.uint8)) for b, a in want.items())
            times = alternate(kernels, inputs, grid, args.rounds, args.repeats)
            for name, k in kernels:
                print(f"{op} {kw} {name:>24}: " + " / ".join(f"{t:.4f}" for t in times[name])
                      + f" ms  same bits: {same.get(name, True)}", flush=True)
                k.release()


if __name__ == "__main__":
    main()
