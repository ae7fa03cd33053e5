"""Issue 13's hostile suite: adversarial programs, inputs, JSON files, SPIR-V cache states,
concurrency patterns, resource loads and CLI invocations. Each case runs in its own worker
process (6 GiB address-space cap, timeout, own SPIR-V cache folder) and is classified
ok / typed / crash / hang / wrong / raw / leak (see worker.py and runner.py).

    python -m tests.reliability.hostile [--only PATTERN] [-j N] [--list]   # the table
    python -m tests.reliability.hostile.worker CASE_ID                     # one case, in-process
    pytest tests/reliability/test_hostile.py                               # all cases, zero failures

Case modules (registry.MODULES): cases_programs, cases_rules, cases_inputs, cases_json,
cases_cache, cases_concurrency, cases_resources, cases_cli; shared checks in common.py,
program builders in progs.py.
"""
