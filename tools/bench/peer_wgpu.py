"""wgpu-py (WGSL compute on wgpu-native's Vulkan backend): the peer a Python user would pick
instead of vyre-vk, for tools/bench/run.py sections (a)-(c), with hand-written WGSL.

Each kernel is checked before it is timed. GPU time comes from timestamp queries written at
the start and end of the compute pass (wgpu reports nanoseconds); host time is submit + a
4-byte read-back of the output (wgpu-py 0.32's ``on_submitted_work_done_sync`` fails against
its bundled wgpu-native: a callback signature mismatch, TypeError). The seed op is the two-pass schedule a careful wgpu user
writes by hand (per hidden unit j, then per model unit i), plain f32 arithmetic.

Taichi's Vulkan backend, the other peer the issue names, has no wheel for the GPU machine's
Python 3.12 (PyPI's taichi 1.7.x stops at cp311), so it cannot run in the same run there.
"""
from __future__ import annotations

import time
from typing import Optional

import numpy as np

TINY = """
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@compute @workgroup_size(1)
fn main() { a[0] = a[0] + 1u; }
"""

ADD = """
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = g.y * n.x * 256u + g.x;  // 2-D grid: WebGPU allows 65535 workgroups per dimension
    if (i < arrayLength(&out)) { out[i] = a[i] + b[i]; }
}
"""

SEED_PRE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w1: array<f32>;
@group(0) @binding(2) var<storage, read> b1: array<f32>;
@group(0) @binding(3) var<storage, read> w2: array<f32>;
@group(0) @binding(4) var<storage, read> go: array<f32>;
@group(0) @binding(5) var<storage, read_write> gh: array<f32>;
const M: u32 = {m}u;
const H: u32 = {h}u;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let j = g.x;
    if (j >= H) {{ return; }}
    var hid = b1[j];
    for (var m = 0u; m < M; m++) {{ hid += x[m] * w1[m * H + j]; }}
    var gg = 0.0;
    for (var k = 0u; k < M; k++) {{ gg += go[k] * w2[j * M + k]; }}
    gh[j] = gg * max(0.5 * hid, 2.0 * hid);
}}
"""

SEED_MAIN = """
@group(0) @binding(0) var<storage, read> w1: array<f32>;
@group(0) @binding(1) var<storage, read> gh: array<f32>;
@group(0) @binding(2) var<storage, read_write> gx: array<f32>;
const M: u32 = {m}u;
const H: u32 = {h}u;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let i = g.x;
    if (i >= M) {{ return; }}
    var acc = 0.0;
    for (var j = 0u; j < H; j++) {{ acc += gh[j] * w1[i * H + j]; }}
    gx[i] = acc;
}}
"""


def available() -> Optional[str]:
    """None when wgpu-py can run here, else why not."""
    try:
        import wgpu
    except ImportError:
        return "wgpu-py not installed"
    try:
        wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    except Exception as e:  # no adapter: report, don't crash the run
        return f"wgpu-py found no adapter: {e}"
    return None


class Peer:
    def __init__(self) -> None:
        import wgpu
        self.wgpu = wgpu
        self.adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        feats = ["timestamp-query"] if "timestamp-query" in self.adapter.features else []
        self.device = self.adapter.request_device_sync(required_features=feats)
        self.timestamps = bool(feats)
        self.name = self.adapter.info.get("device", "?")

    def buffer(self, data: np.ndarray, out: bool = False):
        u = self.wgpu.BufferUsage
        return self.device.create_buffer_with_data(
            data=np.ascontiguousarray(data), usage=u.STORAGE | u.COPY_SRC | (u.COPY_DST if out else 0))

    def kernel(self, wgsl: str, buffers: list):
        mod = self.device.create_shader_module(code=wgsl)
        pipe = self.device.create_compute_pipeline(layout="auto", compute={"module": mod, "entry_point": "main"})
        group = self.device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
            {"binding": k, "resource": {"buffer": b, "offset": 0, "size": b.size}} for k, b in enumerate(buffers)])
        return pipe, group

    def run(self, passes: list, wait_on, timed: bool = False) -> Optional[float]:
        """Record `passes` [(pipeline, group, workgroups)] in one encoder, submit, wait (a 4-byte
        read of `wait_on`, a buffer the last pass writes).
        Returns the GPU seconds from the first pass's start to the last pass's end if `timed`."""
        enc = self.device.create_command_encoder()
        qs = None
        if timed and self.timestamps:
            qs = self.device.create_query_set(type="timestamp", count=2)
        for k, (pipe, group, wgs) in enumerate(passes):
            tw = None
            if qs is not None:
                tw = {"query_set": qs}
                if k == 0:
                    tw["beginning_of_pass_write_index"] = 0
                if k == len(passes) - 1:
                    tw["end_of_pass_write_index"] = 1
            cp = enc.begin_compute_pass(timestamp_writes=tw) if tw else enc.begin_compute_pass()
            cp.set_pipeline(pipe)
            cp.set_bind_group(0, group)
            cp.dispatch_workgroups(*wgs)
            cp.end()
        if qs is None:
            self.device.queue.submit([enc.finish()])
            self.device.queue.read_buffer(wait_on, 0, 4)
            return None
        u = self.wgpu.BufferUsage
        res = self.device.create_buffer(size=16, usage=u.QUERY_RESOLVE | u.COPY_SRC)
        enc.resolve_query_set(qs, 0, 2, res, 0)
        self.device.queue.submit([enc.finish()])
        ts = np.frombuffer(self.device.queue.read_buffer(res), dtype=np.uint64)
        return float(ts[1] - ts[0]) * 1e-9

    def read(self, buf, dtype) -> np.ndarray:
        return np.frombuffer(self.device.queue.read_buffer(buf), dtype=dtype).copy()


def _median(fn, reps: int) -> float:
    fn()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return float(np.median(out))


def latency(peer: Peer, reps: int) -> dict:
    """(a): submit + wait of a one-invocation kernel (counter increment, checked)."""
    buf = peer.buffer(np.zeros(1, np.uint32), out=True)
    pipe, group = peer.kernel(TINY, [buf])
    n = reps + 1
    t = _median(lambda: peer.run([(pipe, group, (1, 1, 1))], buf), reps)
    got = int(peer.read(buf, np.uint32)[0])
    assert got == n, f"wgpu tiny kernel counted {got}, expected {n}"
    return {"wgpu_submit_wait_us": t * 1e6}


def elementwise(peer: Peer, n: int, reps: int) -> dict:
    """(b): out = a + b over n f32 (vec4 loads, local size 256), GPU time from timestamps."""
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    ba, bb, bo = peer.buffer(a), peer.buffer(b), peer.buffer(np.zeros(n, np.float32), out=True)
    pipe, group = peer.kernel(ADD, [ba, bb, bo])
    total = -(-(n // 4) // 256)
    wgs = (min(total, 65535), -(-total // 65535), 1)
    peer.run([(pipe, group, wgs)], bo)
    assert np.array_equal(peer.read(bo, np.float32), a + b), "wgpu elementwise result differs from NumPy"
    gpu = [peer.run([(pipe, group, wgs)], bo, timed=True) for _ in range(reps)]
    host = _median(lambda: peer.run([(pipe, group, wgs)], bo), reps)
    row = {"wgpu_host_ms": host * 1e3}
    if gpu[0] is not None:
        row.update(wgpu_gpu_ms=float(np.median(gpu)) * 1e3, wgpu_gbps=12 * n / float(np.median(gpu)) / 1e9)
    for buf in (ba, bb, bo):
        buf.destroy()
    return row


def seed(peer: Peer, x, w1, b1, w2, go, want: np.ndarray, reps: int) -> dict:
    """(c): the seed op as two hand-written WGSL passes in one submission, end to end
    (grad_x read back; weights resident), checked against the float64 NumPy formula."""
    m, h = x.size, b1.size
    bx, bw1, bb1, bw2, bgo = (peer.buffer(v) for v in (x, w1, b1, w2, go))
    bgh, bgx = peer.buffer(np.zeros(h, np.float32), out=True), peer.buffer(np.zeros(m, np.float32), out=True)
    pre = peer.kernel(SEED_PRE.format(m=m, h=h), [bx, bw1, bb1, bw2, bgo, bgh])
    main = peer.kernel(SEED_MAIN.format(m=m, h=h), [bw1, bgh, bgx])
    passes = [(pre[0], pre[1], (-(-h // 64), 1, 1)), (main[0], main[1], (-(-m // 64), 1, 1))]

    def once():
        peer.run(passes, bgx)
        return peer.read(bgx, np.float32)

    got = once()
    err = float(np.max(np.abs(got - want))) / float(np.max(np.abs(want)))
    assert err < 1e-3, f"wgpu seed op relative error {err}"
    row = {"wgpu_ms": _median(once, reps) * 1e3, "wgpu_rel_err": err}
    gpu = peer.run(passes, bgx, timed=True)
    if gpu is not None:
        row["wgpu_gpu_ms"] = gpu * 1e3
    for buf in (bx, bw1, bb1, bw2, bgo, bgh, bgx):
        buf.destroy()
    return row
