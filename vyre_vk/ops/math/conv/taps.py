"""The 3x3 zero-padded tap addressing shared by conv2d_3x3_direct and im2col_3x3: for tap
``(ky, kx)`` with ``dy, dx = ky-1, kx-1``: in-bounds ``y >= 1`` / ``y + dy < h`` (likewise x),
neighbour ``ny = y -/+ |dy|`` (u32, may wrap: the select discards it), index ``ny*w + nx``.
The parent binds ``y`` and ``x`` (``pixel_coords`` does, from the flat pixel index ``flat``).

Example::

    >>> len(list(taps(4, 4)))
    9
"""
from __future__ import annotations

from ....ir import Expr, Node


def pixel_coords(w: int) -> list:
    """``y = flat / w; x = flat % w`` for a row-major image of width `w`."""
    return [Node.let_bind("y", Expr.div(Expr.var("flat"), Expr.u32(w))),
            Node.let_bind("x", Expr.rem(Expr.var("flat"), Expr.u32(w)))]


def _coord(var: str, d: int, limit: int):
    v = Expr.var(var)
    if d < 0:
        return Expr.ge(v, Expr.u32(-d)), Expr.sub(v, Expr.u32(-d))
    if d > 0:
        return Expr.lt(Expr.add(v, Expr.u32(d)), Expr.u32(limit)), Expr.add(v, Expr.u32(d))
    return Expr.lt(Expr.add(v, Expr.u32(0)), Expr.u32(limit)), v


def taps(h: int, w: int):
    """Yield ``(tap index ky*3+kx, in_bounds, load_index)`` in row-major tap order."""
    for ky in range(3):
        for kx in range(3):
            y_ok, ny = _coord("y", ky - 1, h)
            x_ok, nx = _coord("x", kx - 1, w)
            yield ky * 3 + kx, Expr.and_(y_ok, x_ok), Expr.add(Expr.mul(ny, Expr.u32(w)), nx)
