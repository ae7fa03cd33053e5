"""The doctest examples of vyre_vk/ops/parsing/sema and of its test models run."""
import doctest
import importlib

import pytest

MODULES = ["vyre_vk.ops.parsing.sema.backend", "vyre_vk.ops.parsing.sema.preprocess",
           "vyre_vk.ops.parsing.sema.declarations", "vyre_vk.ops.parsing.sema.scope",
           "vyre_vk.ops.parsing.sema.scope_ir", "vyre_vk.ops.parsing.sema.decl_ir", "vyre_vk.ops.parsing.sema.lower",
           "vyre_vk.ops.parsing.sema.pg_semantic", "vyre_vk.ops.parsing.sema.pg_resolution",
           "vyre_vk.ops.parsing.sema.pg_semantic_tables", "vyre_vk.ops.parsing.sema.vast_kinds",
           "tests.ops.oracles.sema_models"]


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
