"""The doctest examples of the parsing op modules and of their test models run."""
import doctest
import importlib

import pytest

MODULES = ["vyre_vk.ops.parsing.common", "vyre_vk.ops.parsing.delimiter", "vyre_vk.ops.parsing.c.tokens",
           "vyre_vk.ops.parsing.c.helpers", "vyre_vk.ops.parsing.c.keyword", "vyre_vk.ops.parsing.c.lexer",
           "vyre_vk.ops.parsing.c.digraphs", "vyre_vk.ops.parsing.c.single_pass", "vyre_vk.ops.parsing.python.lex",
           "tests.ops.oracles.parsing_models", "tests.ops.parsing.c11_regex", "tests.ops.parsing.py_tokenize_map"]


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
