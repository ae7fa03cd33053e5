"""The case registry, outcome exceptions and the checks every hostile case shares.

A case is a function run in its own worker process. It returns normally when the
behaviour was right (the answer was checked inside), raises a ``vyre_vk`` error for a
typed refusal, or raises one of the outcome exceptions below for a failure it detected
itself (a wrong answer, a leak, a forked child that crashed or hung, a CLI traceback).
"""
from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

REPO = Path(__file__).resolve().parents[3]
OUTCOMES = ("ok", "typed", "crash", "hang", "wrong", "raw", "leak")
FAILURES = ("crash", "hang", "wrong", "raw", "leak")
MiB = 1 << 20


# ----------------------------------------------------------------------------- outcomes
class Outcome(Exception):
    """Raised by a case to report an outcome it observed itself (not a vyre_vk error)."""
    outcome = "raw"


def _outcome(name: str) -> type:
    return type(name.capitalize(), (Outcome,), {"outcome": name, "__module__": __name__})


# A case raises one of these for what it saw itself: a wrong result, a leak, a child that hung...
Wrong, Leak, Hang, Crash, Raw = (_outcome(n) for n in ("wrong", "leak", "hang", "crash", "raw"))


class Typed(Outcome):
    """A typed refusal seen outside this process (a CLI exit code, a forked child)."""
    outcome = "typed"


# ----------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class Case:
    id: str                      # "<category>/<family>/<name>"
    fn: Callable[[], Any]
    expect: str = "ok"           # ok | typed | either
    timeout: float = 20.0
    note: str = ""

    @property
    def category(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def family(self) -> str:
        return "/".join(self.id.split("/")[:2])


CASES: dict[str, Case] = {}


def add(case_id: str, fn: Callable[[], Any], expect: str = "ok", timeout: float = 20.0, note: str = "") -> None:
    assert expect in ("ok", "typed", "either"), expect
    assert case_id not in CASES, f"duplicate case id {case_id}"
    CASES[case_id] = Case(case_id, fn, expect, timeout, note)


def slug(s: Any) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", str(s)).strip("_") or "x"


# ----------------------------------------------------------------------------- classification
def is_typed(e: BaseException) -> bool:
    """A vyre_vk error whose message carries a non-empty ``Fix:`` hint."""
    from vyre_vk.errors import VyreError
    if not isinstance(e, VyreError):
        return False
    _, sep, tail = str(e).rpartition("Fix:")
    return bool(sep and tail.strip() and str(getattr(e, "fix", "") or "").strip())


def describe(e: BaseException, limit: int = 240) -> str:
    """`Type: message` on one line, plus where it was raised for a non-vyre error."""
    msg = " ".join(str(e).split())
    out = f"{type(e).__name__}: {msg}"
    if len(out) > limit:
        out = out[: limit - 3] + "..."
    if not isinstance(e, Outcome) and not is_typed(e):
        tb = e.__traceback__
        frames = []
        while tb is not None:
            frames.append(tb.tb_frame.f_code.co_filename.rsplit("/", 1)[-1] + f":{tb.tb_lineno}")
            tb = tb.tb_next
        if frames:
            out += f" [at {frames[-1]}]"
    return out


def classify(e: BaseException) -> tuple[str, str]:
    """(outcome, one-line detail) of an exception that escaped a case."""
    if isinstance(e, Outcome):
        return e.outcome, " ".join(str(e).split())[:400]
    if is_typed(e):
        return "typed", describe(e)
    from vyre_vk.errors import VyreError
    if isinstance(e, VyreError):
        return "raw", "VyreError without a Fix hint: " + describe(e)
    return "raw", describe(e)


def reraise_worst(errors: list[BaseException]) -> None:
    """Raise the most serious of several exceptions (threads, phases): failures before typed."""
    if not errors:
        return
    rank = {"crash": 0, "hang": 1, "wrong": 2, "raw": 3, "leak": 4, "typed": 5}
    raise min(errors, key=lambda e: rank.get(classify(e)[0], 3))


# ----------------------------------------------------------------------------- comparing
def _f32_bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.float32).view(np.uint32)


def ulp_gap(want: np.ndarray, got: np.ndarray) -> np.ndarray:
    """ULP distance on the sign-ordered line; a NaN or inf matches only its own bits."""
    w, g = _f32_bits(want).astype(np.int64), _f32_bits(got).astype(np.int64)
    ow = np.where(w & 0x80000000, -(w & 0x7FFFFFFF) - 1, w)
    og = np.where(g & 0x80000000, -(g & 0x7FFFFFFF) - 1, g)
    special = ~np.isfinite(np.asarray(want, np.float32)) | ~np.isfinite(np.asarray(got, np.float32))
    return np.where(special & (w != g), np.int64(2**40), np.abs(ow - og))


def compare(got: Any, want: dict, ulp: int = 0, what: str = "result") -> None:
    """Ints exactly, f32 bitwise (or within ``ulp`` for finite values); raises Wrong."""
    if not isinstance(got, dict):
        raise Wrong(f"{what}: expected a dict of arrays, got {type(got).__name__}")
    if set(got) != set(want):
        raise Wrong(f"{what}: buffers {sorted(got)} != reference {sorted(want)}")
    for k, w in want.items():
        g = got[k]
        if not isinstance(g, np.ndarray):
            raise Wrong(f"{what} `{k}`: a {type(g).__name__}, not an ndarray")
        if g.dtype != w.dtype or g.shape != w.shape:
            raise Wrong(f"{what} `{k}`: {g.dtype}{list(g.shape)} vs reference {w.dtype}{list(w.shape)}")
        if w.dtype == np.float32:
            gap = ulp_gap(w, g)
            bad = np.nonzero(gap > ulp)[0]
        else:
            bad = np.nonzero(np.asarray(g != w).reshape(-1))[0]
        if bad.size:
            i = int(bad[0])
            fmt = (lambda v: f"{float(v)!r}/0x{int(np.float32(v).view(np.uint32)):08x}") \
                if w.dtype == np.float32 else (lambda v: repr(v.item()))
            raise Wrong(f"{what} `{k}`: {bad.size}/{w.size} elements differ"
                        f"{f' by more than {ulp} ULP' if ulp else ''}; first [{i}] got {fmt(g[i])} want {fmt(w[i])}")


def snapshot(inputs: Any) -> Any:
    """A deep copy of host inputs (DeviceArrays are kept as they are)."""
    from vyre_vk.runtime.buffer import DeviceArray
    if isinstance(inputs, dict):
        return {k: snapshot(v) for k, v in inputs.items()}
    if isinstance(inputs, (list, tuple)):
        return type(inputs)(snapshot(v) for v in inputs)
    if isinstance(inputs, DeviceArray):
        return inputs
    try:
        return copy.deepcopy(inputs)
    except Exception:  # noqa: BLE001 - an uncopyable hostile value is passed as is
        return inputs


def check_unmodified(before: Any, after: Any) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for k in before:
            a, b = before[k], after.get(k)
            if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape \
                    and a.dtype == b.dtype and a.tobytes() != b.tobytes():
                raise Wrong(f"the run modified the caller's input array `{k}`")


def host_value(v: Any) -> Any:
    """What the reference gets for a runtime input (a DeviceArray's contents)."""
    from vyre_vk.runtime.buffer import DeviceArray
    return v.numpy() if isinstance(v, DeviceArray) else v


def default_device():
    from vyre_vk.runtime import default_device as _default
    return _default()


def parity(program, inputs: Any = None, *, ulp: int = 0, grid=None, device=None, optimize=True,
           ref_inputs: Any = None, gpu_when_ref_fails: bool = True, runs: int = 1) -> dict:
    """Reference first, then Vulkan; the GPU's answer must be the reference's.

    A typed refusal by the GPU is passed up (the case's expectation decides). If the
    reference raises a typed error the GPU must refuse too (a trap is a trap), unless
    ``gpu_when_ref_fails`` is False (the reference budget: the GPU would just spin).
    """
    from vyre_vk import reference
    from vyre_vk.errors import VyreError
    if ref_inputs is None:
        ref_inputs = ({k: host_value(v) for k, v in inputs.items()} if isinstance(inputs, dict)
                      else inputs if inputs is not None else {})
    ref_inputs = snapshot(ref_inputs)
    ref_err: Optional[BaseException] = None
    try:
        want = reference.run(program, ref_inputs, grid=grid)
    except VyreError as e:
        ref_err, want = e, None
    if ref_err is not None and not gpu_when_ref_fails:
        raise ref_err
    before = snapshot(inputs)
    got = None
    for r in range(runs):
        if device is None:
            import vyre_vk
            got = vyre_vk.run(program, inputs, grid=grid) if optimize is True else \
                default_device().compile(program, optimize=optimize).run(inputs, grid=grid)
        else:
            got = device.compile(program, optimize=optimize).run(inputs, grid=grid)
        if ref_err is not None:
            raise Wrong(f"Vulkan returned an answer where the reference raises {describe(ref_err, 160)}")
        compare(got, want, ulp, what=f"run {r + 1}" if runs > 1 else "result")
        check_unmodified(before, inputs)
    return got


def expect_refusal(fn: Callable[[], Any], what: str) -> None:
    """``fn`` must raise (the case then classifies the error); returning is wrong."""
    fn()
    raise Wrong(f"{what}: returned normally where an error was expected")


# ----------------------------------------------------------------------------- processes
def rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def vyre_cli() -> list[str]:
    exe = Path(sys.executable).parent / "vyre-vk"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "vyre_vk.cli"]


def run_cli(args: list[str], env: Optional[dict] = None, timeout: float = 15.0, cwd: Optional[str] = None,
            expect_rc: tuple = (2, 3)) -> subprocess.CompletedProcess:
    """Run ``vyre-vk ARGS``: exit 0 returns; 2/3 with a Fix hint and no traceback raises Typed."""
    full_env = dict(os.environ, **(env or {}))
    try:
        p = subprocess.run(vyre_cli() + list(args), env=full_env, cwd=cwd or str(REPO), capture_output=True,
                           text=True, timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired:
        raise Hang(f"vyre-vk {' '.join(args)} ran over {timeout:.0f} s") from None
    err = p.stderr.strip()
    tail = " | ".join((err or p.stdout.strip()).splitlines()[-2:])[:300]  # doctor reports on stdout
    if p.returncode < 0:
        raise Crash(f"vyre-vk {' '.join(args)} died by signal {-p.returncode}: {tail}")
    if "Traceback (most recent call last)" in p.stderr:
        last = err.splitlines()[-1] if err else ""
        raise Raw(f"exit {p.returncode} with a traceback: {last[:300]}")
    if p.returncode == 0:
        return p
    if p.returncode in expect_rc and "Fix:" in p.stderr:
        raise Typed(f"exit {p.returncode}: {tail}")
    raise Raw(f"exit {p.returncode} ({'no Fix: hint' if 'Fix:' not in p.stderr else 'not 2/3'}): {tail}")


def fresh_process(target: str, *args: str, timeout: float = 20.0) -> str:
    """Run ``MODULE:FUNCTION ARGS`` of this package in a new worker process (same environment):
    returns what it returned on success, raises its outcome otherwise (typed as Typed)."""
    import json
    cmd = [sys.executable, "-m", f"{__package__}.worker", "--call", target, *args]
    try:
        p = subprocess.run(cmd, cwd=str(REPO), capture_output=True, text=True, timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired:
        raise Hang(f"{target} {' '.join(args)} in a fresh process ran over {timeout:.0f} s") from None
    if p.returncode < 0:
        raise Crash(f"{target} in a fresh process died by signal {-p.returncode}")
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("@@hostile@@")]
    if not lines or "Traceback (most recent call last)" in p.stderr:
        tail = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        raise Raw(f"{target} in a fresh process: {tail[:300]}")
    res = json.loads(lines[-1].split(" ", 1)[1])
    kind = {"ok": None, "typed": Typed, "wrong": Wrong, "raw": Raw, "leak": Leak, "hang": Hang,
            "crash": Crash}[res["outcome"]]
    if kind is not None:
        raise kind(f"in a fresh process: {res['detail']}")
    return res["detail"]


def run_threads(fns: list[Callable[[], Any]], timeout: float = 15.0, start_together: bool = True) -> list:
    """Run each fn in its own thread; returns results, raises the worst error or Hang."""
    results: list = [None] * len(fns)
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(fns)) if start_together else None

    def wrap(k: int, fn: Callable[[], Any]) -> None:
        try:
            if barrier is not None:
                barrier.wait(timeout)
            results[k] = fn()
        except BaseException as e:  # noqa: BLE001 - classified by the caller
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(k, f), daemon=True) for k, f in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    alive = sum(t.is_alive() for t in threads)
    if alive:
        raise Hang(f"{alive} of {len(fns)} threads still running after {timeout:.0f} s")
    reraise_worst(errors)
    return results


def case_tmp(prefix: str) -> Path:
    """A scratch folder under the run's folder ($HOSTILE_TMP), so a run leaves nothing in /tmp."""
    import tempfile
    root = os.environ.get("HOSTILE_TMP")
    if root:
        os.makedirs(root, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=root or None))


def case_cache_dir(name: str) -> Path:
    """A fresh SPIR-V cache folder for this case (under the run's $VYRE_VK_CACHE_DIR), made current."""
    root = Path(os.environ.get("VYRE_VK_CACHE_DIR_ROOT") or os.environ["VYRE_VK_CACHE_DIR"])
    os.environ.setdefault("VYRE_VK_CACHE_DIR_ROOT", str(root))
    d = root / "cases" / slug(name)
    d.mkdir(parents=True, exist_ok=True)
    os.environ["VYRE_VK_CACHE_DIR"] = str(d)
    return d
