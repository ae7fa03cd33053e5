"""Test tiers. ``-m quick`` (documented in README) is every test but the slow ones below: random and
property tests at full budget, the hostile and resource suites, every-op sweeps through the
CLI/emitter, benchmark smoke runs. ``bash tools/test.sh`` runs both tiers on 2 workers."""
import os

import pytest

# Every optimiser pass's output is validated in the tests, so a pass bug names its pass.
os.environ.setdefault("VYRE_VK_CHECK_PASSES", "1")

# Whole files whose tests are sweeps or budgets, and single tests that take seconds each.
SLOW_FILES = (
    "tests/reliability/",
    "tests/tools/test_bench_smoke.py",
    "tests/tools/test_bench_ops.py",
    "tests/ops/test_random.py",
    "tests/ops/nn/test_attention.py",
    "tests/ops/nn/test_quest.py",
    "tests/ops/nn/test_top_k.py",
    "tests/cli/test_aot.py",
)
SLOW_TESTS = (
    "test_fifty_random", "test_hypothesis_", "test_run_prints_a_pass_table", "test_shaders_",
    "test_random_", "test_main_job_runs", "_random", "test_every_walk", "test_from_json_mutations",
    "test_second_process", "test_spin_wait_window", "test_no_vulkan_driver", "test_doctor_",
    "test_model_is_the_reference", "test_environment_errors_exit_3", "test_run_unknown_op",
    "test_function_level_imports", "test_no_raw_builtin_raises", "test_no_import_cycle",
    "test_graph_builder_sees", "test_bool_semiring_matmul_both_programs",
)


# Files that each keep one worker busy for tens of seconds (a single test runs 2 minutes), longest
# first. `--dist loadfile` hands files out in collection order, so these go first: last, they left
# one worker running alone at the end (clean-clone suite 372-443 s with them last).
LONG_FILES = (
    "tests/reliability/test_hostile.py",
    "tests/reliability/test_resources.py",
    "tests/ops/parsing/test_real_files.py",
    "tests/reliability/test_validation_layer.py",
    "tests/ops/parsing/test_c11_classify.py",
)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: part of the full suite only (see tests/conftest.py)")
    config.addinivalue_line("markers", "quick: the quick tier, `-m quick` (every test not marked slow)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        name = item.name  # the test's name with its parameters (a node id's last "::" may be inside an op id)
        slow = item.get_closest_marker("slow") or path.startswith(SLOW_FILES) or any(s in name for s in SLOW_TESTS)
        item.add_marker(pytest.mark.slow if slow else pytest.mark.quick)
    rank = {f: k for k, f in enumerate(LONG_FILES)}
    items.sort(key=lambda it: rank.get(it.nodeid.split("::", 1)[0], len(LONG_FILES)))  # stable: order kept within
