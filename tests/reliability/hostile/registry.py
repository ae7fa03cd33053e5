"""Imports the case modules (each registers its cases into common.CASES) and returns the cases."""
from __future__ import annotations

import importlib
from typing import Optional

from .common import CASES, Case

MODULES = {"programs": ("cases_programs", "cases_rules"), "inputs": ("cases_inputs",), "json": ("cases_json",),
           "cache": ("cases_cache",), "concurrency": ("cases_concurrency",), "resources": ("cases_resources",),
           "cli": ("cases_cli",), "selftest": ("cases_selftest",)}
OPT_IN = {"selftest"}  # the runner's self-test: cases that fail on purpose, loaded only when named


def load(category: Optional[str] = None) -> dict[str, Case]:
    """Every case, or (for a worker) only the modules of one category: fewer imports per process."""
    for cat, mods in MODULES.items():
        if (category is None and cat not in OPT_IN) or cat == category:
            for m in mods:
                importlib.import_module(f"{__package__}.{m}")
    return {k: c for k, c in CASES.items() if category is not None or c.category not in OPT_IN}
