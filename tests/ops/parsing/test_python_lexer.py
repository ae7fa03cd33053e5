"""python312_lexer on the reference and on Vulkan: hand-checked sparse rows for keywords (soft ones
included), strings with escapes, numbers, comments and vyre's per-line '#' rule, unclosed strings,
the count accumulating onto its initial value, and the builder's parameter check."""
import numpy as np
import pytest

from vyre_vk.ops.parsing.python.lex import python312_lexer
from vyre_vk.ops.registry import OpParamError

from ..harness import run_equal
from ..oracles.parsing_models import py_lex

U32 = np.uint32
ID, NUM, STR, NL, COM = 1, 2, 3, 4, 5
LP, RP, LB, RB, LC, RC, COLON, COMMA, DOT, EQ, AT, STAR = range(10, 22)


def lex(src: bytes, device, counts0: int = 0) -> tuple[dict, int]:
    n = len(src)
    ins = {"h": np.frombuffer(src, np.uint8).astype(U32), "t": np.full(n, 0xEE, U32), "s": np.full(n, 0xEE, U32),
           "l": np.full(n, 0xEE, U32), "c": np.asarray([counts0], U32)}
    _, out = run_equal(python312_lexer("h", "t", "s", "l", "c", n), device, ins)
    rows = {p: (int(out["t"][p]), int(out["l"][p])) for p in range(n) if out["t"][p] != 0xEE}
    assert all(int(out["s"][p]) == p for p in rows)
    assert rows == py_lex(src)
    return rows, int(out["c"][0])


CASES = [
    (b"async def f(): await g\n", {0: (101, 5), 6: (100, 3), 10: (ID, 1), 11: (LP, 1), 12: (RP, 1), 13: (COLON, 1),
                                   15: (107, 5), 21: (ID, 1), 22: (NL, 1)}),
    (b"match x:\n case [a, *b]: pass", {0: (108, 5), 6: (ID, 1), 7: (COLON, 1), 8: (NL, 1), 10: (109, 4), 15: (LB, 1),
                                        16: (ID, 1), 17: (COMMA, 1), 19: (STAR, 1), 20: (ID, 1), 21: (RB, 1),
                                        22: (COLON, 1), 24: (ID, 4)}),
    # inside 'a\'b': 'a' an identifier, the escaped quote a string "'b'"; the closing quote opens an
    # unclosed string to the end; 1_0.5 stops at 'e', then '.' and '5' of ".5" again
    (b"x = 'a\\'b' + 1_0.5e3", {0: (ID, 1), 2: (EQ, 1), 4: (STR, 6), 5: (ID, 1), 7: (STR, 3), 8: (ID, 1),
                                9: (STR, 11), 13: (NUM, 5), 16: (DOT, 1), 17: (NUM, 1)}),
    (b"@d.e # c 'q' def\ny", {0: (AT, 1), 1: (ID, 1), 2: (DOT, 1), 3: (ID, 1), 5: (COM, 11), 16: (NL, 1), 17: (ID, 1)}),
    (b"s = '#' ; t", {0: (ID, 1), 2: (EQ, 1), 4: (STR, 3), 5: (COM, 6)}),
    (b'{"k": v2}', {0: (LC, 1), 1: (STR, 3), 2: (ID, 1), 3: (STR, 6), 4: (COLON, 1), 6: (ID, 2), 8: (RC, 1)}),
]


@pytest.mark.parametrize("src, want", CASES, ids=lambda x: repr(x)[:20] if isinstance(x, bytes) else "")
def test_hand_checked_rows(src, want, vk_device):
    """Bytes inside strings are classified like code (vyre's sparse design: the '\\'' and 'b'
    inside 'a\\'b'); a '#' inside a string starts a COMMENT and silences the rest of its line
    ('; t'); an unclosed quote runs to the end of the haystack."""
    rows, count = lex(src, vk_device)
    assert rows == want
    assert count == len(want)


def test_count_adds_to_its_initial_value(vk_device):
    assert lex(b"a b c", vk_device, counts0=1000)[1] == 1003


def test_builder_rejects_an_empty_haystack():
    with pytest.raises(OpParamError, match="Fix:"):
        python312_lexer("h", "t", "s", "l", "c", 0)
