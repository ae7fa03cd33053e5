"""The name tables the VAST classifier matches identifier hashes against (ports of the data in
vyre-libs/src/parsing/c/parse/gnu_builtin_catalog.rs and vast/mod.rs): the GNU builtin catalog,
the attribute spellings, the legacy builtin names and the ``typeof`` / ``__auto_type`` spellings.

Tables hold the spellings; the classifier compares each node's symbol-hash word (VAST word 9,
FNV-1a 32 of the identifier) with their hashes. Catalog words without a leading ``__`` are
``__builtin_`` names with the prefix left off. Order is vyre's: the catalog groups kinds in order
of first appearance (the classifier's select chain tests them in that order).

Example::

    >>> BUILTIN_CATALOG[0], len(BUILTIN_CATALOG), len(ATTRIBUTE_HASHES)
    ((3222396935, ['__builtin_constant_p']), 25, 102)
    >>> hex(ATTRIBUTE_HASHES[0][0]), hex(ATTRIBUTE_HASHES[0][1])
    ('0xfcdd0ccc', '0xc011a772')
"""
from __future__ import annotations

from ...sema import vast_kinds as K
from ..keyword import fnv1a32

# vast_kinds.rs: the catalog's intrinsic kinds (module-private in vyre, so not in sema/vast_kinds.py)
(C_AST_KIND_BUILTIN_VA_INTRIN_EXPR, C_AST_KIND_BUILTIN_BIT_INTRIN_EXPR, C_AST_KIND_BUILTIN_BSWAP_INTRIN_EXPR,
 C_AST_KIND_BUILTIN_ALLOCA_INTRIN_EXPR) = 0xC011E014, 0xC011E015, 0xC011E016, 0xC011E017
(C_AST_KIND_BUILTIN_FP_PREDICATE_INTRIN_EXPR, C_AST_KIND_BUILTIN_FP_CONST_INTRIN_EXPR,
 C_AST_KIND_BUILTIN_TRAP_INTRIN_EXPR, C_AST_KIND_BUILTIN_ASSUME_INTRIN_EXPR,
 C_AST_KIND_BUILTIN_SOURCE_LOC_INTRIN_EXPR, C_AST_KIND_BUILTIN_FRAME_INTRIN_EXPR,
 C_AST_KIND_BUILTIN_ATOMIC_INTRIN_EXPR, C_AST_KIND_BUILTIN_SYNC_INTRIN_EXPR) = range(0xC011E019, 0xC011E021)
C_AST_KIND_BUILTIN_ELEMENTWISE_INTRIN_EXPR = 0xC011E022

_B = "C_AST_KIND_BUILTIN_"
_KIND = {name[len(_B):]: value for name, value in {**vars(K), **globals()}.items() if name.startswith(_B)}


def _names(words: str) -> list[str]:
    return [w if w.startswith("__") else "__builtin_" + w for w in words.split()]


# (kind suffix after C_AST_KIND_BUILTIN_, spellings) in vyre's catalog order
_CATALOG_ROWS: tuple[tuple[str, str], ...] = (
    ("CONSTANT_P_EXPR", "constant_p"),
    ("CHOOSE_EXPR", "choose_expr"),
    ("TYPES_COMPATIBLE_P_EXPR", "types_compatible_p"),
    ("EXPECT_EXPR", "expect expect_with_probability"),
    ("OFFSETOF_EXPR", "offsetof"),
    ("OBJECT_SIZE_EXPR", "object_size dynamic_object_size"),
    ("PREFETCH_EXPR", "prefetch"),
    ("UNREACHABLE_STMT", "unreachable"),
    ("OVERFLOW_EXPR", """
        add_overflow sub_overflow mul_overflow add_overflow_p sub_overflow_p mul_overflow_p
        sadd_overflow saddl_overflow saddll_overflow uadd_overflow uaddl_overflow uaddll_overflow
        ssub_overflow ssubl_overflow ssubll_overflow usub_overflow usubl_overflow usubll_overflow
        smul_overflow smull_overflow smulll_overflow umul_overflow umull_overflow umulll_overflow addcb
        addcs addc addcl addcll subcb subcs subc subcl subcll"""),
    ("CLASSIFY_TYPE_EXPR", "classify_type"),
    ("BSWAP_INTRIN_EXPR", "bswap16 bswap32 bswap64"),
    ("BIT_INTRIN_EXPR", """
        ffs ffsl ffsll clz clzl clzll ctz ctzl ctzll popcount popcountl popcountll parity parityl
        parityll popcountg clzg ctzg clrsb clrsbl clrsbll bitreverse8 bitreverse16 bitreverse32
        bitreverse64 rotateleft8 rotateleft16 rotateleft32 rotateleft64 rotateright8 rotateright16
        rotateright32 rotateright64"""),
    ("FP_PREDICATE_INTRIN_EXPR", """
        isnan isinf isfinite isnormal signbit fpclassify isgreater isgreaterequal isless islessequal
        islessgreater isunordered isfpclass"""),
    ("FP_CONST_INTRIN_EXPR", "huge_val huge_valf huge_vall inf inff infl nan nanf nanl nans nansf nansl"),
    ("LIBC_INTRIN_EXPR", """
        fabs fabsf fabsl copysign copysignf copysignl sqrt sqrtf sqrtl cbrt cbrtf cbrtl pow powf powl
        exp expf expl exp2 exp2f exp2l expm1 expm1f expm1l log logf logl log2 log2f log2l log10 log10f
        log10l log1p log1pf log1pl sin sinf sinl cos cosf cosl tan tanf tanl asin asinf asinl acos acosf
        acosl atan atanf atanl atan2 atan2f atan2l sinh sinhf sinhl cosh coshf coshl tanh tanhf tanhl
        asinh asinhf asinhl acosh acoshf acoshl atanh atanhf atanhl floor floorf floorl ceil ceilf ceill
        trunc truncf truncl round roundf roundl lround lroundf lroundl llround llroundf llroundl rint
        rintf rintl lrint lrintf lrintl llrint llrintf llrintl nearbyint nearbyintf nearbyintl fmod
        fmodf fmodl remainder remainderf remainderl remquo remquof remquol fmin fminf fminl fmax fmaxf
        fmaxl fdim fdimf fdiml fma fmaf fmal frexp frexpf frexpl ldexp ldexpf ldexpl modf modff modfl
        ilogb ilogbf ilogbl logb logbf logbl memcpy __builtin___memcpy_chk memcpy_inline memmove
        __builtin___memmove_chk memset __builtin___memset_chk memset_inline memcmp memchr char_memchr
        strlen strnlen strcmp strncmp strcpy __builtin___strcpy_chk strncpy __builtin___strncpy_chk
        strcat __builtin___strcat_chk strncat __builtin___strncat_chk strchr strrchr strstr
        __builtin___clear_cache clear_padding"""),
    ("TRAP_INTRIN_EXPR", "trap debugtrap verbose_trap"),
    ("ALLOCA_INTRIN_EXPR", "alloca alloca_with_align alloca_with_align_and_max"),
    ("ASSUME_INTRIN_EXPR", """
        assume_aligned assume unpredictable assoc_barrier speculation_safe_value is_aligned align_up
        align_down dump_struct"""),
    ("FRAME_INTRIN_EXPR",
     "unwind_init stack_address frame_address return_address extract_return_addr frob_return_addr"),
    ("VA_INTRIN_EXPR", "va_start va_arg va_end va_copy ms_va_start c23_va_start next_arg"),
    ("SOURCE_LOC_INTRIN_EXPR", "FILE FILE_NAME FUNCTION FUNCSIG LINE COLUMN source_location"),
    ("SYNC_INTRIN_EXPR", """
        __sync_fetch_and_add __sync_fetch_and_sub __sync_fetch_and_or __sync_fetch_and_and
        __sync_fetch_and_xor __sync_fetch_and_nand __sync_add_and_fetch __sync_sub_and_fetch
        __sync_or_and_fetch __sync_and_and_fetch __sync_xor_and_fetch __sync_nand_and_fetch
        __sync_bool_compare_and_swap __sync_val_compare_and_swap __sync_lock_test_and_set
        __sync_lock_release __sync_synchronize"""),
    ("ATOMIC_INTRIN_EXPR", """
        __atomic_load __atomic_load_n __atomic_store __atomic_store_n __atomic_exchange
        __atomic_exchange_n __atomic_compare_exchange __atomic_compare_exchange_n __atomic_fetch_add
        __atomic_fetch_sub __atomic_fetch_or __atomic_fetch_and __atomic_fetch_xor __atomic_fetch_nand
        __atomic_add_fetch __atomic_sub_fetch __atomic_or_fetch __atomic_and_fetch __atomic_xor_fetch
        __atomic_nand_fetch __atomic_test_and_set __atomic_clear __atomic_thread_fence
        __atomic_signal_fence"""),
    ("BPF_CORE_INTRIN_EXPR", """
        preserve_access_index preserve_field_info preserve_type_info preserve_enum_value btf_type_id
        preserve_static_offset"""),
    ("ELEMENTWISE_INTRIN_EXPR", """
        vectorelements elementwise_abs elementwise_fma elementwise_popcount elementwise_bitreverse
        elementwise_add_sat elementwise_sub_sat elementwise_max elementwise_min elementwise_clzg
        elementwise_ctzg"""),
)
#: (kind, spellings) per catalog kind, in order of first appearance.
BUILTIN_CATALOG: list[tuple[int, list[str]]] = [(_KIND[k], _names(w)) for k, w in _CATALOG_ROWS]

# helpers/expr.rs c_builtin_identifier_expression_kind: the fallback behind the catalog
LEGACY_BUILTINS: tuple[tuple[str, int], ...] = (
    ("__builtin_expect", K.C_AST_KIND_BUILTIN_EXPECT_EXPR), ("__builtin_offsetof", K.C_AST_KIND_BUILTIN_OFFSETOF_EXPR),
    ("__builtin_object_size", K.C_AST_KIND_BUILTIN_OBJECT_SIZE_EXPR),
    ("__builtin_prefetch", K.C_AST_KIND_BUILTIN_PREFETCH_EXPR),
    ("__builtin_unreachable", K.C_AST_KIND_BUILTIN_UNREACHABLE_STMT),
    ("__builtin_add_overflow", K.C_AST_KIND_BUILTIN_OVERFLOW_EXPR),
    ("__builtin_sub_overflow", K.C_AST_KIND_BUILTIN_OVERFLOW_EXPR),
    ("__builtin_mul_overflow", K.C_AST_KIND_BUILTIN_OVERFLOW_EXPR),
    ("__builtin_classify_type", K.C_AST_KIND_BUILTIN_CLASSIFY_TYPE_EXPR))

# vast/mod.rs C_ATTRIBUTE_KIND_HASHES: each name as `name` and `__name__`, but noreturn and
# deprecated (bare only); target also as target_clones, interrupt also as signal
_ATTRIBUTE_ROWS: tuple[tuple[int, str], ...] = tuple(
    (getattr(K, "C_AST_KIND_ATTRIBUTE_" + kind.upper()), names) for kind, names in (
    ("section", "section"), ("weak", "weak"), ("alias", "alias"), ("aligned", "aligned"), ("used", "used"),
    ("unused", "unused"), ("naked", "naked"), ("visibility", "visibility"), ("packed", "packed"),
    ("cleanup", "cleanup"), ("constructor", "constructor"), ("destructor", "destructor"), ("mode", "mode"),
    ("noinline", "noinline"), ("always_inline", "always_inline"), ("cold", "cold"), ("hot", "hot"),
    ("pure", "pure"), ("const", "const"), ("format", "format"), ("fallthrough", "fallthrough"),
    ("noreturn", "=noreturn"), ("deprecated", "=deprecated"), ("nonnull", "nonnull"),
    ("returns_nonnull", "returns_nonnull"), ("malloc", "malloc"), ("warn_unused_result", "warn_unused_result"),
    ("nothrow", "nothrow"), ("assume_aligned", "assume_aligned"), ("alloc_size", "alloc_size"),
    ("alloc_align", "alloc_align"), ("weakref", "weakref"), ("sentinel", "sentinel"), ("leaf", "leaf"),
    ("returns_twice", "returns_twice"), ("no_sanitize", "no_sanitize"), ("flatten", "flatten"),
    ("target", "target target_clones"), ("interrupt", "interrupt signal"), ("vector_size", "vector_size"),
    ("ifunc", "ifunc"), ("tls_model", "tls_model"), ("gnu_inline", "gnu_inline"), ("dllimport", "dllimport"),
    ("dllexport", "dllexport"), ("selectany", "selectany"), ("ms_abi", "ms_abi"), ("sysv_abi", "sysv_abi"),
    ("no_instrument_function", "no_instrument_function"), ("format_arg", "format_arg")))


def _spellings(names: str) -> list[str]:
    return [n[1:] if n.startswith("=") else s for n in names.split()
            for s in ((n[1:],) if n.startswith("=") else (n, f"__{n}__"))]


#: (FNV-1a of a spelling, attribute kind) in vyre's table order.
ATTRIBUTE_HASHES: list[tuple[int, int]] = [(fnv1a32(s.encode()), kind) for kind, names in _ATTRIBUTE_ROWS
                                           for s in _spellings(names)]

# vast/mod.rs C_GNU_TYPEOF_HASHES and C_GNU_AUTO_TYPE_HASH
TYPEOF_SPELLINGS = ("typeof", "__typeof__", "typeof_unqual", "__typeof_unqual__")
TYPEOF_HASHES: tuple[int, ...] = tuple(fnv1a32(s.encode()) for s in TYPEOF_SPELLINGS)
AUTO_TYPE_HASH = fnv1a32(b"__auto_type")
