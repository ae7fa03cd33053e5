"""A fork server for hostile workers: import vyre_vk once, then fork one child per case.

Starting a fresh interpreter and importing numpy, kp and vyre_vk costs ~0.4 CPU-s; a case
itself usually costs less. The zygote pays the imports once and forks a child per case: the
child is as fresh as a new process for everything a case can touch (no device is ever opened
here, the environment is the runner's, no cache has been read in it), runs
``worker.main([CASE_ID])`` with stdout/stderr in files, and exits.

Protocol on stdin/stdout, one line each way per step::

    -> CASE_ID<TAB>OUT_PREFIX      (child writes OUT_PREFIX.out / OUT_PREFIX.err)
    <- pid PID                     (its own session: the runner may killpg(PID) on a hang)
    <- exit RC                     (negative: killed by that signal)
"""
from __future__ import annotations

import os
import sys


def _preload() -> None:
    import numpy  # noqa: F401
    import vyre_vk.cli  # noqa: F401
    import vyre_vk.ops  # noqa: F401
    import vyre_vk.reference  # noqa: F401
    import vyre_vk.runtime  # noqa: F401
    from vyre_vk.runtime.device import loop_probe_spirv
    from vyre_vk.runtime.probes import division_spirv, float64_spirv

    # the probes' shaders (lowering + cached SPIR-V, no Vulkan; they key the probe cache): ~50 ms a child otherwise
    division_spirv(), float64_spirv(), loop_probe_spirv()
    from . import worker  # noqa: F401
    from .registry import OPT_IN, load
    load()  # every case module, so a child imports nothing
    for category in OPT_IN:
        load(category)


def _child(case_id: str, prefix: str) -> int:
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    for fd, suffix in ((1, ".out"), (2, ".err")):
        f = os.open(prefix + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(f, fd)
        os.close(f)
    sys.stdin = open(0, closefd=False)
    from .worker import main
    try:
        return int(main([case_id]) or 0)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 - the runner judges the printed traceback
        import traceback
        traceback.print_exc()
        return 1


def serve() -> int:
    _preload()
    out = os.fdopen(os.dup(1), "w", buffering=1)
    for line in sys.stdin:
        case_id, _, prefix = line.rstrip("\n").partition("\t")
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            rc = 1
            try:
                rc = _child(case_id, prefix)
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(rc)
        out.write(f"pid {pid}\n")
        _, status = os.waitpid(pid, 0)
        out.write(f"exit {os.waitstatus_to_exitcode(status)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(serve())
