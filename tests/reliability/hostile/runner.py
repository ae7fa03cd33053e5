"""Run hostile cases, each in its own worker process with a timeout, and tabulate the outcomes.

Workers are forked from a fork server (zygote.py) that imported vyre_vk once; ``fork_server=False``
(``--fresh``) starts a new interpreter per case instead, the slow way with the same outcomes.

Every worker compiles through the user's SPIR-V cache (``VYRE_VK_CACHE_DIR`` as this process
sees it: a case's programs compile once per machine, not once per run), while every case that
tampers with a cache, caps it or measures it makes its own folder under this run's
(``VYRE_VK_CACHE_DIR_ROOT``, common.case_cache_dir), so the user's is never poisoned; and each
worker has a process group of its own (a hang is killed with everything it
forked, after a SIGUSR1 that makes the worker's faulthandler print where it is stuck).
"""
from __future__ import annotations

import fnmatch
import json
import os
import queue
import re
import select as io_select
import resource
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from .common import FAILURES, OUTCOMES, REPO, Case
from .worker import MARK

TRACEBACK = "Traceback (most recent call last)"
# Slow families first, so two workers finish together instead of waiting on a long tail.
_PRIORITY = {"resources": 0, "concurrency": 1, "cli": 2, "cache": 3, "json": 4}


@dataclass
class Result:
    case: Case
    outcome: str
    detail: str
    seconds: float
    rc: Optional[int]
    stderr: str

    @property
    def failed(self) -> bool:
        return self.outcome in FAILURES

    def stderr_tail(self, lines: int = 3, width: int = 220) -> str:
        keep = [ln.strip()[:width] for ln in self.stderr.splitlines() if ln.strip()]
        return " | ".join(keep[-lines:])


def select(cases: dict[str, Case], only: Optional[Iterable[str]] = None) -> list[Case]:
    """Cases whose id matches any pattern (glob, else substring)."""
    pats = [p for p in (only or []) if p]
    chosen = [c for c in cases.values()
              if not pats or any(fnmatch.fnmatchcase(c.id, p) or p in c.id for p in pats)]
    return sorted(chosen, key=lambda c: (_PRIORITY.get(c.category, 9), -c.timeout, c.id))


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def _hang_frame(stderr: str, depth: int = 4) -> str:
    """The innermost frames of the stuck thread, from the worker's faulthandler dump."""
    block = re.split(r"(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):\n", stderr)
    for part in block[1:]:
        frames = re.findall(r'File "([^"]+)", line (\d+) in (\S+)', part)
        if frames and "threading.py" not in frames[0][0]:
            return " (stuck in " + " < ".join(f"{f.rsplit('/', 1)[-1]}:{n} {fn}" for f, n, fn in frames[:depth]) + ")"
    return ""


def judge(case: Case, rc: Optional[int], stdout: str, stderr: str, timed_out: bool) -> tuple[str, str]:
    if timed_out:
        return "hang", f"no result within {case.timeout:.0f} s{_hang_frame(stderr)}"
    if rc is not None and rc < 0:
        return "crash", f"worker died by {_signal_name(rc)}"
    lines = [ln for ln in stdout.splitlines() if ln.startswith(MARK)]
    if not lines:
        if TRACEBACK in stderr:
            return "raw", "worker failed before reporting: " + stderr.strip().splitlines()[-1][:200]
        return "crash", f"worker exited with {rc} without a result"
    res = json.loads(lines[-1][len(MARK):])
    outcome, detail = res["outcome"], res["detail"]
    if outcome in ("ok", "typed") and TRACEBACK in stderr:
        last = [ln for ln in stderr.splitlines() if ln.strip()][-1].strip()
        return "raw", f"a traceback was printed ({last[:200]}); case said {outcome}"
    if rc:
        return "crash", f"worker exited with {rc} after reporting {outcome}"
    return outcome, detail


def _env(cache_root: Path) -> dict:
    from vyre_vk.spirv_cache import cache_dir

    # The user's vyre-vk settings (budgets, caps) would change outcomes; the device choice and
    # the compile cache's location stay (its entries are checked against their digests on read).
    env = {k: v for k, v in os.environ.items() if not k.startswith("VYRE_VK_") or k == "VYRE_VK_DEVICE"}
    env.update(VYRE_VK_CACHE_DIR=str(cache_dir()), VYRE_VK_CACHE_DIR_ROOT=str(cache_root),
               HOSTILE_TMP=str(cache_root.parent / "scratch"), PYTHONUNBUFFERED="1")
    return env


def _stop(pid: int) -> None:
    """A hung worker: SIGUSR1 (its faulthandler prints where it is stuck), then kill its whole group."""
    try:
        os.kill(pid, signal.SIGUSR1)
        time.sleep(1.0)
    except ProcessLookupError:
        pass
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_one(case: Case, cache_root: Path, python: str = sys.executable) -> Result:
    """``case`` in a fresh interpreter (what the fork server's children stand in for)."""
    t0 = time.monotonic()
    proc = subprocess.Popen([python, "-m", "tests.reliability.hostile.worker", case.id], cwd=str(REPO),
                            env=_env(cache_root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace", start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=case.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _stop(proc.pid)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a grandchild outside the group holds the pipes
            proc.kill()
            out, err = "", ""
    outcome, detail = judge(case, proc.returncode, out or "", err or "", timed_out)
    return Result(case, outcome, detail, time.monotonic() - t0, proc.returncode, err or "")


class Zygote:
    """One fork server (zygote.py): a case per fork, imports paid once per run instead of per case."""

    def __init__(self, cache_root: Path, python: str = sys.executable):
        self.cache_root, self.python, self.n = cache_root, python, 0
        self.outdir = cache_root.parent / "worker-output"
        self.outdir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([python, "-m", "tests.reliability.hostile.zygote"], cwd=str(REPO),
                                     env=_env(cache_root), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     bufsize=0)
        self.buf = b""

    def _line(self, deadline: Optional[float]) -> Optional[str]:
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not io_select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise EOFError("the fork server exited")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def run(self, case: Case) -> Result:
        t0 = time.monotonic()
        self.n += 1
        prefix = str(self.outdir / f"{os.getpid()}-{id(self)}-{self.n}")
        self.proc.stdin.write(f"{case.id}\t{prefix}\n".encode())
        pid = int(self._line(time.monotonic() + 30).split()[1])
        status = self._line(time.monotonic() + case.timeout)
        timed_out = status is None
        if timed_out:
            _stop(pid)
            status = self._line(time.monotonic() + 10)
        rc = int(status.split()[1])
        out, err = (Path(prefix + s).read_text(errors="replace") for s in (".out", ".err"))
        for s in (".out", ".err"):
            Path(prefix + s).unlink()
        outcome, detail = judge(case, rc, out, err, timed_out)
        return Result(case, outcome, detail, time.monotonic() - t0, rc, err)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


def preflight(python: str = sys.executable) -> Optional[str]:
    """None if vyre_vk imports in a fresh process, else the error (every case would just repeat it)."""
    p = subprocess.run([python, "-c", "import vyre_vk.runtime, vyre_vk.reference, vyre_vk.cli"], cwd=str(REPO),
                       capture_output=True, text=True, timeout=120)
    return None if p.returncode == 0 else (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]


def run_all(cases: list[Case], jobs: int = 2, workdir: Optional[Path] = None, progress=None,
            fork_server: bool = True) -> list[Result]:
    """Every case, ``jobs`` at a time: forked from a zygote each (default), or each a new interpreter."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="vyre-hostile-"))
    cache_root = workdir / "spirv-cache"
    cache_root.mkdir(parents=True, exist_ok=True)
    zygotes: queue.Queue = queue.Queue()
    for _ in range(max(1, jobs) if fork_server else 0):
        zygotes.put(Zygote(cache_root))

    def one(case: Case) -> Result:
        if not fork_server:
            return run_one(case, cache_root)
        z = zygotes.get()
        try:
            return z.run(case)
        except (EOFError, AttributeError, ValueError, OSError) as e:  # the server died: say so, start another
            z.proc.kill()
            z = Zygote(cache_root)
            return Result(case, "crash", f"fork server failed: {e}", 0.0, None, "")
        finally:
            zygotes.put(z)

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = [pool.submit(one, c) for c in cases]
            results = []
            for f in futures:
                r = f.result()
                results.append(r)
                if progress is not None:
                    progress(r)
    finally:
        while not zygotes.empty():
            zygotes.get().close()
    return results


def children_cpu() -> float:
    """CPU seconds (user + system) of every finished worker and its children so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def table(results: list[Result], wall: Optional[float] = None, cpu: Optional[float] = None) -> str:
    cats = sorted({r.case.category for r in results}, key=lambda c: (_PRIORITY.get(c, 9) if c != "programs" else -1, c))
    width = max([len(c) for c in cats] + [len("category")])
    head = f"{'category':{width}}  " + "  ".join(f"{o:>5}" for o in OUTCOMES) + "  total"
    lines = [head, "-" * len(head)]
    for cat in cats + ["TOTAL"]:
        rs = [r for r in results if cat == "TOTAL" or r.case.category == cat]
        counts = [sum(r.outcome == o for r in rs) for o in OUTCOMES]
        lines.append(f"{cat:{width}}  " + "  ".join(f"{n:>5}" for n in counts) + f"  {len(rs):>5}")
    failed = [r for r in results if r.failed]
    took = f" in {wall:.0f} s" if wall is not None else ""
    took += f" ({cpu:.0f} CPU-s in the workers)" if cpu is not None else ""
    lines.append(f"\n{len(results)} cases{took}: {len(results) - len(failed)} ok/typed, {len(failed)} failed")
    for r in sorted(failed, key=lambda r: (r.outcome, r.case.id)):
        tail = r.stderr_tail()
        lines.append(f"  {r.outcome.upper():5} {r.case.id} ({r.seconds:.1f}s): {r.detail}"
                     + (f"\n        stderr: {tail}" if tail else ""))
    return "\n".join(lines)


def listing(results: list[Result]) -> str:
    """Every case: outcome, seconds, id, detail (what a typed error said, what an ok case printed)."""
    return "\n".join(f"{r.outcome}\t{r.seconds:.1f}\t{r.case.id}\t{r.detail}" for r in sorted(results, key=lambda r: r.case.id))


def families(cases: Iterable[Case]) -> str:
    counts: dict[str, int] = {}
    for c in cases:
        counts[c.family] = counts.get(c.family, 0) + 1
    return "\n".join(f"{n:5}  {f}" for f, n in sorted(counts.items())) + f"\n{sum(counts.values()):5}  total"
