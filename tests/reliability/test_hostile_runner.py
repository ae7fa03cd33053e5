"""The hostile runner judges what a worker did, the same through the fork server (default) and
through a fresh interpreter per case: cases that misbehave on purpose (cases_selftest.py) must be
reported exactly as their ids say -- an abort is a crash, a sleep past the timeout a hang (killed,
with the stuck frame), a printed traceback raw, a typed error where an answer was due wrong."""
import pytest

from tests.reliability.hostile.registry import load
from tests.reliability.hostile.runner import run_all


@pytest.mark.parametrize("fork_server", [True, False], ids=["fork-server", "fresh"])
def test_runner_reports_each_misbehaviour_as_itself(tmp_path, fork_server):
    cases = sorted(load("selftest").values(), key=lambda c: c.id)
    cases = [c for c in cases if c.category == "selftest"]
    assert len(cases) == 9
    results = run_all(cases, jobs=2, workdir=tmp_path, fork_server=fork_server)
    got = {r.case.id: r.outcome for r in results}
    want = {c.id: c.id.split("/")[1] for c in cases}
    assert got == want, [(r.case.id, r.outcome, r.detail) for r in results if r.outcome != want[r.case.id]]
    hang = next(r for r in results if r.outcome == "hang")
    assert "no result within 2 s" in hang.detail and "_hang" in hang.detail  # the stuck frame, from faulthandler
    assert hang.seconds < 15
