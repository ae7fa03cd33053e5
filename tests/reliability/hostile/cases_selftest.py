"""Cases that misbehave on purpose, to check the runner's judgement (never part of the suite):
each must be reported as the outcome its name says, through the fork server and fresh processes.
"""
from __future__ import annotations

import os
import sys
import time

from .common import add

C = "selftest"


def _typed() -> None:
    from vyre_vk.errors import InputError
    raise InputError("x", "a refusal on purpose", "nothing, this is the runner's self-test")


def _raw() -> None:
    raise ValueError("a raw exception on purpose")


def _printed_traceback() -> str:
    print("Traceback (most recent call last):\n  printed on purpose", file=sys.stderr)
    return "answered, but a traceback was printed"


def _crash() -> None:
    sys.stdout.flush()
    os.abort()


def _hang() -> None:
    time.sleep(3600)


def _exit_nonzero() -> None:
    os._exit(7)


add(f"{C}/ok/answer", lambda: "42")
add(f"{C}/typed/refusal", _typed, expect="typed")
add(f"{C}/wrong/answer-where-typed-expected", lambda: "42", expect="typed")
add(f"{C}/wrong/typed-where-answer-expected", _typed)
add(f"{C}/raw/exception", _raw)
add(f"{C}/raw/printed-traceback", _printed_traceback)
add(f"{C}/crash/abort", _crash)
add(f"{C}/crash/exit-without-result", _exit_nonzero)
add(f"{C}/hang/sleep", _hang, timeout=2.0)
