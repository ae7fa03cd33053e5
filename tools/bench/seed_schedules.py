"""Where the seed op's GPU time goes: its two optimised stages against hand-written schedules.

    PYTHONPATH=. python tools/bench/seed_schedules.py [--size 2048x8192] [--reps 20]

Stage 0 (pre-pass, one invocation per hidden unit j) and stage 1 (main, one per model
unit i) are timed with Vulkan timestamps as vyre-vk lowers them and as variants that keep
the same per-value operation order (so every variant's output is checked bit-identical to
the reference): other local sizes, workgroup-memory tiles that turn each invocation's
strided row reads into coalesced loads, and (diagnostic only, not bit-checked) plain float
ops without vyre's canonicalisation. For A/B work on the lowering; the full comparison is
tools/bench/run.py.
"""
from __future__ import annotations

import argparse
import re
import statistics

import numpy as np

from gpu_timing import dispatch_seconds

from vyre_vk import spirv
from vyre_vk.lower.glsl import lower
from vyre_vk.ops import get
from vyre_vk.opt import PASS_NAMES, device_class, optimize
from vyre_vk.runtime import Device, kp_bridge


def tiled_prepass(header: str, m: int, h: int, t: int) -> str:
    """Stage 0 with w2's rows staged through a t x t workgroup tile (row j0+r, columns k0..k0+t)."""
    return f"""{header}
shared float vk_tile[{t}][{t + 1}];
void main() {{
    uint j = gl_GlobalInvocationID.x, lid = gl_LocalInvocationID.x, j0 = gl_WorkGroupID.x * {t}u;
    float h_acc = vyre_canon(b1[j]);
    for (uint mm = 0u; mm < {m}u; mm++) h_acc = vyre_fadd(h_acc, vyre_fmul(vyre_canon(x[mm]), vyre_canon(w1[mm * {h}u + j])));
    float d_act = vyre_fmax(vyre_fmul(0.5, h_acc), vyre_fmul(2.0, h_acc));
    float gh_act = 0.0;
    for (uint k0 = 0u; k0 < {m}u; k0 += {t}u) {{
        for (uint r = 0u; r < {t}u; r++) vk_tile[r][lid] = vyre_canon(w2[(j0 + r) * {m}u + k0 + lid]);
        barrier();
        for (uint c = 0u; c < {t}u; c++) gh_act = vyre_fadd(gh_act, vyre_fmul(vyre_canon(grad_out[k0 + c]), vk_tile[lid][c]));
        barrier();
    }}
    opt_hoist_gh_0[j] = vyre_canon(vyre_fmul(gh_act, d_act));
}}
"""


def _unrolled_dot(acc: str, a: str, b: str, n: int, u: int = 16) -> str:
    """acc = acc + a(k) * b(k) for k in 0..n, in order, u loads issued before the arithmetic."""
    loads = " ".join(f"float pa{c} = vyre_canon({a.format(k=f'(k + {c}u)')}); "
                     f"float pb{c} = vyre_canon({b.format(k=f'(k + {c}u)')});" for c in range(u))
    adds = " ".join(f"{acc} = vyre_fadd({acc}, vyre_fmul(pa{c}, pb{c}));" for c in range(u))
    return f"for (uint k = 0u; k < {n}u; k += {u}u) {{ {loads} {adds} }}"


def fission_prepass(header: str, m: int, h: int) -> tuple[str, str]:
    """Stage 0 as two independent invocation ranges (h_acc chains, gh_act chains) + a combine."""
    decl = ("layout(std430, set = 0, binding = 6) buffer vk_buf_sa { float sa[]; };\n"
            "layout(std430, set = 0, binding = 7) buffer vk_buf_sb { float sb[]; };\n")
    a = f"""{header}{decl}
void main() {{
    uint t = gl_GlobalInvocationID.x;
    if (t < {h}u) {{
        uint j = t;
        float h_acc = vyre_canon(b1[j]);
        {_unrolled_dot("h_acc", "x[{k}]", "w1[{k} * " + str(h) + "u + j]", m)}
        sa[j] = vyre_canon(h_acc);
    }} else if (t < {2 * h}u) {{
        uint j = t - {h}u;
        float gh_act = 0.0;
        {_unrolled_dot("gh_act", "grad_out[{k}]", "w2[j * " + str(m) + "u + {k}]", m)}
        sb[j] = vyre_canon(gh_act);
    }}
}}
"""
    b = f"""{header}{decl}
void main() {{
    uint j = gl_GlobalInvocationID.x;
    if (j < {h}u) {{
        float h_acc = sa[j];
        float d_act = vyre_fmax(vyre_fmul(0.5, h_acc), vyre_fmul(2.0, h_acc));
        opt_hoist_gh_0[j] = vyre_canon(vyre_fmul(sb[j], d_act));
    }}
}}
"""
    return a, b


def tiled_main(header: str, m: int, h: int, t: int) -> str:
    """Stage 1 with w1's rows staged through a t x t workgroup tile."""
    return f"""{header}
shared float vk_tile[{t}][{t + 1}];
void main() {{
    uint i = gl_GlobalInvocationID.x, lid = gl_LocalInvocationID.x, i0 = gl_WorkGroupID.x * {t}u;
    float gx = 0.0;
    for (uint j0 = 0u; j0 < {h}u; j0 += {t}u) {{
        for (uint r = 0u; r < {t}u; r++) vk_tile[r][lid] = vyre_canon(w1[(i0 + r) * {h}u + j0 + lid]);
        barrier();
        for (uint c = 0u; c < {t}u; c++) gx = vyre_fadd(gx, vyre_fmul(vyre_canon(opt_hoist_gh_0[j0 + c]), vk_tile[lid][c]));
        barrier();
    }}
    grad_x[i] = vyre_canon(gx);
}}
"""


def vec4_rows(header: str, buf: str, row_len: int, n: int, acc_init: str, other: str, out: str,
              mul_first_other: bool) -> str:
    """Each invocation reads its own row of `buf` four floats per load (a vec4 alias of the binding)."""
    binding = re.search(rf"binding = (\d+)\) readonly buffer vk_buf_{buf} ", header).group(1)
    alias = f"layout(std430, set = 0, binding = {binding}) readonly buffer vk_buf_{buf}_v4 {{ vec4 {buf}_v4[]; }};\n"
    terms = []
    for c, comp in enumerate("xyzw"):
        o, w = f"vyre_canon({other}[k + {c}u])", f"vyre_canon(v.{comp})"
        terms.append(f"acc = vyre_fadd(acc, vyre_fmul({o + ', ' + w if mul_first_other else w + ', ' + o}));")
    return f"""{header}{alias}
void main() {{
    uint i = gl_GlobalInvocationID.x;
    if (i >= {n}u) return;
    float acc = {acc_init};
    for (uint k = 0u; k < {row_len}u; k += 4u) {{
        vec4 v = {buf}_v4[(i * {row_len}u + k) / 4u];
        {' '.join(terms)}
    }}
    {out}
}}
"""


def split_header(glsl: str) -> str:
    """Declarations and helper functions of a lowered shader (everything before its loads, or
    before main when the bounds pass left no clamped-load helper)."""
    at = glsl.find("float vk_ld_")
    return glsl[:at if at >= 0 else glsl.index("void main")]


# The hand-written variants name buffers as the program does; the lowering spells a buffer
# `n` as `b_n` (vyre_vk/lower/names.py), so they are respelled before compiling.
_BUFFERS = r"(?<![\w.])(x|w1|b1|w2|grad_out|grad_x|opt_hoist_gh_0|sa|sb)(?=\[)"


def spell(glsl: str) -> str:
    return re.sub(_BUFFERS, r"b_\1", glsl)


def with_local_size(glsl: str, size: int) -> str:
    return re.sub(r"local_size_x = \d+", f"local_size_x = {size}", glsl)


def plain(glsl: str) -> str:
    """Diagnostic: vyre's NaN/subnormal/signed-zero handling replaced by plain float ops."""
    for fn, op in (("vyre_fadd", "+"), ("vyre_fmul", "*")):
        glsl = re.sub(rf"float {fn}\(float a, float b\) \{{", f"float {fn}(float a, float b) {{ return a {op} b;", glsl)
    return glsl


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="2048x8192")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--period-ns", type=float, default=1.0)
    ap.add_argument("--profile-only", action="store_true", help="only the compiled graph's times")
    ap.add_argument("--fission-only", action="store_true", help="stop after the fission stage diagnostic")
    args = ap.parse_args()
    m, h = (int(v) for v in args.size.split("x"))
    program = get("vyre-libs::nn::mlp_backward").build_with(model_dim=m, hidden_dim=h)
    rng = np.random.default_rng(m * h)
    x = rng.standard_normal(m, dtype=np.float32)
    w1 = rng.standard_normal(m * h, dtype=np.float32) / np.float32(np.sqrt(m))
    b1 = rng.standard_normal(h, dtype=np.float32) * np.float32(0.1)
    w2 = rng.standard_normal(h * m, dtype=np.float32) / np.float32(np.sqrt(h))
    go = rng.standard_normal(m, dtype=np.float32)
    with Device() as dev:
        # the variants below rework the hoisted pre-pass + main kernel (fission off)
        graph, _ = optimize(program, [p for p in PASS_NAMES if p != "fission"], device_class=device_class(dev.name))
        assert len(graph.stages) == 2, "expected the hoisted pre-pass + main kernel"
        kernel = dev.compile(program)
        inputs = {"x": x, "w1": w1, "b1": b1, "w2": w2, "grad_out": go}
        want = kernel.run(inputs)["grad_x"]
        per_op: list = []
        gpu, host = kernel.profile(inputs, repeats=args.reps, timestamp_period_ns=args.period_ns, per_op=per_op)
        print(f"{dev.name}: seed {m}x{h} as compiled: GPU {statistics.median(gpu) * 1e3:.3f} ms, host "
              f"{statistics.median(host) * 1e3:.3f} ms; per op (ms): "
              + ", ".join(f"{statistics.median(c) * 1e3:.3f}" for c in zip(*per_op)))
        import time
        ts = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            kernel.run(inputs)
            ts.append(time.perf_counter() - t0)
        print(f"  end to end Kernel.run: {statistics.median(ts) * 1e3:.3f} ms")
        resident = dict(inputs, w1=dev.array(w1), w2=dev.array(w2))
        ts = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            kernel.run(resident)
            ts.append(time.perf_counter() - t0)
        print(f"  end to end Kernel.run, w1 and w2 resident (DeviceArray): {statistics.median(ts) * 1e3:.3f} ms")
        if args.profile_only:
            return 0

        mgr = dev.manager
        tens = {n: kp_bridge.tensor(mgr, v) for n, v in inputs.items()}
        tens["opt_hoist_gh_0"] = kp_bridge.tensor(mgr, np.zeros(h, np.float32))
        tens["grad_x"] = kp_bridge.tensor(mgr, np.zeros(m, np.float32))
        seq = mgr.sequence()
        seq.record(kp_bridge.sync_device(list(tens.values()))).eval()
        s0, s1 = (lower(s) for s in graph.stages)
        order0 = [b.name for b in sorted(graph.stages[0].buffers, key=lambda b: b.binding) if not b.is_workgroup]
        order1 = [b.name for b in sorted(graph.stages[1].buffers, key=lambda b: b.binding) if not b.is_workgroup]

        def timed(glsl: str, names: list, invocations: int, local: int, out: str):
            spv = spirv.compile_glsl(spell(glsl), target_env=s0.target_env)
            algo = kp_bridge.algorithm(mgr, [tens[n] for n in names], spv, (-(-invocations // local), 1, 1))
            times = [t * 1e3 for t in dispatch_seconds(mgr, algo, args.reps, args.period_ns, warm_evals=10)]
            mgr.sequence().record(kp_bridge.sync_local([tens[out]])).eval()
            return statistics.median(times), tens[out].data().copy()

        def local_of(glsl):
            return int(re.search(r"local_size_x = (\d+)", glsl).group(1))

        full, _ = optimize(program, device_class=device_class(dev.name))
        if len(full.stages) == 3:  # the fission stage as lowered vs with unclamped loads (diagnostic)
            fa = lower(full.stages[0]).glsl
            names = [b.name for b in sorted(full.stages[0].buffers, key=lambda b: b.binding)]
            for b in full.stages[0].buffers:
                if b.name not in tens:
                    tens[b.name] = kp_bridge.tensor(mgr, np.zeros(b.count, np.float32))
            unclamped = re.sub(r"(float vk_ld_(\w+)\(uint vk_i\) \{).*?\}\n",
                               lambda mm: f"{mm.group(1)} return vyre_canon({mm.group(2)}[vk_i]); }}\n", fa)
            for label, src in (("fission stage as lowered", fa), ("fission stage, loads unclamped", unclamped)):
                t_ms, _ = timed(src, names, 2 * h, local_of(src), names[-1])
                print(f"  {label:34} {t_ms:8.3f} ms")
        if args.fission_only:
            return 0

        base0 = s0.glsl
        t, gh = timed(base0, order0, h, local_of(base0), "opt_hoist_gh_0")
        print(f"stage 0 (pre-pass, {h} invocations) as lowered, local {local_of(base0)}: {t:.3f} ms")
        rows = []
        for L in (64, 128, 256):
            rows.append((f"stage 0 local {L}", *timed(with_local_size(base0, L), order0, h, L, "opt_hoist_gh_0")))
        hdr0 = split_header(base0)
        for T in (16, 32, 64):
            rows.append((f"stage 0 w2 tile {T}", *timed(with_local_size(tiled_prepass(hdr0, m, h, T), T), order0, h, T,
                                                        "opt_hoist_gh_0")))
        fa, fb = fission_prepass(hdr0, m, h)
        tens["sa"] = kp_bridge.tensor(mgr, np.zeros(h, np.float32))
        tens["sb"] = kp_bridge.tensor(mgr, np.zeros(h, np.float32))
        mgr.sequence().record(kp_bridge.sync_device([tens["sa"], tens["sb"]])).eval()
        ta, _ = timed(with_local_size(fa, 64), order0 + ["sa", "sb"], 2 * h, 64, "sa")
        tb, got = timed(with_local_size(fb, 64), order0 + ["sa", "sb"], h, 64, "opt_hoist_gh_0")
        rows.append((f"stage 0 fission ({ta:.3f} + {tb:.3f})", ta + tb, got))
        rows.append(("stage 0 plain ops (diagnostic)", *timed(plain(base0), order0, h, local_of(base0), "opt_hoist_gh_0")))
        for name, tt, got in rows:
            ok = "bit-identical" if got.tobytes() == gh.tobytes() else "DIFFERS"
            print(f"  {name:34} {tt:8.3f} ms  {ok}")
        timed(base0, order0, h, local_of(base0), "opt_hoist_gh_0")  # stage 1 reads the lowered stage 0's gh
        base1 = s1.glsl
        t1, gx = timed(base1, order1, m, local_of(base1), "grad_x")
        print(f"stage 1 (main, {m} invocations) as lowered, local {local_of(base1)}: {t1:.3f} ms "
              f"({'bit-identical' if gx.tobytes() == want.tobytes() else 'DIFFERS'} to Kernel.run)")
        rows = []
        for L in (32, 64, 128):
            rows.append((f"stage 1 local {L}", *timed(with_local_size(base1, L), order1, m, L, "grad_x")))
        hdr1 = split_header(base1)
        for T in (8, 16, 32, 64):
            rows.append((f"stage 1 w1 tile {T}", *timed(with_local_size(tiled_main(hdr1, m, h, T), T), order1, m, T,
                                                        "grad_x")))
        rows.append(("stage 1 w1 rows as vec4", *timed(vec4_rows(
            with_local_size(hdr1, 64), "w1", h, m, "0.0", "opt_hoist_gh_0", "grad_x[i] = vyre_canon(acc);", True),
            order1, m, 64, "grad_x")))
        rows.append(("stage 1 restrict readonly", *timed(base1.replace(") readonly buffer", ") restrict readonly buffer"),
                                                         order1, m, local_of(base1), "grad_x")))
        rows.append(("stage 1 plain ops (diagnostic)", *timed(plain(base1), order1, m, local_of(base1), "grad_x")))
        for name, tt, got in rows:
            ok = "bit-identical" if got.tobytes() == want.tobytes() else "DIFFERS"
            print(f"  {name:34} {tt:8.3f} ms  {ok}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
