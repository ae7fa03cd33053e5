"""Fusion hazards: a buffer read (or stored) non-atomically and accessed atomically by
statements that no workgroup barrier separates.

vyre's validator (vyre-foundation ``validate.rs``: ``report_alias_hazards`` and the
``PushAlias``/``PopAlias`` frames) keeps a "since the last barrier" set of plain and atomic
buffer accesses, checks each statement against it and clears it at a barrier; every nested
statement list (an if branch, a loop body, a Block, a Region) gets a frame of its own and the
parent's sets are restored when it ends, so a barrier that ends a child Region (the histogram
phase of ``decode::encodex``) separates that child from its later siblings.

The rule here follows the same linear, barrier-cleared tracking, with the nesting handled by
summaries instead of isolated frames, so that what crosses a nesting level is still seen:

* each statement list is summarised as ``head`` (accesses reachable from the list's start
  with no barrier before them), ``tail`` (accesses still "live" at its end: after its last
  barrier, or all of them) and ``clears`` (every path through it runs a barrier);
* a list checks each statement's ``head`` against what its earlier siblings left live, and
  hands its own ``head`` to the parent, which checks it against the parent's live set;
* an if's condition and a loop's bounds are checked against the parent's live set (as in
  vyre, not against the branches); both branches are summarised and joined; a loop body's
  ``head`` is also checked against its own ``tail`` (the next iteration), and the loop may
  run zero times, so it never clears.

So a child ending in a barrier clears its parent's tracking (the encodex shape validates);
a hazard is still rejected when the two statements sit at different nesting levels or in
consecutive loop iterations (vyre's isolated frames let those through; they race on a GPU,
and inlining the Region or unrolling the loop would make them siblings). Accepting a program
never depends on how its statements are grouped into Regions and Blocks.

Example::

    >>> from vyre_vk.ir import Expr, Node
    >>> hist = Node.region("child", [Node.store("h", Expr.u32(0), Expr.u32(1)), Node.barrier()])
    >>> check_hazards((hist, Node.let_bind("x", Expr.atomic_add("h", Expr.u32(0), Expr.u32(1)))), "entry")
    >>> check_hazards((Node.let_bind("y", Expr.load("h", Expr.u32(0))),
    ...                Node.block([Node.let_bind("x", Expr.atomic_add("h", Expr.u32(0), Expr.u32(1)))])), "body")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    ControlFlowError: body[1].block.body[0]: fusion hazard on buffer `h`: ...
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import expr as E
from . import node as N
from .validate_base import ControlFlowError, err
from .walk import node_exprs, walk_expr

#: buffer name -> path of one statement that made the access (the first one met)
Uses = dict[str, str]


@dataclass
class Summary:
    """What a statement or statement list does to the hazard tracking (see the module doc)."""

    head_reads: Uses = field(default_factory=dict)
    head_atoms: Uses = field(default_factory=dict)
    tail_reads: Uses = field(default_factory=dict)
    tail_atoms: Uses = field(default_factory=dict)
    clears: bool = False


def _merge(into: Uses, more: Uses) -> None:
    for k, v in more.items():
        into.setdefault(k, v)


def _leaf_uses(n: N.Node, path: str) -> tuple[Uses, Uses]:
    # A store's own buffer counts as a plain access, before those of the expressions it evaluates.
    reads: Uses = {n.buffer: path} if isinstance(n, N.Store) else {}
    expr_reads, atoms = _expr_uses(node_exprs(n), path)
    _merge(reads, expr_reads)
    return reads, atoms


def _expr_uses(exprs: tuple, path: str) -> tuple[Uses, Uses]:
    reads: Uses = {}
    atoms: Uses = {}
    for root in exprs:
        for e in walk_expr(root):
            if isinstance(e, (E.Load, E.BufLen)):
                reads.setdefault(e.buffer, path)
            elif isinstance(e, E.Atomic):
                atoms.setdefault(e.buffer, path)
    return reads, atoms


def _check(head_reads: Uses, head_atoms: Uses, live_reads: Uses, live_atoms: Uses, why: str = "") -> None:
    """Raise for the first buffer (by name) accessed plainly on one side and atomically on the other."""
    clashes = []
    for b in set(head_reads) & set(live_atoms):
        clashes.append((b, head_reads[b], live_atoms[b], "non-atomically", "atomically"))
    for b in set(head_atoms) & set(live_reads):
        clashes.append((b, head_atoms[b], live_reads[b], "atomically", "non-atomically"))
    if not clashes:
        return
    b, later, earlier, how, other = min(clashes)
    err(ControlFlowError, later,
        f"fusion hazard on buffer `{b}`: this statement accesses it {how} and the statement at {earlier} "
        f"accesses it {other}{why}, with no barrier between them.",
        "insert Node.barrier() between the two accesses (in uniform control flow), or use atomics for every "
        "access of the buffer.")


def summarize_list(nodes: tuple, path: str) -> Summary:
    """Summary of statement list `nodes` (at `path`), raising ControlFlowError for a hazard inside it."""
    out = Summary()
    for i, n in enumerate(nodes):
        s = summarize_node(n, f"{path}[{i}]")
        _check(s.head_reads, s.head_atoms, out.tail_reads, out.tail_atoms)
        if not out.clears:
            _merge(out.head_reads, s.head_reads)
            _merge(out.head_atoms, s.head_atoms)
        if s.clears:
            out.tail_reads, out.tail_atoms, out.clears = dict(s.tail_reads), dict(s.tail_atoms), True
        else:
            _merge(out.tail_reads, s.tail_reads)
            _merge(out.tail_atoms, s.tail_atoms)
    return out


def summarize_node(n: N.Node, path: str) -> Summary:
    """Summary of one statement (nested lists included)."""
    if isinstance(n, N.Barrier):
        return Summary(clears=True)
    if isinstance(n, N.If):
        cr, ca = _expr_uses((n.cond,), path)
        t = summarize_list(n.then, path + ".if.then")
        o = summarize_list(n.otherwise, path + ".if.else")
        s = Summary(dict(cr), dict(ca), clears=t.clears and o.clears)
        for b in (t, o):
            _merge(s.head_reads, b.head_reads)
            _merge(s.head_atoms, b.head_atoms)
            _merge(s.tail_reads, b.tail_reads)
            _merge(s.tail_atoms, b.tail_atoms)
        if not s.clears:  # the condition ran after the parent's last barrier
            _merge(s.tail_reads, cr)
            _merge(s.tail_atoms, ca)
        return s
    if isinstance(n, N.Loop):
        br, ba = _expr_uses((n.from_, n.to), path)
        body = summarize_list(n.body, f"{path}.loop({n.var}).body")
        _check(body.head_reads, body.head_atoms, body.tail_reads, body.tail_atoms,
               " in the previous iteration of the loop")
        s = Summary(dict(br), dict(ba), dict(br), dict(ba), clears=False)  # the loop may run zero times
        _merge(s.head_reads, body.head_reads)
        _merge(s.head_atoms, body.head_atoms)
        _merge(s.tail_reads, body.tail_reads)
        _merge(s.tail_atoms, body.tail_atoms)
        return s
    if isinstance(n, N.Block):
        return summarize_list(n.body, path + ".block.body")
    if isinstance(n, N.Region):
        return summarize_list(n.body, path + ".region.body")
    reads, atoms = _leaf_uses(n, path)
    return Summary(reads, atoms, dict(reads), dict(atoms))


def check_hazards(entry: tuple, path: str = "entry") -> None:
    """Raise ControlFlowError for the first fusion hazard in statement list `entry`."""
    summarize_list(entry, path)


__all__ = ["Summary", "summarize_list", "summarize_node", "check_hazards"]
