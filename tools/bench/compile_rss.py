"""Memory of a long-lived process that compiles many distinct programs (issue 13's resource bound).

    PYTHONPATH=. python tools/bench/compile_rss.py [--programs 2000]

Compiles and runs N distinct programs on one Device and prints RSS growth over the first
program, the caches' sizes against their documented caps (VYRE_VK_MAX_KERNELS kernels per
device, VYRE_VK_SPIRV_MEMORY_CACHE_BYTES of SPIR-V in memory, VYRE_VK_CACHE_MAX_BYTES on disk),
every 250 programs. Each result is checked.
"""
from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from vyre_vk import spirv
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.runtime import Device


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def program(k: int) -> Program:
    i = Expr.var("i")
    body = [Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, Expr.buf_len("o")), [
        Node.store("o", i, Expr.add(Expr.load("a", i), Expr.u32(k)))])]
    return Program.wrapped([BufferDecl.read("a", 0, DataType.U32), BufferDecl.output("o", 1, DataType.U32).with_count(16)],
                           (64, 1, 1), [wrap_anonymous("bench::rss", body)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=2000)
    args = ap.parse_args()
    a = np.arange(16, dtype=np.uint32)
    with tempfile.TemporaryDirectory() as tmp, Device() as dev:
        import os
        os.environ.setdefault("VYRE_VK_CACHE_DIR", tmp)
        dev.compile(program(0)).run({"a": a})
        base, t0 = rss_mib(), time.perf_counter()
        for k in range(1, args.programs + 1):
            assert dev.compile(program(k)).run({"a": a})["o"][3] == 3 + k
            if k % 250 == 0 or k == args.programs:
                info = spirv.cache_info()
                print(f"{k:5} programs: RSS +{rss_mib() - base:6.1f} MiB, kernels {len(dev._kernels)}/{dev.max_kernels}, "
                      f"cache {info}, {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
