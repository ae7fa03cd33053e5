"""The twelve bitset ops of vyre-libs/src/security/catalog.rs (built in security/mod.rs,
integer_overflow_arith.rs, sink_intersection.rs, taint_kill.rs; vectors from
vyre-libs/rules/security_predicates.toml).

A NodeSet over ``node_count`` nodes is ``bitset_words(node_count)`` u32 words (bit ``v % 32`` of
word ``v / 32``); every kernel runs one invocation per word, workgroup [256,1,1].

- Intersections, ``out = lhs & rhs`` (``tag_program`` over vyre-primitives ``bitset::and``):
  auth_check_dominates, buffer_size_check, lock_dominates, path_canonical, sanitizer_dominates,
  sql_param_bound, xss_escape.
- Subtractions, ``out = lhs & ~rhs`` (over ``bitset::and_not``): format_string_check,
  unchecked_return (``tag_program``), taint_kill (vyre re-parents the primitive's Region under
  taint_kill without an outer Region of its own, so its top Region is the primitive's).
  Buffers of these ten: ``lhs``, ``rhs`` ro (bindings 0, 1), ``out`` plain ReadWrite (2): vyre's
  vectors pass its initial contents (zero).
- integer_overflow_arith: ``intermediate = arith & reach`` (plain ReadWrite, 3),
  ``out = intermediate & ~guards`` (output, 4).
- sink_intersection: ``intersect = query & sink`` (plain ReadWrite, 2) and
  ``out_scalar[0] += popcount(intersect)`` by atomic add (output of one word, 3).

Example::

    >>> p = xss_escape(64, "esc", "render", "out")
    >>> [(b.name, b.binding, b.count) for b in p.buffers], p.workgroup_size
    ([('esc', 0, 2), ('render', 1, 2), ('out', 2, 2)], (256, 1, 1))
    >>> taint_kill(4, "fin", "kill", "fout").entry[0].generator
    'vyre-primitives::bitset::and_not'
"""
from __future__ import annotations

from typing import Callable

from ...ir import DataType, Expr, Node, Program, wrap_anonymous
from ..builder import out_decl, ro_decl, rw_decl
from ..registry import register_case
from ..wire import pack_u32_slice
from .region import (BITSET_AND_NOT_OP_ID, BITSET_AND_OP_ID, BITSET_WORKGROUP, and_not, bitset_word_program,
                     bitset_words, check_buffer_names, check_node_count, reparent_program_children, tag_program)

P = "vyre-libs::security::"
AUTH_CHECK_DOMINATES_OP_ID = P + "auth_check_dominates"
BUFFER_SIZE_CHECK_OP_ID = P + "buffer_size_check"
LOCK_DOMINATES_OP_ID = P + "lock_dominates"
PATH_CANONICAL_OP_ID = P + "path_canonical"
SANITIZER_DOMINATES_OP_ID = P + "sanitizer_dominates"
SQL_PARAM_BOUND_OP_ID = P + "sql_param_bound"
XSS_ESCAPE_OP_ID = P + "xss_escape"
FORMAT_STRING_CHECK_OP_ID = P + "format_string_check"
TAINT_KILL_OP_ID = P + "taint_kill"
UNCHECKED_RETURN_OP_ID = P + "unchecked_return"
INTEGER_OVERFLOW_ARITH_OP_ID = P + "integer_overflow_arith"
SINK_INTERSECTION_OP_ID = P + "sink_intersection"
CATEGORY = "security"
# u32 bitsets: byte-exact (no f32 window).
ULP = None
# Realistic size: a whole-program graph of 2^28 nodes (8 Mi words per NodeSet).
BENCH = dict(node_count=1 << 28)


def _intersect(op_id: str, lhs: str, rhs: str, out: str, node_count: int) -> Program:
    check_node_count(op_id, node_count)
    check_buffer_names(op_id, lhs, rhs, out)
    return tag_program(op_id, bitset_word_program(BITSET_AND_OP_ID, lhs, rhs, out, bitset_words(node_count),
                                                  Expr.bitand))


def _subtract(op_id: str, lhs: str, rhs: str, out: str, node_count: int) -> Program:
    check_node_count(op_id, node_count)
    check_buffer_names(op_id, lhs, rhs, out)
    return tag_program(op_id, bitset_word_program(BITSET_AND_NOT_OP_ID, lhs, rhs, out, bitset_words(node_count),
                                                  and_not))


def auth_check_dominates(node_count: int, auth_doms: str, sensitive_op_set: str, out: str) -> Program:
    """Sensitive operations dominated by an authorization check: ``auth_doms & sensitive_op_set``."""
    return _intersect(AUTH_CHECK_DOMINATES_OP_ID, auth_doms, sensitive_op_set, out, node_count)


def buffer_size_check(node_count: int, size_compared: str, user_input_set: str, out: str) -> Program:
    """Buffer sizes compared to user input: ``size_compared & user_input_set``."""
    return _intersect(BUFFER_SIZE_CHECK_OP_ID, size_compared, user_input_set, out, node_count)


def lock_dominates(node_count: int, lock_doms: str, shared_access_set: str, out: str) -> Program:
    """Shared-state accesses dominated by a lock acquisition: ``lock_doms & shared_access_set``."""
    return _intersect(LOCK_DOMINATES_OP_ID, lock_doms, shared_access_set, out, node_count)


def path_canonical(node_count: int, canonicalizer_dominates: str, fs_op_set: str, out: str) -> Program:
    """Filesystem operations on canonicalized paths: ``canonicalizer_dominates & fs_op_set``."""
    return _intersect(PATH_CANONICAL_OP_ID, canonicalizer_dominates, fs_op_set, out, node_count)


def sanitizer_dominates(node_count: int, sanitizer_doms: str, sink_set: str, out: str) -> Program:
    """Sinks dominated by a sanitizer: ``sanitizer_doms & sink_set``."""
    return _intersect(SANITIZER_DOMINATES_OP_ID, sanitizer_doms, sink_set, out, node_count)


def sql_param_bound(node_count: int, param_binding_set: str, sql_query_set: str, out: str) -> Program:
    """SQL queries built through parameter binding: ``param_binding_set & sql_query_set``."""
    return _intersect(SQL_PARAM_BOUND_OP_ID, param_binding_set, sql_query_set, out, node_count)


def xss_escape(node_count: int, escape_dominates: str, render_set: str, out: str) -> Program:
    """Render sites dominated by HTML escaping: ``escape_dominates & render_set``."""
    return _intersect(XSS_ESCAPE_OP_ID, escape_dominates, render_set, out, node_count)


def format_string_check(node_count: int, format_arg_pts: str, non_literal_set: str, out: str) -> Program:
    """Format arguments reachable only from literals: ``format_arg_pts & ~non_literal_set``."""
    return _subtract(FORMAT_STRING_CHECK_OP_ID, format_arg_pts, non_literal_set, out, node_count)


def unchecked_return(node_count: int, use_set: str, check_dominates: str, out: str) -> Program:
    """Return-value uses without a dominating check: ``use_set & ~check_dominates``."""
    return _subtract(UNCHECKED_RETURN_OP_ID, use_set, check_dominates, out, node_count)


def taint_kill(node_count: int, frontier_in: str, kill_set: str, frontier_out: str) -> Program:
    """``frontier_out = frontier_in & ~kill_set``: the and_not primitive's Region re-parented
    under taint_kill (vyre's taint_kill.rs builds it without ``tag_program``'s outer Region)."""
    check_node_count(TAINT_KILL_OP_ID, node_count)
    check_buffer_names(TAINT_KILL_OP_ID, frontier_in, kill_set, frontier_out)
    primitive = bitset_word_program(BITSET_AND_NOT_OP_ID, frontier_in, kill_set, frontier_out,
                                    bitset_words(node_count), and_not)
    return Program.wrapped(primitive.buffers, primitive.workgroup_size,
                           reparent_program_children(primitive, TAINT_KILL_OP_ID))


def integer_overflow_arith(node_count: int, arith_set: str, attacker_reach: str, overflow_check_dominates: str,
                           intermediate: str, out: str) -> Program:
    """Arithmetic on attacker-reachable operands with no dominating overflow check:
    ``intermediate = arith_set & attacker_reach``; ``out = intermediate & ~overflow_check_dominates``."""
    op_id = INTEGER_OVERFLOW_ARITH_OP_ID
    check_node_count(op_id, node_count)
    check_buffer_names(op_id, arith_set, attacker_reach, overflow_check_dominates, intermediate, out)
    words, t, u32 = bitset_words(node_count), Expr.gid_x(), DataType.U32
    body = [
        Node.let_bind("attacker_arith", Expr.bitand(Expr.load(arith_set, t), Expr.load(attacker_reach, t))),
        Node.store(intermediate, t, Expr.var("attacker_arith")),
        Node.store(out, t, and_not(Expr.var("attacker_arith"), Expr.load(overflow_check_dominates, t))),
    ]
    buffers = [ro_decl(arith_set, 0, words, u32), ro_decl(attacker_reach, 1, words, u32),
               ro_decl(overflow_check_dominates, 2, words, u32), rw_decl(intermediate, 3, words, u32),
               out_decl(out, 4, words, u32)]
    return Program.wrapped(buffers, BITSET_WORKGROUP,
                           [wrap_anonymous(op_id, [Node.if_then(Expr.lt(t, Expr.u32(words)), body)])])


def sink_intersection(node_count: int, query_set: str, sink_set: str, intersect_buf: str,
                      out_scalar: str) -> Program:
    """``intersect_buf = query_set & sink_set`` and ``out_scalar[0]`` = its set-bit count (every
    word's popcount atomically added; the sum is order-independent, so the result is exact)."""
    op_id = SINK_INTERSECTION_OP_ID
    check_node_count(op_id, node_count)
    check_buffer_names(op_id, query_set, sink_set, intersect_buf, out_scalar)
    words, t, u32 = bitset_words(node_count), Expr.gid_x(), DataType.U32
    body = [
        Node.let_bind("intersect", Expr.bitand(Expr.load(query_set, t), Expr.load(sink_set, t))),
        Node.store(intersect_buf, t, Expr.var("intersect")),
        Node.let_bind("count", Expr.popcount(Expr.var("intersect"))),
        Node.let_bind("_", Expr.atomic_add(out_scalar, Expr.u32(0), Expr.var("count"))),
    ]
    buffers = [ro_decl(query_set, 0, words, u32), ro_decl(sink_set, 1, words, u32),
               rw_decl(intersect_buf, 2, words, u32), out_decl(out_scalar, 3, 1, u32)]
    return Program.wrapped(buffers, BITSET_WORKGROUP,
                           [wrap_anonymous(op_id, [Node.if_then(Expr.lt(t, Expr.u32(words)), body)])])


# ---------------------------------------------------------------- registration
# security_predicates.toml witnesses: one case, [lhs, rhs, out = 0] -> [out].
OVERLAP = ([12], [10], [8])          # bitset_and rows: 0b1100 & 0b1010
SUBTRACTION = ([15], [12], [3])      # bitset_and_not rows: 0b1111 & ~0b1100


def _register_pair(op_id: str, builder: Callable[..., Program], witness: tuple) -> None:
    lhs, rhs, expected = witness

    def _build(node_count: int = 4) -> Program:
        return builder(node_count, "a", "b", "out")

    _build.__qualname__ = f"_build_{op_id.rpartition('::')[2]}"
    register_case(op_id, _build, [pack_u32_slice(lhs), pack_u32_slice(rhs), pack_u32_slice([0])],
                  [pack_u32_slice(expected)], category=CATEGORY, ulp=ULP, bench=BENCH)


for _op_id, _builder, _witness in (
        (AUTH_CHECK_DOMINATES_OP_ID, auth_check_dominates, OVERLAP),
        (BUFFER_SIZE_CHECK_OP_ID, buffer_size_check, OVERLAP),
        (LOCK_DOMINATES_OP_ID, lock_dominates, OVERLAP),
        (PATH_CANONICAL_OP_ID, path_canonical, OVERLAP),
        (SANITIZER_DOMINATES_OP_ID, sanitizer_dominates, OVERLAP),
        (SQL_PARAM_BOUND_OP_ID, sql_param_bound, OVERLAP),
        (XSS_ESCAPE_OP_ID, xss_escape, OVERLAP),
        (FORMAT_STRING_CHECK_OP_ID, format_string_check, SUBTRACTION),
        (TAINT_KILL_OP_ID, taint_kill, SUBTRACTION),
        (UNCHECKED_RETURN_OP_ID, unchecked_return, SUBTRACTION)):
    _register_pair(_op_id, _builder, _witness)


def _build_integer_overflow_arith(node_count: int = 4) -> Program:
    return integer_overflow_arith(node_count, "arith", "reach", "guards", "scratch", "out")


def _build_sink_intersection(node_count: int = 4) -> Program:
    return sink_intersection(node_count, "a", "b", "scratch", "out")


# Legacy form (one slot per buffer, the output's placeholder included), as vyre lists them.
INTEGER_OVERFLOW_ARITH_ENTRY = register_case(
    INTEGER_OVERFLOW_ARITH_OP_ID, _build_integer_overflow_arith,
    [pack_u32_slice([w]) for w in (0b1111, 0b1100, 0b1000, 0, 0)],
    [pack_u32_slice([0b1100]), pack_u32_slice([0b0100])], category=CATEGORY, ulp=ULP, bench=BENCH)
SINK_INTERSECTION_ENTRY = register_case(
    SINK_INTERSECTION_OP_ID, _build_sink_intersection,
    [pack_u32_slice([w]) for w in (0b1100, 0b1010, 0, 0)],
    [pack_u32_slice([0b1000]), pack_u32_slice([1])], category=CATEGORY, ulp=ULP, bench=BENCH)
