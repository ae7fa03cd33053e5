"""Resources stay flat: 10,000 runs and 1,000 device open/compile/run/close cycles in one process.

Thresholds (after a warm-up that fills caches and allocator pools): RSS may grow at most
16 MiB over 10,000 runs and at most 32 MiB over 1,000 device cycles (a leak of one staging
buffer, pipeline or descriptor pool per cycle would cost far more: a leaked kp Manager is
~MiBs of lavapipe state); open file descriptors must be exactly where they started.
"""
import gc
import os

import numpy as np

from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.runtime import Device

U32 = DataType.U32
MiB = 1 << 20


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _program(k: int = 0) -> Program:
    i = Expr.gid_x()
    return Program.wrapped([BufferDecl.read("a", 0, U32).with_count(256), BufferDecl.output("out", 1, U32).with_count(256)],
                           (64, 1, 1), [wrap_anonymous(f"res{k}", [Node.store("out", i, Expr.add(Expr.load("a", i), Expr.u32(k)))])])


def test_ten_thousand_runs_keep_rss_and_fds_flat(vk_device):
    k = vk_device.compile(_program())
    a = np.arange(256, dtype=np.uint32)
    for _ in range(500):
        k.run({"a": a})
    gc.collect()
    r0, f0 = rss(), fds()
    for n in range(10_000):
        out = k.run({"a": a})
        if n % 2500 == 0:
            assert out["out"][255] == 255
    gc.collect()
    assert fds() == f0
    assert rss() - r0 < 16 * MiB, f"RSS grew {(rss() - r0) / MiB:.1f} MiB over 10,000 runs"
    assert k.stats.plans_built == 1


def test_thousand_device_compile_close_cycles_keep_rss_and_fds_flat():
    a = np.arange(256, dtype=np.uint32)

    def cycle(n: int) -> None:
        with Device() as dev:
            kernel = dev.compile(_program(n % 8))  # SPIR-V from the content cache after the first 8
            assert kernel.run({"a": a})["out"][3] == 3 + n % 8
            kernel.release()

    for n in range(50):
        cycle(n)
    gc.collect()
    r0, f0 = rss(), fds()
    for n in range(1000):
        cycle(n)
    gc.collect()
    assert fds() == f0
    assert rss() - r0 < 32 * MiB, f"RSS grew {(rss() - r0) / MiB:.1f} MiB over 1,000 cycles"
