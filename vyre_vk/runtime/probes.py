"""Device probes: may this device's shaders use fma-based exact fast paths, and double?

Vulkan lets ``fma()`` round twice (its precision is inherited from a multiply and an add);
NVIDIA's rounds once, lavapipe's may not. The fast division path (vyre_vk.lower.ieee.FUSED)
is exact only with a single rounding: its residuals ``|a| - q |b|`` must come out exact.
So when a device opens, the division itself is dispatched with the fast path on quotients
chosen to sit next to a rounding midpoint (where a doubly rounded residual picks the wrong
neighbour) plus random operands in the fast window, and compared bit for bit with the
correctly rounded quotients computed here. The GLSL is what the lowering emits for an IR
division (``lower(..., fused_fma=True)``), so the probe checks the very helper the
shaders call; GLSL makes every precise ``fma()`` of a device round the same way.

The float64 probe runs exp and tanh as lowered with ``float64=True`` (ffmath64.py) on edge
and random arguments, against the reference's bits, on devices that report shaderFloat64.

A result depends only on the driver build and the probe's shader, so it is kept on disk
(:func:`cached`, next to the SPIR-V cache) under a key of both: the device's
pipelineCacheUUID, vendor, device and driver version (a driver update changes them, as it
invalidates Vulkan pipeline caches), the shader's digest and PROBE_CACHE_FORMAT. A new
process then opens a device in ~40 ms instead of ~130 (three pipelines and dispatches).

>>> cases = probe_cases()
>>> len(cases[0]) == len(cases[1]) == len(cases[2]) == PROBE_CASES
True
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import astuple, dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Optional, TypeVar

import numpy as np

from vyre_vk import spirv
from vyre_vk.runtime import kp_bridge

if TYPE_CHECKING:
    import kp

#: Operand pairs the probe divides: half near-midpoint quotients, half random in the window.
PROBE_CASES = 4096
PROBE_LOCAL_SIZE = 64
P = TypeVar("P")
#: Part of every probe-cache key: bump it when a probe's cases or its verdict change (the
#: shader's digest is in the key already).
PROBE_CACHE_FORMAT = 1
#: A disk cache capped below this keeps no probe results (three entries of ~150 bytes a driver).
PROBE_CACHE_MIN_CAP = 1 << 20


def cache_key(props: Mapping, kind: str, shader: bytes) -> Optional[str]:
    """The disk-cache key of probe ``kind`` with ``shader`` on the device ``props`` describe;
    None when the device does not identify its driver build (then nothing is cached)."""
    uuid = props.get("pipeline_cache_uuid")
    if not isinstance(uuid, (bytes, bytearray)) or not any(uuid):
        return None
    parts = (kind, PROBE_CACHE_FORMAT, props.get("device_name"), props.get("vendor_id"), props.get("device_id"),
             props.get("driver_version"), bytes(uuid).hex(), hashlib.sha256(shader).hexdigest(), PROBE_CASES)
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def cached(props: Mapping, kind: str, shader: bytes, cls: Callable[..., P], run: Callable[[], P]) -> P:
    """``run()``'s result, from the probe cache when this driver build and shader ran it before.

    An unreadable, foreign or corrupt entry is ignored and rewritten; a cache folder that
    cannot be written, or a disk cache capped under PROBE_CACHE_MIN_CAP bytes (where the
    entries would not fit the user's cap), just means probing again next time."""
    from vyre_vk.spirv_cache import cache_dir, disk_cache_max_bytes

    key = cache_key(props, kind, shader)
    if key is None or disk_cache_max_bytes() < PROBE_CACHE_MIN_CAP:
        return run()
    path = cache_dir() / "probes" / f"{key}.json"
    try:
        entry = json.loads(path.read_text())
        values = entry["result"]
        if entry["key"] == key and entry["kind"] == kind and all(type(v) is int for v in values):
            return cls(*values)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    result = run()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{key}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "kind": kind, "result": list(astuple(result))}))
        os.replace(tmp, path)  # readers see the old entry or the whole new one
    except OSError:
        pass
    return result


def probe_cases(n: int = PROBE_CASES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, expected a / b) as float32; the quotient is rounded once, to nearest even
    (float64 division then float32: double rounding cannot hit a midpoint for p = 24).
    Every quotient is normal: the reference flushes subnormal results, IEEE does not."""
    rng = np.random.default_rng(20261203)
    half = n // 2
    q = ((rng.random(half) + 1.0) * 2.0 ** rng.integers(-30, 30, half)).astype(np.float32)
    b_mid = ((rng.random(half) + 1.0) * 2.0 ** rng.integers(-40, 40, half)).astype(np.float32)
    a_mid = (q.astype(np.float64) * (1 + 2.0 ** -24) * b_mid.astype(np.float64)).astype(np.float32)
    sign = np.where(rng.random(n - half) < 0.5, -1.0, 1.0)
    a_rand = (sign * (rng.random(n - half) + 1.0) * 2.0 ** rng.integers(-60, 60, n - half)).astype(np.float32)
    b_rand = ((rng.random(n - half) + 1.0) * 2.0 ** rng.integers(-60, 60, n - half)).astype(np.float32)
    a, b = np.concatenate([a_mid, a_rand]), np.concatenate([b_mid, b_rand])
    return a, b, (a.astype(np.float64) / b.astype(np.float64)).astype(np.float32)


@dataclass(frozen=True)
class FmaProbe:
    """How many probe quotients the fused-fma division path got right."""
    correct: int
    total: int

    @property
    def passed(self) -> bool:
        return self.correct == self.total

    def __str__(self) -> str:
        verdict = "fused (fast exact division)" if self.passed else "not fused (integer division)"
        return f"fma probe: {verdict}, {self.correct} of {self.total} quotients exact"


@functools.lru_cache(maxsize=1)
def division_spirv() -> bytes:
    """SPIR-V of `q[i] = a[i] / b[i]` lowered with the fused-fma division (what the probe runs)."""
    from vyre_vk.ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program
    from vyre_vk.lower import lower

    f32, i = DataType.F32, Expr.var("i")
    program = Program.wrapped(
        [BufferDecl.storage("a", 0, BufferAccess.ReadOnly, f32).with_count(PROBE_CASES),
         BufferDecl.storage("b", 1, BufferAccess.ReadOnly, f32).with_count(PROBE_CASES),
         BufferDecl.output("q", 2, f32).with_count(PROBE_CASES)],
        (PROBE_LOCAL_SIZE, 1, 1),
        [Node.let_bind("i", Expr.gid_x()),
         Node.if_then(Expr.lt(i, Expr.u32(PROBE_CASES)),
                      [Node.store("q", i, Expr.div(Expr.load("a", i), Expr.load("b", i)))])])
    low = lower(program, fused_fma=True)
    return spirv.compile_glsl(low.glsl, name="vyre-vk-fma-probe.comp", target_env=low.target_env)


def _dispatch(mgr: "kp.Manager", words: bytes, inputs: list[np.ndarray]) -> np.ndarray:
    """One dispatch of ``words`` over ``inputs`` and a zeroed output like the first; the output."""
    n = inputs[0].size
    tensors = [kp_bridge.tensor(mgr, a) for a in inputs] + [kp_bridge.tensor(mgr, np.zeros_like(inputs[0]))]
    algo = kp_bridge.algorithm(mgr, tensors, words, (n // PROBE_LOCAL_SIZE, 1, 1))
    seq = mgr.sequence()
    try:
        (seq.record(kp_bridge.sync_device(tensors)).record(kp_bridge.dispatch(algo))
            .record(kp_bridge.sync_local([tensors[-1]])).eval())
        return np.asarray(tensors[-1].data()).view(np.float32)[:n].copy()
    finally:
        for obj in (seq, algo, *tensors):
            obj.destroy()


def fma_probe(mgr: "kp.Manager") -> FmaProbe:
    """Dispatch the probe on ``mgr``'s device (one small compile, cached, and one dispatch)."""
    a, b, want = probe_cases()
    got = _dispatch(mgr, division_spirv(), [a, b])
    return FmaProbe(int(np.count_nonzero(got.view(np.uint32) == want.view(np.uint32))), PROBE_CASES)


@dataclass(frozen=True)
class Float64Probe:
    """How many exp/tanh probe results the float64 helpers got right (``total`` 0: no shaderFloat64)."""
    correct: int
    total: int

    @property
    def passed(self) -> bool:
        return self.total > 0 and self.correct == self.total

    def __str__(self) -> str:
        if not self.total:
            return "float64 probe: no shaderFloat64 (exp and tanh in float-float)"
        verdict = "passed (exp and tanh in double)" if self.passed else "failed (exp and tanh in float-float)"
        return f"float64 probe: {verdict}, {self.correct} of {self.total} results exact"


def float64_program():
    """``q[i] = exp(a[i])`` for i < PROBE_CASES / 2, ``tanh(a[i])`` above: the probe's program."""
    from vyre_vk.ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, UnOp

    f32, i, half = DataType.F32, Expr.var("i"), PROBE_CASES // 2
    x = Expr.load("a", i)
    return Program.wrapped(
        [BufferDecl.storage("a", 0, BufferAccess.ReadOnly, f32).with_count(PROBE_CASES),
         BufferDecl.output("q", 1, f32).with_count(PROBE_CASES)],
        (PROBE_LOCAL_SIZE, 1, 1),
        [Node.let_bind("i", Expr.gid_x()),
         Node.if_then(Expr.lt(i, Expr.u32(PROBE_CASES)),
                      [Node.store("q", i, Expr.select(Expr.lt(i, Expr.u32(half)), Expr.unop(UnOp.Exp, x),
                                                      Expr.unop(UnOp.Tanh, x)))])])


def float64_cases(n: int = PROBE_CASES) -> np.ndarray:
    """Arguments: exp's overflow, FLT_MIN and flush edges and random ones over its range, then
    tanh's tiny, series/exp switch and saturation edges and random ones over [-10, 10]."""
    rng = np.random.default_rng(20261204)
    half = n // 2
    exp_edges = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 88.72283, 88.722839, 88.7228394, -87.336548,
                          -87.3365479, -87.33654, -103.27893, -103.9, 1e-30, -1e-30], np.float32)
    tanh_edges = np.array([0.0, -0.0, np.nan, 2.0 ** -12, -(2.0 ** -12), 0.17328679, 0.1732868, 9.5, 9.499999,
                           -9.499999, 1e-30], np.float32)
    ex = rng.uniform(-104.0, 89.0, half - exp_edges.size).astype(np.float32)
    th = (rng.standard_normal(n - half - tanh_edges.size) * 3.0).astype(np.float32)
    return np.concatenate([exp_edges, ex, tanh_edges, th])


@functools.lru_cache(maxsize=1)
def float64_spirv() -> bytes:
    """SPIR-V of the float64 probe's program, lowered with ``float64=True``."""
    from vyre_vk.lower import lower

    low = lower(float64_program(), float64=True)
    return spirv.compile_glsl(low.glsl, name="vyre-vk-float64-probe.comp", target_env=low.target_env)


def float64_probe(mgr: "kp.Manager") -> Float64Probe:
    """Run the float64 probe on ``mgr``'s device (which must report shaderFloat64)."""
    from vyre_vk import reference

    a = float64_cases()
    want = reference.run(float64_program(), {"a": a})["q"]
    got = _dispatch(mgr, float64_spirv(), [a])
    return Float64Probe(int(np.count_nonzero(got.view(np.uint32) == want.view(np.uint32))), PROBE_CASES)


__all__ = ["FmaProbe", "Float64Probe", "PROBE_CACHE_MIN_CAP", "cache_key", "cached", "PROBE_CASES", "PROBE_LOCAL_SIZE", "division_spirv", "float64_cases",
           "float64_probe", "float64_program", "float64_spirv", "fma_probe", "probe_cases"]
