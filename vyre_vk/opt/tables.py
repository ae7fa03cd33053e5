"""One pre-pass per table in a whole graph: tabulate runs stage by stage, so two stages that
recompute the same value (attention's max, sum and output phases all recompute the scores)
each get a pre-pass computing the same table. :func:`share_tables` keeps the first and points
the later stages at its table -- when nothing between the two writes a buffer the pre-pass
reads, the two tables hold the same values, so every load reads what it read before.

Example::

    >>> from vyre_vk.ops import get
    >>> from vyre_vk.opt import optimize
    >>> graph, _ = optimize(get("vyre-libs::nn::attention").build_with(seq_len=40, head_dim=12),
    ...                     ["split_phases", "tabulate"])
    >>> sum(1 for b in graph.scratch if b.name.endswith("dot_val0"))   # one dot table for three phases
    1
"""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import Program, Region
from ..ir.walk import rewrite_nodes, replace_expr

TABULATE_GENERATOR = "vyre_vk.opt.tabulate"


def rename_buffers(p: Program, names: dict) -> Program:
    """`p` with buffers renamed (declarations, loads, stores, lengths, atomics)."""
    if not any(b.name in names for b in p.buffers):
        return p

    def expr(e: E.Expr):
        if isinstance(e, (E.Load, E.BufLen, E.Atomic)) and e.buffer in names:
            return dataclasses.replace(e, buffer=names[e.buffer],
                                       **({"index": replace_expr(e.index, expr)} if isinstance(e, E.Load) else {}))
        return None

    def stmt(n: N.Node):
        if isinstance(n, N.Store) and n.buffer in names:
            return (N.Store(names[n.buffer], replace_expr(n.index, expr), replace_expr(n.value, expr)),)
        return None
    entry = rewrite_nodes(p.entry, stmt=stmt, expr=lambda e: replace_expr(e, expr))
    bufs = tuple(dataclasses.replace(b, name=names.get(b.name, b.name)) for b in p.buffers)
    return dataclasses.replace(p, buffers=bufs, entry=entry)


def _is_prepass(p: Program) -> bool:
    return len(p.entry) == 1 and isinstance(p.entry[0], Region) and p.entry[0].generator == TABULATE_GENERATOR


def share_tables(stages: list, scratch: list) -> tuple[list, list]:
    """The graph with each repeated pre-pass dropped and its table's readers pointed at the first."""
    rename: dict = {}
    seen: dict = {}  # canonical pre-pass -> (its table names, its index in `out`)
    out: list = []
    for st in stages:
        st = rename_buffers(st, rename)
        if _is_prepass(st):
            tables = [b.name for b in st.buffers if b.is_result]
            key = repr(rename_buffers(st, {t: f"__table{k}" for k, t in enumerate(tables)}))
            reads = {b.name for b in st.buffers if not b.is_result}
            hit = seen.get(key)
            if hit is not None and not any(reads & {b.name for b in later.buffers if b.is_result}
                                           for later in out[hit[1] + 1:]):
                rename.update(zip(tables, hit[0]))
                continue
            seen[key] = (tables, len(out))
        out.append(st)
    return out, [s for s in scratch if s.name not in rename]


__all__ = ["share_tables", "rename_buffers"]
