"""The GLSL names of a program's buffers and variables, in a namespace no generated name can enter:

  buffer `n`    -> ``b_<stem(n)>`` (block member / shared array), ``vk_<kind>_<stem(n)>`` for
                   what the lowering derives from it (block type, accessors, vector temporaries)
  variable `n`  -> ``v_<stem(n)>`` (let and loop variables)

Generated names are ``vk_*``, ``vyre_*`` (helpers.py), ``gl_*`` builtins, GLSL keywords and
the helpers' own function-local names; none starts with ``b_`` or ``v_`` (tests/lower/test_names.py
scans the lowering output for that), so a user name can never meet one, whatever it spells.

The stem is an injective spelling of any string as ``[A-Za-z0-9]+`` words joined by single
``_`` (so it never holds the ``__`` GLSL reserves, nor ends in ``_``):
  * a maximal run of ASCII letters/digits is a *literal* word, copied as is;
  * an ``_`` with a literal word on each side is the separator between those two words;
  * every other character is an *escape* word: ``Z`` for any other ``_``, ``Z<hex code point>``
    for the rest; a literal run starting with ``Z`` has its leading ``Z``s escaped (``Z5a``) so
    literal words never start with ``Z``. The empty name (refused by the validator) is ``ZZ``.
Decoding is therefore unambiguous: a word starting with ``Z`` is an escape, any other is
literal; ``_`` between two literal words decodes to ``_``, every other ``_`` to nothing. A
left inverse exists, so the stem is injective: ``a_b`` -> ``a_b``, ``a__b`` -> ``a_Z_Z_b``,
``a-b`` -> ``a_Z2d_b``. A stem longer than ``_MAX_STEM`` (glslang refuses names over 1023
characters, and derived names add to it) is cut at ``_MAX_STEM`` characters and gets a
final word ``ZZ<k>``, k its rank among the program's long names of that namespace: no other
stem has a word starting with ``ZZ`` (escapes are ``Z`` + hex) but the empty name's ``ZZ``
(no k), and k differs per name.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..ir import node as N
from ..ir.program import Program
from vyre_vk.ir.paths import labelled_bodies

_MAX_STEM = 64
_LONG_MARK = "ZZ"
_WORD = re.compile(r"[A-Za-z0-9]+|.", re.DOTALL)
_ALNUM = re.compile(r"[A-Za-z0-9]+")


def _escape(ch: str) -> str:
    return "Z" if ch == "_" else f"Z{ord(ch):x}"  # "_" is the commonest escape: keep it short


def _run_words(run: str) -> list[str]:
    """Words of an alphanumeric run: its leading ``Z``s escaped, then the rest as one literal word."""
    rest = run.lstrip("Z")
    return [_escape("Z")] * (len(run) - len(rest)) + ([rest] if rest else [])


def stem(name: str) -> str:
    """Injective spelling of `name` as ``[A-Za-z0-9]+`` words joined by single ``_`` (module notes).

    >>> stem("x"), stem("a_b"), stem("a__b"), stem("__init__"), stem("a_Zeta"), stem("a::b")
    ('x', 'a_b', 'a_Z_Z_b', 'Z_Z_init_Z_Z', 'a_Z_Z5a_eta', 'a_Z3a_Z3a_b')
    """
    tokens = _WORD.findall(name)
    alnum = [bool(_ALNUM.fullmatch(t)) for t in tokens]
    words: list[str] = []
    for i, tok in enumerate(tokens):
        if alnum[i]:
            words.extend(_run_words(tok))
        elif (tok == "_" and 0 < i < len(tokens) - 1 and alnum[i - 1] and alnum[i + 1]
              and tokens[i - 1].lstrip("Z") and not tokens[i + 1].startswith("Z")):
            continue  # a separator: implied between two literal words
        else:
            words.append(_escape(tok))
    return "_".join(words) or _LONG_MARK


def _stems(names: list[str]) -> dict[str, str]:
    """`stem` of each name, long ones cut and numbered (module notes); deterministic."""
    out = {n: stem(n) for n in set(names)}
    long_names = sorted(n for n, s in out.items() if len(s) > _MAX_STEM)
    for k, n in enumerate(long_names):
        out[n] = f"{out[n][:_MAX_STEM].rstrip('_')}_{_LONG_MARK}{k}"
    return out


@dataclass(frozen=True)
class GlslNames:
    """GLSL spellings of one program's names. `buffers`: IR buffer name -> its stem (the block
    member is ``b_<stem>``, derived names ``vk_<kind>_<stem>``); `variables`: IR variable name
    -> GLSL variable name (``v_<stem>``)."""

    buffers: dict[str, str]
    variables: dict[str, str]

    def buf(self, name: str) -> str:
        return "b_" + self.buffers[name]


def glsl_names(program: Program) -> GlslNames:
    """The GLSL names of every buffer, let and loop variable of `program` (module notes).

    >>> from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
    >>> p = Program.wrapped([BufferDecl.output("i", 0, DataType.U32).with_count(1)], (1, 1, 1),
    ...     [wrap_anonymous("t", [Node.let_bind("i", Expr.u32(1)), Node.store("i", Expr.u32(0), Expr.var("i"))])])
    >>> names = glsl_names(p)
    >>> names.buf("i"), names.variables["i"]
    ('b_i', 'v_i')
    """
    variables: list[str] = []
    stack = list(program.entry)
    while stack:
        n = stack.pop()
        if isinstance(n, N.Let):
            variables.append(n.name)
        elif isinstance(n, N.Loop):
            variables.append(n.var)
        for _, body in labelled_bodies(n):
            stack.extend(body)
    return GlslNames(buffers=_stems([b.name for b in program.buffers]),
                     variables={n: "v_" + s for n, s in _stems(variables).items()})


def comment(text: object) -> str:
    """`text` safe inside a one-line ``//`` comment: printable ASCII, no backslash (a line splice)."""
    return re.sub(r"[^\x20-\x7E]|\\", "?", str(text))
