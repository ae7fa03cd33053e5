"""`vyre-libs::parsing::c_keyword` and `c_keyword_packed_haystack`: keyword promotion over a lexed
C token stream (port of vyre-libs/src/parsing/c/lex/keyword.rs and parsing/c/source_bytes.rs).

Token ``t = workgroup.x * 256 + local.x`` (workgroup [256,1,1]), for ``t < counts[0]``: an
identifier's bytes ``haystack[start .. start+len]`` are hashed with FNV-1a 32 and the first
``keyword_map`` row ``[hash, token]`` with that hash gives its new type (``C_KEYWORDS``, the C11,
GNU, C23 and clang spellings). As in vyre the match is by hash alone: an identifier whose FNV-1a
collides with a keyword's is promoted too. The plain variant reads one byte per u32 (vyre stores
the whole word into the hash, so high bits must be zero); the packed variant reads four bytes per
u32, little-endian.

Example::

    >>> fnv1a32(b"int") == c_keyword_map_words()[2 * [k for k, _ in C_KEYWORDS].index("int")]
    True
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import check_len, non_composable, u, v, with_entry_op_id
from . import tokens as T

OP_ID = "vyre-libs::parsing::c_keyword"
PACKED_OP_ID = "vyre-libs::parsing::c_keyword_packed_haystack"
ULP = None  # u32 results: exact
U32 = DataType.U32
FNV_OFFSET, FNV_PRIME = 0x811C9DC5, 0x01000193

C_KEYWORDS: tuple[tuple[str, int], ...] = (
    ("auto", T.TOK_AUTO), ("break", T.TOK_BREAK), ("case", T.TOK_CASE), ("char", T.TOK_CHAR_KW),
    ("const", T.TOK_CONST), ("__const", T.TOK_CONST), ("__const__", T.TOK_CONST), ("continue", T.TOK_CONTINUE),
    ("default", T.TOK_DEFAULT), ("do", T.TOK_DO), ("double", T.TOK_DOUBLE), ("else", T.TOK_ELSE),
    ("enum", T.TOK_ENUM), ("extern", T.TOK_EXTERN), ("float", T.TOK_FLOAT_KW), ("for", T.TOK_FOR),
    ("goto", T.TOK_GOTO), ("if", T.TOK_IF), ("inline", T.TOK_INLINE), ("int", T.TOK_INT), ("long", T.TOK_LONG),
    ("register", T.TOK_REGISTER), ("restrict", T.TOK_RESTRICT), ("__restrict", T.TOK_RESTRICT),
    ("__restrict__", T.TOK_RESTRICT), ("return", T.TOK_RETURN), ("short", T.TOK_SHORT), ("signed", T.TOK_SIGNED),
    ("__signed", T.TOK_SIGNED), ("__signed__", T.TOK_SIGNED), ("sizeof", T.TOK_SIZEOF), ("static", T.TOK_STATIC),
    ("struct", T.TOK_STRUCT), ("switch", T.TOK_SWITCH), ("typedef", T.TOK_TYPEDEF), ("union", T.TOK_UNION),
    ("unsigned", T.TOK_UNSIGNED), ("void", T.TOK_VOID), ("volatile", T.TOK_VOLATILE),
    ("__volatile", T.TOK_VOLATILE), ("while", T.TOK_WHILE), ("_Alignas", T.TOK_ALIGNAS),
    ("_Alignof", T.TOK_ALIGNOF), ("_Atomic", T.TOK_ATOMIC), ("_Bool", T.TOK_BOOL), ("_Complex", T.TOK_COMPLEX),
    ("_Generic", T.TOK_GENERIC), ("_Imaginary", T.TOK_IMAGINARY), ("_Noreturn", T.TOK_NORETURN),
    ("_Static_assert", T.TOK_STATIC_ASSERT), ("_Thread_local", T.TOK_THREAD_LOCAL),
    ("__thread", T.TOK_THREAD_LOCAL), ("asm", T.TOK_GNU_ASM), ("__asm", T.TOK_GNU_ASM), ("__asm__", T.TOK_GNU_ASM),
    ("__attribute", T.TOK_GNU_ATTRIBUTE), ("__attribute__", T.TOK_GNU_ATTRIBUTE), ("typeof", T.TOK_GNU_TYPEOF),
    ("__typeof", T.TOK_GNU_TYPEOF), ("__typeof__", T.TOK_GNU_TYPEOF), ("typeof_unqual", T.TOK_GNU_TYPEOF_UNQUAL),
    ("__typeof_unqual", T.TOK_GNU_TYPEOF_UNQUAL), ("__typeof_unqual__", T.TOK_GNU_TYPEOF_UNQUAL),
    ("__extension__", T.TOK_GNU_EXTENSION), ("__alignof", T.TOK_ALIGNOF), ("__alignof__", T.TOK_ALIGNOF),
    ("__inline", T.TOK_INLINE), ("__inline__", T.TOK_INLINE), ("__complex__", T.TOK_COMPLEX),
    ("__real__", T.TOK_GNU_REAL), ("__imag__", T.TOK_GNU_IMAG), ("__volatile__", T.TOK_VOLATILE),
    ("__builtin_constant_p", T.TOK_BUILTIN_CONSTANT_P), ("__builtin_choose_expr", T.TOK_BUILTIN_CHOOSE_EXPR),
    ("__builtin_types_compatible_p", T.TOK_BUILTIN_TYPES_COMPATIBLE_P), ("__auto_type", T.TOK_GNU_AUTO_TYPE),
    ("__int128", T.TOK_GNU_INT128), ("__int128_t", T.TOK_GNU_INT128), ("__uint128_t", T.TOK_GNU_INT128),
    ("__builtin_va_list", T.TOK_GNU_BUILTIN_VA_LIST), ("__seg_gs", T.TOK_GNU_ADDRESS_SPACE),
    ("__seg_fs", T.TOK_GNU_ADDRESS_SPACE), ("__label__", T.TOK_GNU_LABEL), ("_BitInt", T.TOK_BITINT_KW),
    ("_Float16", T.TOK_FLOAT16_KW), ("_Float32", T.TOK_FLOAT32_KW), ("_Float32x", T.TOK_FLOAT32_KW),
    ("_Float64", T.TOK_FLOAT64_KW), ("_Float64x", T.TOK_FLOAT64_KW), ("_Float128", T.TOK_FLOAT128_KW),
    ("_Float128x", T.TOK_FLOAT128_KW), ("__float128", T.TOK_GNU_FLOAT128_KW), ("__bf16", T.TOK_GNU_BF16_KW),
    ("__fp16", T.TOK_GNU_FP16_KW), ("_Decimal32", T.TOK_DECIMAL32_KW), ("_Decimal64", T.TOK_DECIMAL64_KW),
    ("_Decimal128", T.TOK_DECIMAL128_KW), ("__forceinline", T.TOK_FORCEINLINE_KW),
    ("_Nonnull", T.TOK_NULLABILITY_KW), ("_Nullable", T.TOK_NULLABILITY_KW),
    ("_Nullable_result", T.TOK_NULLABILITY_KW), ("_Null_unspecified", T.TOK_NULLABILITY_KW),
)


def fnv1a32(data: bytes) -> int:
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFF
    return h


def c_keyword_map_words() -> list[int]:
    """The ``[hash, token]`` rows the op takes as its keyword_map buffer."""
    return [w for k, tok in C_KEYWORDS for w in (fnv1a32(k.encode()), tok)]


def load_source_byte(haystack: str, index: Expr, packed: bool) -> Expr:
    """Byte `index` of the source: its own word, or byte ``index & 3`` of word ``index >> 2``."""
    if not packed:
        return Expr.load(haystack, index)
    return Expr.bitand(Expr.shr(Expr.load(haystack, Expr.shr(index, u(2))),
                                Expr.shl(Expr.bitand(index, u(3)), u(3))), u(0xFF))


def source_haystack_words(source_len: int, packed: bool) -> int:
    return -(-max(source_len, 1) // 4) if packed else max(source_len, 1)


def _c_keyword_impl(op_id: str, packed: bool, tok_types: str, tok_starts: str, tok_lens: str, counts: str,
                    haystack: str, keyword_map: str, max_tokens: int, num_keywords: int,
                    haystack_len: int) -> Program:
    for name, value in (("max_tokens", max_tokens), ("num_keywords", num_keywords), ("haystack_len", haystack_len)):
        check_len(op_id, name, value, 1 if name == "max_tokens" else 0)
    t = v("t")
    promote = [
        Node.let_bind("tok_type", Expr.load(tok_types, t)),
        Node.store(tok_types, t, v("tok_type")),
        Node.if_then(Expr.eq(v("tok_type"), u(T.TOK_IDENTIFIER)), [
            Node.let_bind("start", Expr.load(tok_starts, t)),
            Node.let_bind("len", Expr.load(tok_lens, t)),
            Node.let_bind("hash", u(FNV_OFFSET)),
            Node.loop_for("i", u(0), v("len"), [
                Node.let_bind("byte", load_source_byte(haystack, Expr.add(v("start"), v("i")), packed)),
                Node.assign("hash", Expr.bitxor(v("hash"), v("byte"))),
                Node.assign("hash", Expr.mul(v("hash"), u(FNV_PRIME))),
            ]),
            # the first row whose hash matches wins; done_kw stands in for a break
            Node.let_bind("done_kw", u(0)),
            Node.loop_for("k", u(0), u(num_keywords), [Node.if_then(Expr.eq(v("done_kw"), u(0)), [
                Node.let_bind("kw_hash", Expr.load(keyword_map, Expr.mul(v("k"), u(2)))),
                Node.if_then(Expr.eq(v("kw_hash"), v("hash")), [
                    Node.store(tok_types, t, Expr.load(keyword_map, Expr.add(Expr.mul(v("k"), u(2)), u(1)))),
                    Node.assign("done_kw", u(1)),
                ]),
            ])]),
        ]),
    ]
    body = [
        Node.let_bind("lane", Expr.local_x()),
        Node.let_bind("block", Expr.workgroup_x()),
        Node.let_bind("t", Expr.add(Expr.mul(v("block"), u(256)), v("lane"))),
        Node.if_then(Expr.lt(t, Expr.load(counts, u(0))), promote),
    ]
    ro = BufferAccess.ReadOnly
    program = Program.wrapped(
        [BufferDecl.storage(tok_types, 0, BufferAccess.ReadWrite, U32).with_count(max_tokens),
         BufferDecl.storage(tok_starts, 1, ro, U32).with_count(max_tokens),
         BufferDecl.storage(tok_lens, 2, ro, U32).with_count(max_tokens),
         BufferDecl.storage(counts, 3, ro, U32).with_count(1),
         BufferDecl.storage(haystack, 4, ro, U32).with_count(source_haystack_words(haystack_len, packed)),
         BufferDecl.storage(keyword_map, 5, ro, U32).with_count(num_keywords * 2)],
        (256, 1, 1), [wrap_anonymous(op_id, body)])
    return non_composable(with_entry_op_id(program, op_id))


def c_keyword(tok_types: str, tok_starts: str, tok_lens: str, counts: str, haystack: str, keyword_map: str,
              max_tokens: int, num_keywords: int, haystack_len: int) -> Program:
    """Promote identifier tokens to keyword kinds; the haystack holds one byte per u32."""
    return _c_keyword_impl(OP_ID, False, tok_types, tok_starts, tok_lens, counts, haystack, keyword_map,
                           max_tokens, num_keywords, haystack_len)


def c_keyword_packed_haystack(tok_types: str, tok_starts: str, tok_lens: str, counts: str, haystack: str,
                              keyword_map: str, max_tokens: int, num_keywords: int, haystack_len: int) -> Program:
    """`c_keyword` over a haystack of four little-endian bytes per u32."""
    return _c_keyword_impl(PACKED_OP_ID, True, tok_types, tok_starts, tok_lens, counts, haystack, keyword_map,
                           max_tokens, num_keywords, haystack_len)


def _build(max_tokens: int = 1024, num_keywords: int = len(C_KEYWORDS), haystack_len: int = 4096) -> Program:
    return c_keyword("tok_types", "tok_starts", "tok_lens", "counts", "haystack", "keyword_map", max_tokens,
                     num_keywords, haystack_len)


def _build_packed(max_tokens: int = 1024, num_keywords: int = len(C_KEYWORDS), haystack_len: int = 4096) -> Program:
    return c_keyword_packed_haystack("tok_types", "tok_starts", "tok_lens", "counts", "haystack", "keyword_map",
                                     max_tokens, num_keywords, haystack_len)


def _padded(values: list[int], n: int) -> bytes:
    return pack_u32_slice(values + [0] * (n - len(values)))


# vyre's vector: "int foo return __asm__", four identifier tokens -> int, identifier, return, asm.
_LEXEMES = b"int foo return __asm__"
_TOKENS = [_padded([T.TOK_IDENTIFIER] * 4, 1024), _padded([0, 4, 8, 15], 1024), _padded([3, 3, 6, 7], 1024),
           pack_u32_slice([4])]
_EXPECTED = [_padded([T.TOK_INT, T.TOK_IDENTIFIER, T.TOK_RETURN, T.TOK_GNU_ASM], 1024)]
_MAP = pack_u32_slice(c_keyword_map_words())
ENTRY = register_case(OP_ID, _build, _TOKENS + [_padded(list(_LEXEMES), 4096), _MAP], _EXPECTED,
                      category="parsing", ulp=ULP, bench=dict(max_tokens=1 << 16, haystack_len=1 << 18))
PACKED_ENTRY = register_case(PACKED_OP_ID, _build_packed, _TOKENS + [_LEXEMES + bytes(4096 - len(_LEXEMES)), _MAP],
                             _EXPECTED, category="parsing", ulp=ULP,
                             bench=dict(max_tokens=1 << 16, haystack_len=1 << 18))
