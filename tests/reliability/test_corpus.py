"""Replay every minimised mismatch tools/fuzz saved in tests/reliability/corpus/."""
from pathlib import Path

import pytest

from vyre_vk.testing import fuzz

CORPUS = Path(__file__).parent / "corpus"
ENTRIES = fuzz.corpus_entries(CORPUS)


@pytest.mark.parametrize("entry", ENTRIES, ids=[p.stem for p in ENTRIES])
def test_corpus_entry_matches_reference(vk_device, entry):
    program, inputs, info = fuzz.load_case(entry)
    outcome = fuzz.check_case(program, inputs, vk_device)
    assert not outcome.failed, f"{outcome.detail}\n(found as: {info.get('detail', '?')})"


def test_corpus_round_trip(tmp_path):
    """save_case/load_case keep program and inputs exactly (so entries replay what was found)."""
    import numpy as np
    from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous

    p = Program.wrapped([BufferDecl.read("a", 0, DataType.F32).with_count(2),
                         BufferDecl.output("out", 1, DataType.F32).with_count(2)], (2, 1, 1),
                        [wrap_anonymous("t", [Node.store("out", Expr.gid_x(), Expr.load("a", Expr.gid_x()))])])
    a = np.array([np.nan, -0.0], np.float32)
    path = fuzz.save_case(tmp_path, p, {"a": a}, {"detail": "x"})
    q, inputs, info = fuzz.load_case(path)
    assert q == p and inputs["a"].tobytes() == a.tobytes() and info == {"detail": "x"}
