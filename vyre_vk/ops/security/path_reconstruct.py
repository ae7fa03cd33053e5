"""`vyre-libs::security::path_reconstruct`: walk a parent-pointer array back from a target node
(port of vyre-libs/src/security/path_reconstruct.rs, a ``tag_program`` over
vyre-primitives/src/graph/path_reconstruct.rs).

``parent[v] == u`` means u is v's chosen predecessor; ``parent[root] == root`` ends the walk, and a
node past the end of ``parent`` is its own parent (a root). Invocation 0 alone walks (workgroup
[1,1,1]; the inferred grid has ``max_depth`` one-lane workgroups, the others idle):
``path_out[0..len] = [target, parent[target], ...]`` stopping after the root or at ``max_depth``
entries (a cycle runs to the cap), then zeroes ``path_out[len..max_depth]`` and stores
``path_len[0] = len``. Buffers: ``parent`` ro u32 sized by the bound data (binding 0, count 0),
``target`` ro (1, 1 word), ``path_out`` plain ReadWrite (2, ``max_depth``), ``path_len`` plain
ReadWrite (3, 1).

Example::

    >>> p = path_reconstruct("parent", "target", "path_out", "path_len", 8)
    >>> [(b.name, b.count) for b in p.buffers], p.workgroup_size
    ([('parent', 0), ('target', 1), ('path_out', 8), ('path_len', 1)], (1, 1, 1))
"""
from __future__ import annotations

from ...ir import DataType, Expr, Node, Program, wrap_anonymous
from ..builder import ro_decl, rw_decl
from ..registry import OpParamError, register_case
from ..wire import pack_u32_slice
from .region import U32_MAX, check_buffer_names, tag_program

OP_ID = "vyre-libs::security::path_reconstruct"
PRIMITIVE_OP_ID = "vyre-primitives::graph::path_reconstruct"
# u32 results: byte-exact (no f32 window).
ULP = None


def primitive_path_reconstruct(parent: str, target: str, path_out: str, path_len: str, max_depth: int) -> Program:
    """vyre-primitives' single-target program (``done`` ends the walk so ``len`` stays the true length)."""
    v, u32 = Expr.var, DataType.U32
    walk = [
        Node.store(path_out, v("len"), v("current")),
        Node.assign("len", Expr.add(v("len"), Expr.u32(1))),
        Node.let_bind("next", Expr.select(Expr.lt(v("current"), Expr.buf_len(parent)),
                                          Expr.load(parent, v("current")), v("current"))),
        Node.if_then(Expr.eq(v("next"), v("current")), [Node.assign("done", Expr.u32(1))]),
        Node.assign("current", v("next")),
    ]
    body = [
        Node.let_bind("current", Expr.load(target, Expr.u32(0))),
        Node.let_bind("len", Expr.u32(0)),
        Node.let_bind("done", Expr.u32(0)),
        Node.loop_for("step", Expr.u32(0), Expr.u32(max_depth), [
            Node.if_then(Expr.eq(v("done"), Expr.u32(0)), walk)]),
        # The unused tail is zeroed so the result does not depend on path_out's initial bytes.
        Node.loop_for("pad", v("len"), Expr.u32(max_depth), [Node.store(path_out, v("pad"), Expr.u32(0))]),
        Node.store(path_len, Expr.u32(0), v("len")),
    ]
    buffers = [ro_decl(parent, 0, 0, u32), ro_decl(target, 1, 1, u32), rw_decl(path_out, 2, max_depth, u32),
               rw_decl(path_len, 3, 1, u32)]
    return Program.wrapped(buffers, (1, 1, 1), [wrap_anonymous(PRIMITIVE_OP_ID, [
        Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), body)])])


def path_reconstruct(parent: str, target: str, path_out: str, path_len: str, max_depth: int) -> Program:
    """The path from ``target[0]`` back to its root (at most `max_depth` nodes) and its length."""
    if not isinstance(max_depth, int) or isinstance(max_depth, bool) or not 0 < max_depth <= U32_MAX:
        raise OpParamError(f"{OP_ID} max_depth must be a positive u32; got {max_depth!r}. "
                           "Fix: pass the longest path to materialise (>= 1).")
    check_buffer_names(OP_ID, parent, target, path_out, path_len)
    return tag_program(OP_ID, primitive_path_reconstruct(parent, target, path_out, path_len, max_depth))


def _build(max_depth: int = 4) -> Program:
    return path_reconstruct("parent", "target", "path_out", "path_len", max_depth)


# Chain 3 -> 2 -> 1 -> 0 (root 0 is its own parent).
ENTRY = register_case(OP_ID, _build, [pack_u32_slice(w) for w in ([0, 0, 1, 2], [3], [0, 0, 0, 0], [0])],
                      [pack_u32_slice([3, 2, 1, 0]), pack_u32_slice([4])], category="security", ulp=ULP,
                      bench=dict(max_depth=4096))
