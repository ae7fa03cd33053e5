"""An IR Fma over every operand class, on this device through the runtime, against the reference
(a check of the device's lowering, not a benchmark; the lavapipe test with a correctly rounded
stand-in is tests/lower/test_ieee_fused.py, which takes its operands from here).

    python3 tools/bench/fma_edges.py            # prints mismatches by result class; exit 1 if any

Where the device's fma() is fused (probed), normal results come from it directly
(vyre_vk.lower.ieee.FUSED); zeros, subnormals, infinities and NaN from the double-precision helper
where the device has float64 (vyre_vk.lower.ffmath64), else from the general split helper.
"""
from __future__ import annotations

import sys

import numpy as np

F = np.float32


def operands(rng: np.random.Generator, n: int = 1 << 14) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random normals, exact and near cancellations, results in and next to the lowest binades
    (zero, subnormal, FLT_MIN, 2 FLT_MIN), overflow, and signed zero, infinite and NaN operands.

    >>> [x.size for x in operands(np.random.default_rng(0), 2048)]
    [2048, 2048, 2048]
    """
    a, b, c = (rng.standard_normal(n).astype(F) for _ in range(3))
    k = n // 8
    c[:k] = -(a[:k] * b[:k])  # the rounded product: the result is the product's rounding error
    c[k:2 * k] = -(a[k:2 * k] * b[k:2 * k]) * F(1 + 2.0 ** -20)  # near cancellations
    tiny = F(2.0 ** -63)
    a[2 * k:4 * k] *= tiny  # products near 2^-126: the result's binade decides the path
    b[2 * k:4 * k] *= tiny
    t = np.finfo(F).tiny
    c[2 * k:3 * k] = rng.choice(np.array([0.0, -0.0, t, -t, 2 * t, -2 * t, 3 * t], F), k)
    c[3 * k:4 * k] = -(a[3 * k:4 * k] * b[3 * k:4 * k])  # cancel to subnormal-sized residues
    big = F(2.0 ** 70)
    a[4 * k:4 * k + 64] *= big  # overflow, and huge products that c brings back
    b[4 * k:4 * k + 64] *= big
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, t, -t], F)
    grid = np.stack(np.meshgrid(specials, specials, specials), -1).reshape(-1, 3)
    m = min(grid.shape[0], n - 5 * k)
    a[5 * k:5 * k + m], b[5 * k:5 * k + m], c[5 * k:5 * k + m] = grid[:m].T
    return a, b, c


def fma_program(n: int):
    """out[i] = fma(a[i], b[i], c[i]), f32."""
    from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous

    i = Expr.gid_x()
    return Program.wrapped(
        [BufferDecl.read(x, k, DataType.F32).with_count(n) for k, x in enumerate("abc")]
        + [BufferDecl.output("out", 3, DataType.F32).with_count(n)], (64, 1, 1),
        [wrap_anonymous("fma_edges", [Node.if_then(Expr.lt(i, Expr.u32(n)), [
            Node.store("out", i, Expr.fma(Expr.load("a", i), Expr.load("b", i), Expr.load("c", i)))])])])


def main() -> int:
    from vyre_vk import reference
    from vyre_vk.runtime import default_device, run

    a, b, c = operands(np.random.default_rng(17), 1 << 16)
    p = fma_program(a.size)
    dev = default_device()
    got = run(p, {"a": a, "b": b, "c": c}, device=dev)["out"].view(np.uint32)
    with np.errstate(all="ignore"):
        want = reference.run(p, {"a": a, "b": b, "c": c})["out"].view(np.uint32)
    e = (want >> 23) & 0xFF
    classes = {"normal": (e >= 1) & (e <= 254), "zero": want & 0x7FFFFFFF == 0, "inf/nan": e == 255}
    print(f"device {dev.name}: fused fma {dev.limits.fused_fma}, {a.size} operand triples")
    bad = 0
    for name, rows in classes.items():
        wrong = np.flatnonzero(rows & (got != want))
        bad += wrong.size
        print(f"  {name:8s} {int(rows.sum()):6d} results, {wrong.size} differ from the reference"
              + "".join(f"\n    fma({a[j]!r}, {b[j]!r}, {c[j]!r}) = {got[j]:#010x}, reference {want[j]:#010x}"
                        for j in wrong[:4]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
