"""The examples in the optimiser's docstrings run and say what they show (every module of vyre_vk.opt)."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import vyre_vk.opt as opt

MODULES = sorted(m.name for m in pkgutil.iter_modules(opt.__path__))


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name):
    mod = importlib.import_module(f"vyre_vk.opt.{name}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
