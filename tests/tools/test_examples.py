"""The README's "write your own program" examples run, and check themselves against the
reference and against NumPy written from the math."""
import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs_and_matches(path, capsys):
    runpy.run_path(str(path), run_name="__main__")
    assert "Traceback" not in capsys.readouterr().err


def test_readme_quotes_the_examples():
    readme = (EXAMPLES[0].parents[1] / "README.md").read_text()
    for path in EXAMPLES:
        assert f"examples/{path.name}" in readme
