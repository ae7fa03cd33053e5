"""Threads sharing a device and kernels, fork after use, and a Device closed under a running thread."""
from __future__ import annotations

import multiprocessing as mp
import threading
import time
import traceback

import numpy as np

from vyre_vk.ir import BufferDecl, Expr, Node

from .common import (Crash, Hang, Raw, Typed, Wrong, add, compare, default_device, is_typed, reraise_worst,
                     run_threads)

from .progs import I32, U32, axpy_u32, guarded, i_, inputs_for, map1, prog, scale_f32, u32s

C = "concurrency"


def _want_axpy(a: np.ndarray, k: int = 3, c: int = 1, n: int = 64) -> dict:
    return {"out": (a[:n].astype(np.uint64) * k + c).astype(np.uint32)}


def _dev():
    import vyre_vk
    return default_device()


# ----------------------------------------------------------------------------- 8 threads
def shared_kernel(kind: str) -> None:
    dev = _dev()
    if kind == "graph":  # an optimised multi-stage kernel
        from vyre_vk import reference
        from vyre_vk.ops import get
        p = get("vyre-libs::nn::softmax").build_with(n=64)
        k = dev.compile(p)
        ins = [inputs_for(p, s) for s in range(8)]
        wants = [reference.run(p, x) for x in ins]

        def job(t):
            for r in range(6):
                compare(k.run(ins[(t + r) % 8]), wants[(t + r) % 8], what=f"thread {t} run {r}")
        run_threads([lambda t=t: job(t) for t in range(8)], timeout=60)
        return
    p = axpy_u32(64, count_in=0) if kind == "sizes" else scale_f32(64) if kind == "f32" else axpy_u32(64)
    k = dev.compile(p)

    def job(t: int) -> None:
        rng = np.random.default_rng(t)
        for r in range(25):
            if kind == "f32":
                a = rng.standard_normal(64).astype(np.float32)
                compare(k.run({"a": a}), {"out": a * np.float32(2.0)}, what=f"thread {t} run {r}")
                continue
            n = int(rng.integers(64, 200)) if kind == "sizes" else 64
            a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
            arg = dev.array(a) if kind == "device-arrays" else a
            compare(k.run({"a": arg}), _want_axpy(a), what=f"thread {t} run {r}")
    run_threads([lambda t=t: job(t) for t in range(8)], timeout=60)


for _k in ["u32", "f32", "sizes", "device-arrays", "graph"]:
    add(f"{C}/threads/one-kernel-{_k}", lambda k=_k: shared_kernel(k), timeout=60)


def compile_threads(kind: str) -> None:
    import vyre_vk
    from vyre_vk.runtime import Device
    dev = _dev() if kind != "own-devices" else None

    def job(t: int) -> None:
        a = u32s(64, t)
        for r in range(3):
            same = kind == "same-program"
            kk, c = (7, 3) if same else (t + 2 + 10 * r, t)
            p = axpy_u32(64, kk, c, op=f"hostile::thr{0 if same else t}_{r}")
            if kind == "own-devices":
                with Device() as d:
                    got = d.compile(p).run({"a": a})
            elif kind == "one-shot-run":
                got = vyre_vk.run(p, {"a": a})
            else:
                got = dev.compile(p).run({"a": a})
            compare(got, _want_axpy(a, kk, c), what=f"thread {t} program {r}")
    run_threads([lambda t=t: job(t) for t in range(8)], timeout=90)


for _k in ["distinct-programs", "same-program", "one-shot-run", "own-devices"]:
    add(f"{C}/threads/compile-{_k}", lambda k=_k: compile_threads(k), timeout=90)


def first_use_race() -> None:
    """8 threads make the process's first vyre_vk.run call at once (default device creation)."""
    import vyre_vk
    p = axpy_u32(64)
    run_threads([lambda t=t: compare(vyre_vk.run(p, {"a": u32s(64, t)}), _want_axpy(u32s(64, t))) for t in range(8)],
                timeout=60)


def trap_next_to_good() -> None:
    """One thread traps (typed) over and over while 7 others must keep getting right answers."""
    dev = _dev()
    bad = dev.compile(map1(64, lambda x: Expr.div(x, Expr.sub(x, x)), I32, I32))
    good = dev.compile(axpy_u32(64))
    seen = []

    def trapper():
        for _ in range(20):
            try:
                bad.run({"a": np.arange(64, dtype=np.int32)})
                raise Wrong("a trapping kernel returned an answer")
            except Exception as e:  # noqa: BLE001
                if not is_typed(e):
                    raise
                seen.append(e)

    def worker(t):
        for r in range(20):
            compare(good.run({"a": u32s(64, t)}), _want_axpy(u32s(64, t)), what=f"thread {t} run {r}")
    run_threads([trapper] + [lambda t=t: worker(t) for t in range(7)], timeout=60)


def reference_threads() -> None:
    from vyre_vk import reference
    p = axpy_u32(64)
    run_threads([lambda t=t: [compare(reference.run(p, {"a": u32s(64, t)}), _want_axpy(u32s(64, t)))
                              for _ in range(10)] for t in range(8)], timeout=60)


add(f"{C}/threads/first-use-race", first_use_race, timeout=60)
add(f"{C}/threads/trap-next-to-good-runs", trap_next_to_good, timeout=60)
add(f"{C}/threads/reference", reference_threads, timeout=60)


# ----------------------------------------------------------------------------- fork after use
def _child(conn, how: str, payload) -> None:
    try:
        import vyre_vk
        a = u32s(64, 7)
        p = axpy_u32(64)
        if how == "run":
            got = vyre_vk.run(p, {"a": a})
        elif how == "inherited-kernel":
            got = payload["kernel"].run({"a": a})
        elif how == "inherited-device-array":
            got = vyre_vk.run(p, {"a": payload["array"]})
            a = payload["host"]
        elif how == "new-device":
            from vyre_vk.runtime import Device
            with Device() as d:
                got = d.compile(p).run({"a": a})
        elif how == "reference":
            from vyre_vk import reference
            got = reference.run(p, {"a": a})
        else:
            raise KeyError(how)
        conn.send(("ok", {k: np.asarray(v) for k, v in got.items()}, a))
    except Exception as e:  # noqa: BLE001
        conn.send(("typed" if is_typed(e) else "raw", f"{type(e).__name__}: {e}",
                   traceback.format_exc(limit=3)))
    finally:
        conn.close()


def fork_after_use(how: str, busy_thread: bool = False) -> None:
    import vyre_vk
    p = axpy_u32(64)
    a = u32s(64, 1)
    dev = _dev()
    kernel = dev.compile(p)
    compare(vyre_vk.run(p, {"a": a}), _want_axpy(a), what="parent before fork")
    payload = {"kernel": kernel}
    if how == "inherited-device-array":
        host = u32s(64, 8)
        payload = {"array": dev.array(host), "host": host}
    stop = threading.Event()
    busy = None
    if busy_thread:  # fork while another thread is inside a dispatch (holding the device lock)
        def spin():
            while not stop.is_set():
                kernel.run({"a": a})
        busy = threading.Thread(target=spin, daemon=True)
        busy.start()
        time.sleep(0.2)
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(send, how, payload))
    child.start()
    send.close()
    stop.set()
    if busy is not None:
        busy.join(10)
    child.join(15)
    if child.is_alive():
        child.kill()
        child.join(5)
        raise Hang("the forked child did not finish in 15 s")
    if child.exitcode and child.exitcode < 0:
        raise Crash(f"the forked child died by signal {-child.exitcode}")
    msg = recv.recv() if recv.poll(1) else ("raw", f"the forked child exited {child.exitcode} without a result", "")
    errors = []
    if msg[0] == "ok":
        try:
            compare(msg[1], _want_axpy(msg[2]), what="forked child")
        except Wrong as e:
            errors.append(e)
    elif msg[0] == "typed" and how != "inherited-device-array" and "spawn" not in msg[1]:
        errors.append(Wrong(f"the child's typed error does not say to use 'spawn': {msg[1][:200]}"))
    elif msg[0] == "raw":
        errors.append(Raw(f"forked child: {msg[1][:300]}"))
    try:  # the parent must be unaffected
        compare(vyre_vk.run(p, {"a": a}), _want_axpy(a), what="parent after fork")
        compare(kernel.run({"a": u32s(64, 2)}), _want_axpy(u32s(64, 2)), what="parent kernel after fork")
    except Exception as e:  # noqa: BLE001
        errors.append(e)
    if msg[0] == "typed":
        errors.append(Typed(f"forked child: {msg[1][:300]}"))
    reraise_worst(errors)


for _h in ["run", "inherited-kernel", "inherited-device-array", "new-device", "reference"]:
    add(f"{C}/fork/{_h}", lambda h=_h: fork_after_use(h), "either" if _h != "reference" else "ok", timeout=40)
add(f"{C}/fork/run-while-a-thread-dispatches", lambda: fork_after_use("run", busy_thread=True), "either", timeout=40)
add(f"{C}/fork/new-device-while-a-thread-dispatches", lambda: fork_after_use("new-device", busy_thread=True),
    "either", timeout=40)


# ----------------------------------------------------------------------------- close under a running thread
def _long_prog():
    """~0.1 s per run on lavapipe: a data-driven loop per invocation."""
    j = Expr.var("j")
    body = guarded(64, [Node.let_bind("acc", Expr.load("a", i_)),
                        Node.loop_for("j", Expr.u32(0), Expr.load("n", Expr.u32(0)), [
                            Node.assign("acc", Expr.bitxor(Expr.mul(Expr.var("acc"), Expr.u32(1664525)), j))]),
                        Node.store("out", i_, Expr.var("acc"))])
    return prog([BufferDecl.read("a", 0, U32).with_count(64), BufferDecl.read("n", 1, U32).with_count(1),
                 BufferDecl.output("out", 2, U32).with_count(64)], body)


def close_while_running(kind: str) -> None:
    from vyre_vk import reference
    from vyre_vk.runtime import Device
    dev = Device()
    long = kind == "long-dispatch"
    p = _long_prog() if long else axpy_u32(64)
    ins = {"a": u32s(64, 3), "n": np.array([200_000], np.uint32)} if long else {"a": u32s(64, 3)}
    want = reference.run(p, ins) if not long else None
    k = dev.compile(p)
    if long:
        want = k.run(ins)  # the GPU's own answer before the close (the reference would take long)
    outcomes = {"ok": 0, "typed": 0}
    ready, closed = threading.Event(), threading.Event()

    def runner():
        after, deadline = 0, time.monotonic() + 30
        for r in range(100_000):
            if r == (2 if kind == "compile" else 10):
                ready.set()  # the close lands while this thread keeps running
            was_closed = closed.is_set()
            try:
                if kind == "device-array":
                    got = k.run({"a": dev.array(ins["a"])})
                elif kind == "compile":
                    got = dev.compile(axpy_u32(64, 3, 1, op=f"hostile::close{r}")).run(ins)
                else:
                    got = k.run(ins)
                compare(got, want, what=f"run {r}")
                outcomes["ok"] += 1
            except Exception as e:  # noqa: BLE001
                if not is_typed(e):
                    raise
                outcomes["typed"] += 1
            after += was_closed
            if after >= 5 or time.monotonic() > deadline:
                return

    def closer():
        ready.wait(20)
        time.sleep(0.02)
        dev.close()
        if kind == "close-from-4-threads":
            run_threads([dev.close] * 4, timeout=10)
        closed.set()

    run_threads([runner, closer], timeout=60, start_together=False)
    if outcomes["typed"]:
        raise Typed(f"{outcomes['ok']} right answers, then typed errors after close")


for _k in ["short-runs", "long-dispatch", "device-array", "compile", "close-from-4-threads"]:
    add(f"{C}/close/{_k}", lambda k=_k: close_while_running(k), "either", timeout=60)


def default_device_closed() -> None:
    """Closing the default device, then vyre_vk.run: a fresh device or a typed error."""
    import vyre_vk
    a = u32s(64, 5)
    compare(vyre_vk.run(axpy_u32(64), {"a": a}), _want_axpy(a))
    default_device().close()
    compare(vyre_vk.run(axpy_u32(64), {"a": a}), _want_axpy(a), what="after closing the default device")


def release_while_running() -> None:
    dev = _dev()
    k = dev.compile(axpy_u32(64))
    a = u32s(64, 6)

    def runner():
        for r in range(200):
            compare(k.run({"a": a}), _want_axpy(a), what=f"run {r}")

    def releaser():
        for _ in range(100):
            k.release()
            time.sleep(0.001)
    run_threads([runner, releaser], timeout=60)


def device_dropped_kernel_kept() -> None:
    import gc
    from vyre_vk.runtime import Device
    k = Device().compile(axpy_u32(64))
    gc.collect()
    a = u32s(64, 7)
    compare(k.run({"a": a}), _want_axpy(a))


add(f"{C}/close/default-device-then-run", default_device_closed, "either")
add(f"{C}/close/release-kernel-while-running", release_while_running, timeout=60)
add(f"{C}/close/device-dropped-kernel-kept", device_dropped_kernel_kept, "either")
