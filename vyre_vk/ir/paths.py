"""Path labels of nested statement lists, as validation, the reference's errors and the fuzzer's
minimiser write them: ``entry[0].region.body[1].if.then[0].loop(j).body[2]``.

The lists themselves come from the tree walker (:func:`vyre_vk.ir.walk.node_bodies`); this module
only names them.

Example::

    >>> from vyre_vk.ir import Expr, Node
    >>> n = Node.if_then_else(Expr.bool(True), [Node.return_()], [])
    >>> [label for label, _ in labelled_bodies(n)]
    ['if.then', 'if.else']
"""
from __future__ import annotations

from . import node as N
from .walk import node_bodies

_LABELS: dict[type, tuple[str, ...]] = {
    N.If: ("if.then", "if.else"), N.Block: ("block.body",), N.Region: ("region.body",),
}


def body_labels(n: N.Node) -> tuple[str, ...]:
    """The labels of `n`'s statement lists, in :func:`~vyre_vk.ir.walk.node_bodies` order."""
    if isinstance(n, N.Loop):
        return (f"loop({n.var}).body",)
    labels = _LABELS.get(type(n))
    if labels is None:  # a subclass of a variant, or not a bodied statement
        labels = next((v for k, v in _LABELS.items() if isinstance(n, k)), ())
    return labels


def labelled_bodies(n: N.Node) -> tuple[tuple[str, tuple], ...]:
    """`n`'s nested statement lists with their labels, e.g. ``(("if.then", then), ("if.else", otherwise))``."""
    bodies = node_bodies(n)
    return tuple(zip(body_labels(n), bodies)) if bodies else ()


__all__ = ["body_labels", "labelled_bodies"]
