"""The C lexer passes on the reference and on Vulkan: hand-checked token streams of C's corner
cases (operators by longest match, literal prefixes, escapes, unterminated literals and comments,
directives with blanks and splices, numbers, the identifier cap), random text with literals
throughout against the cursor-walk model, vyre's 4096-byte vector, keyword promotion, digraphs, the fused
single pass, and the builders' parameter checks."""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ops import get
from vyre_vk.ops.parsing.c import tokens as T
from vyre_vk.ops.parsing.c.digraphs import c11_lex_digraphs
from vyre_vk.ops.parsing.c.keyword import C_KEYWORDS, c_keyword, c_keyword_map_words, c_keyword_packed_haystack
from vyre_vk.ops.parsing.c.lexer import c11_lexer, ident_run_case
from vyre_vk.ops.parsing.c.single_pass import OP_ID as SINGLE_PASS, c11_lex_single_pass
from vyre_vk.ops.registry import OpParamError

from ..oracles.parsing_c import c_source
from ..oracles.parsing_models import c_digraphs, c_lex

U32 = np.uint32
NAMES = ("haystack", "types", "starts", "lens", "counts")


def lex(src: bytes, device, program=None) -> list[tuple[int, int, int]]:
    """Vulkan's rows, equal to the reference's in every buffer and to the model's."""
    n = len(src)
    program = program or c11_lexer(*NAMES, n)
    ins = {"haystack": np.frombuffer(src, np.uint8).astype(U32), "types": np.full(n, 0xAB, U32),
           "starts": np.zeros(n, U32), "lens": np.zeros(n, U32), "counts": np.zeros(1, U32)}
    want = reference.run(program, ins, grid=(1, 1, 1), max_steps=0)
    got = device.compile(program).run(ins, grid=(1, 1, 1))
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
    c = int(got["counts"][0])
    rows = list(zip(got["types"][:c].tolist(), got["starts"][:c].tolist(), got["lens"][:c].tolist()))
    assert got["types"][c:].tolist() == [0xAB] * (n - c)          # rows past the count untouched
    return rows


CASES = [
    (b"a<<=b>>=c...d->e", [(T.TOK_IDENTIFIER, 0, 1), (T.TOK_LSHIFT_EQ, 1, 3), (T.TOK_IDENTIFIER, 4, 1),
                          (T.TOK_RSHIFT_EQ, 5, 3), (T.TOK_IDENTIFIER, 8, 1), (T.TOK_ELLIPSIS, 9, 3),
                          (T.TOK_IDENTIFIER, 12, 1), (T.TOK_ARROW, 13, 2), (T.TOK_IDENTIFIER, 15, 1)]),
    (b"x+++y", [(T.TOK_IDENTIFIER, 0, 1), (T.TOK_INC, 1, 2), (T.TOK_PLUS, 3, 1), (T.TOK_IDENTIFIER, 4, 1)]),
    (b'u8"x" L\'y\' U"z" u"" s', [(T.TOK_STRING, 0, 5), (T.TOK_CHAR, 6, 4), (T.TOK_STRING, 11, 4),
                                  (T.TOK_STRING, 16, 3), (T.TOK_IDENTIFIER, 20, 1)]),
    (b'"a\\x4F\\u00e9\\n" "b\\q" \'\\x\'', [(T.TOK_STRING, 0, 15), (T.TOK_ERR_INVALID_ESCAPE, 16, 5),
                                           (T.TOK_ERR_INVALID_ESCAPE, 22, 4)]),
    (b'"open\nx', [(T.TOK_ERR_UNTERMINATED_STRING, 0, 6), (T.TOK_IDENTIFIER, 6, 1)]),
    (b"y 'o", [(T.TOK_IDENTIFIER, 0, 1), (T.TOK_ERR_UNTERMINATED_CHAR, 2, 2)]),
    (b"a /* c */ b // d\ne /* open", [(T.TOK_IDENTIFIER, 0, 1), (T.TOK_IDENTIFIER, 10, 1), (T.TOK_IDENTIFIER, 17, 1),
                                      (T.TOK_ERR_UNTERMINATED_COMMENT, 19, 7)]),
    (b"  #define X \\\n Y\nZ #q", [(T.TOK_PREPROC, 2, 14), (T.TOK_IDENTIFIER, 17, 1), (T.TOK_HASH, 19, 1),
                                   (T.TOK_IDENTIFIER, 20, 1)]),
    (b"1.5e-3 0x1F .5 1e 0x1e+5 07u", [(T.TOK_FLOAT, 0, 6), (T.TOK_INTEGER, 7, 4), (T.TOK_FLOAT, 12, 2),
                                       (T.TOK_INTEGER, 15, 2), (T.TOK_FLOAT, 18, 6), (T.TOK_INTEGER, 25, 3)]),
    (b"a" * 300 + b" z", [(T.TOK_IDENTIFIER, 0, 257), (T.TOK_IDENTIFIER, 301, 1)]),
]


@pytest.mark.parametrize("src, want", CASES, ids=lambda x: repr(x)[:24] if isinstance(x, bytes) else "")
def test_hand_checked_streams(src, want, vk_device):
    """``0x1e+5`` is one float (vyre's exponent rule sees the hex digit 'e' before '+'), kept."""
    rows = lex(src, vk_device)
    assert rows == want
    assert rows == c_lex(src)


@pytest.mark.parametrize("seed", [0, 1])
def test_random_text_with_literals_throughout_against_the_model(seed, vk_device):
    """Literals anywhere (the c_lexer oracle keeps them to its haystack's tail for the step budget)."""
    src = c_source(np.random.default_rng(100 + seed), 1200)
    rows = lex(src, vk_device)
    assert rows == c_lex(src) and len(rows) > 100
    kinds = {t for t, _, _ in rows}
    assert {T.TOK_PREPROC, T.TOK_FLOAT} <= kinds and kinds & {T.TOK_STRING, T.TOK_CHAR, 240, 241, 243}


def test_vyres_4096_byte_vector_on_vulkan(vk_device):
    ins, want = ident_run_case(4096)
    got = vk_device.compile(get("vyre-libs::parsing::c_lexer").build_with(haystack_len=4096)).run(ins)
    assert [got[k].tobytes() for k in ("out_tok_types", "out_tok_starts", "out_tok_lens", "out_counts")] == want


# (the same vector through the reference took 12-17 s of the suite's budget: the reference reproduces
# vyre's bytes on the registered vectors, and equals Vulkan on random and real-file runs)


# ------------------------------------------------------------------ keywords
def keyword_run(words: list[bytes], device, packed=False, high_bits=0):
    text = b" ".join(words)
    starts = np.cumsum([0] + [len(w) + 1 for w in words[:-1]]).astype(U32)
    n = len(words)
    ins = {"tok_types": np.full(n, T.TOK_IDENTIFIER, U32), "tok_starts": starts,
           "tok_lens": np.asarray([len(w) for w in words], U32), "counts": np.asarray([n], U32),
           "haystack": (np.frombuffer(text + bytes(-len(text) % 4), "<u4").astype(U32) if packed
                        else np.frombuffer(text, np.uint8).astype(U32) | U32(high_bits)),
           "keyword_map": np.asarray(c_keyword_map_words(), U32)}
    build = c_keyword_packed_haystack if packed else c_keyword
    program = build("tok_types", "tok_starts", "tok_lens", "counts", "haystack", "keyword_map", n, len(C_KEYWORDS),
                    len(text))
    want = reference.run(program, ins)
    got = device.compile(program).run(ins)
    np.testing.assert_array_equal(got["tok_types"], want["tok_types"])
    return got["tok_types"].tolist()


@pytest.mark.parametrize("packed", [False, True])
def test_every_keyword_spelling_and_near_misses(packed, vk_device):
    words = [k.encode() for k, _ in C_KEYWORDS] + [b"integer", b"If", b"__asm_", b"x"]
    assert keyword_run(words, vk_device, packed) == [tok for _, tok in C_KEYWORDS] + [T.TOK_IDENTIFIER] * 4


def test_plain_haystack_hashes_whole_words(vk_device):
    """vyre xors each loaded word (not its low byte) into the hash: high bits spoil every match."""
    assert keyword_run([b"int", b"return"], vk_device, high_bits=0x100) == [T.TOK_IDENTIFIER] * 2


# ------------------------------------------------------------------ digraphs and the fused pass
def test_digraph_pairs_quad_and_tail(vk_device):
    LT, GT, CO, PC, X = T.TOK_LT, T.TOK_GT, T.TOK_COLON, T.TOK_PERCENT, T.TOK_IDENTIFIER
    types = np.asarray([PC, CO, PC, CO, X, X, X, X, CO, GT, X, X, X, X, LT, CO, X, X, X, X, PC], U32)
    n = len(types)
    program = c11_lex_digraphs("t", "s", "l", n)
    ins = {"t": types, "s": np.arange(n, dtype=U32), "l": np.ones(n, U32)}
    want = reference.run(program, ins)
    got = vk_device.compile(program).run(ins)
    assert all(np.array_equal(got[k], want[k]) for k in want)
    assert got["t"].tolist() == c_digraphs(types, n)
    assert got["t"].tolist()[:10] == [T.TOK_HASHHASH, *[T.TOK_COMMENT] * 3, X, X, X, X, T.TOK_RBRACKET, T.TOK_COMMENT]
    assert got["s"].tolist() == list(range(n))


def test_single_pass_lexes_and_rewrites_digraphs(vk_device):
    src = b"a <: i :> b <% c %> %: d %:%: e"
    rows = lex(src, vk_device, c11_lex_single_pass(*NAMES, len(src), len(src)))
    lexed = c_lex(src)
    assert [r[1:] for r in rows] == [r[1:] for r in lexed]
    assert [r[0] for r in rows] == c_digraphs([r[0] for r in lexed], len(lexed))
    assert T.TOK_HASHHASH in [r[0] for r in rows] and T.TOK_LBRACKET in [r[0] for r in rows]


def test_single_pass_shape():
    p = get(SINGLE_PASS).build()
    outer = p.entry[0]
    assert (outer.generator, outer.source_region) == (SINGLE_PASS, SINGLE_PASS)
    assert [type(b).__name__ for b in outer.body] == ["Block", "Block"]
    assert [b.body[0].generator for b in outer.body] == ["vyre-libs::parsing::c_lexer",
                                                         "vyre-libs::parsing::c11_lex_digraphs"]


@pytest.mark.parametrize("call", [lambda: c11_lexer(*NAMES, -1), lambda: c11_lex_digraphs("t", "s", "l", 2 ** 32),
                                  lambda: c_keyword("a", "b", "c", "d", "e", "f", 0, 4, 4)])
def test_builders_reject_bad_sizes(call):
    with pytest.raises(OpParamError, match="Fix:"):
        call()
