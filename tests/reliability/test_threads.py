"""Kernels run concurrently from 8 threads give correct results (Device.lock serialises kp)."""
import threading

import numpy as np

from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous

U32 = DataType.U32


def _program(k: int) -> Program:
    i = Expr.gid_x()
    return Program.wrapped([BufferDecl.read("a", 0, U32), BufferDecl.output("out", 1, U32).with_count(256)], (64, 1, 1),
                           [wrap_anonymous(f"thr{k}", [Node.store("out", i, Expr.add(Expr.mul(Expr.load("a", i), Expr.u32(k + 2)), Expr.u32(k)))])])


def test_eight_threads_shared_and_private_kernels(vk_device):
    shared = vk_device.compile(_program(99))
    errors, done = [], [0] * 8
    barrier = threading.Barrier(8)

    def worker(t: int) -> None:
        try:
            rng = np.random.default_rng(t)
            barrier.wait()
            for r in range(60):
                k = vk_device.compile(_program(t % 4)) if r % 2 else shared
                mult = (t % 4) + 2 if r % 2 else 101
                add = t % 4 if r % 2 else 99
                n = int(rng.integers(256, 400))  # several size signatures: plans built concurrently
                a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
                got = k.run({"a": a})["out"]
                want = (a[:256].astype(np.uint64) * mult + add).astype(np.uint32)
                assert got.tolist() == want.tolist(), (t, r)
                done[t] += 1
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, errors[:3]
    assert done == [60] * 8
