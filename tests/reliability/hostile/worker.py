"""Run ONE hostile case in this process and print its outcome as the last stdout line:

    python -m tests.reliability.hostile.worker CASE_ID
    @@hostile@@ {"id": ..., "outcome": "ok|typed|wrong|raw|leak|hang|crash", "detail": ...}

The case's expectation is applied here (an answer where only a typed error is right is
`wrong`, and so is a typed error where the answer was expected). Crashes, hangs and
printed tracebacks are decided by the runner, which sees the exit status and stderr.
"""
from __future__ import annotations

import faulthandler
import json
import os
import resource
import signal
import sys
import tempfile

MARK = "@@hostile@@"
ADDRESS_SPACE_LIMIT = 6 << 30  # a runaway case (reading /dev/zero, a 16 GiB buffer) fails here, not the machine


def expectation(expect: str, outcome: str, detail: str) -> tuple[str, str]:
    if expect == "typed" and outcome == "ok":
        return "wrong", "expected a typed error, got an answer" + (f" ({detail})" if detail else "")
    if expect == "ok" and outcome == "typed":
        return "wrong", f"expected the answer, got a typed error: {detail}"
    return outcome, detail


def outcome_of(fn, *args) -> tuple[str, str]:
    """Call ``fn``: ("ok", what it returned if a str) or the classified exception."""
    from .common import classify
    try:
        ret = fn(*args)
        return "ok", (" ".join(ret.split())[:300] if isinstance(ret, str) else "")
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - every escape is an outcome (SystemExit included)
        return classify(e)


def run_case(case_id: str) -> dict:
    from .registry import load
    case = load(case_id.split("/", 1)[0])[case_id]
    outcome, detail = expectation(case.expect, *outcome_of(case.fn))
    return {"id": case_id, "outcome": outcome, "detail": detail}


def main(argv: list[str]) -> int:
    """``CASE_ID``, or ``--call MODULE:FUNCTION ARG...`` (a phase of a case in a fresh process)."""
    if len(argv) != 1 and not (len(argv) >= 2 and argv[0] == "--call"):
        print("usage: python -m tests.reliability.hostile.worker CASE_ID", file=sys.stderr)
        return 2
    if not os.environ.get("VYRE_VK_CACHE_DIR"):  # never touch the user's cache
        os.environ["VYRE_VK_CACHE_DIR"] = tempfile.mkdtemp(prefix="vyre-hostile-cache-")
    try:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))
    except (ValueError, OSError):
        pass
    faulthandler.enable()  # a crash leaves its Python stack in stderr for the report
    # On a timeout the runner sends SIGUSR1 before the kill: the stacks of a hang (a signal
    # interrupts the main thread, so they are read while it stands still).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    if argv[0] == "--call":
        import importlib
        mod, _, name = argv[1].partition(":")
        fn = getattr(importlib.import_module(f"{__package__}.{mod}"), name)
        outcome, detail = outcome_of(fn, *argv[2:])
        result = {"id": argv[1], "outcome": outcome, "detail": detail}
    else:
        result = run_case(argv[0])
    sys.stdout.flush()
    print(MARK, json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
