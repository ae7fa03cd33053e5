"""`vyre-libs::math::scan_prefix_sum`: inclusive prefix sum ``output[i] = input[0] + ... + input[i]``
on u32, wrapping modulo 2^32 (port of vyre-libs/src/math/scan/prefix_sum.rs over
vyre-primitives' ``prefix_scan_with_op_id``, the ``1 <= n <= 1024`` path).

Hillis-Steele in one workgroup of ``lanes = next_pow2(n)`` (workgroup [lanes,1,1]), the lane being
``gid.x``, over two workgroup arrays ``__{output}_scan_a`` / ``__{output}_scan_b`` (count lanes):
zero ``a[lane]``, load ``input[lane]`` where ``lane < n``, barrier; then for stride 1, 2, ..
< lanes: ``b[lane] = a[lane]``; ``if stride-1 < lane: b[lane] = a[lane] + a[lane - stride]``
(the index written as a wrapping add of ``-stride``), barrier, ``a[lane] = b[lane]``, barrier;
finally ``output[lane] = a[lane]`` where ``lane < n``. ``output`` has count n and readback bytes
``0..4n``.

Not ported: vyre's ``n > 1024`` path, a three-pass multi-block scan fused with GridSync
barriers that vyre-driver splits into separate dispatches; the IR here has no GridSync, so
``n > 1024`` (and ``n == 0``, which vyre traps) raise OpParamError.

Example::

    >>> p = scan_prefix_sum("input", "output", 5)
    >>> p.workgroup_size, [(b.name, b.count) for b in p.buffers]
    ((8, 1, 1), [('input', 5), ('output', 5), ('__output_scan_a', 8), ('__output_scan_b', 8)])
"""
from __future__ import annotations

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...registry import OpParamError, register_case
from ...wire import pack_u32_slice

OP_ID = "vyre-libs::math::scan_prefix_sum"
MAX_SINGLE_BLOCK = 1024
# u32 result: byte-exact (no f32 window).
ULP = None
_U32_MAX = 0xFFFFFFFF


def _next_pow2(v: int) -> int:
    return 1 if v <= 1 else 1 << (v - 1).bit_length()


def scan_prefix_sum(input: str, output: str, n: int) -> Program:
    if n == 0:
        raise OpParamError("Fix: scan_prefix_sum requires n > 0.")
    if n > MAX_SINGLE_BLOCK:
        raise OpParamError(f"scan_prefix_sum with n={n} needs vyre's multi-block scan (GridSync passes), which "
                           f"this port does not have. Fix: scan at most {MAX_SINGLE_BLOCK} elements per program "
                           "and add the block totals on the host, or pass n <= 1024.")
    lanes = _next_pow2(n)
    lane, u32 = Expr.gid_x(), Expr.u32
    a, b = f"__{output}_scan_a", f"__{output}_scan_b"
    body = [
        Node.store(a, lane, u32(0)),
        Node.if_then(Expr.lt(lane, u32(n)), [Node.store(a, lane, Expr.load(input, lane))]),
        Node.barrier(),
    ]
    stride = 1
    while stride < lanes:
        previous = Expr.add(lane, u32((_U32_MAX - (stride - 1)) & _U32_MAX))  # lane - stride, wrapping
        body += [
            Node.store(b, lane, Expr.load(a, lane)),
            Node.if_then(Expr.lt(u32(stride - 1), lane), [
                Node.store(b, lane, Expr.add(Expr.load(a, lane), Expr.load(a, previous)))]),
            Node.barrier(),
            Node.store(a, lane, Expr.load(b, lane)),
            Node.barrier(),
        ]
        stride *= 2
    body.append(Node.if_then(Expr.lt(lane, u32(n)), [Node.store(output, lane, Expr.load(a, lane))]))
    buffers = [ro_decl(input, 0, n, DataType.U32),
               out_decl(output, 1, n, DataType.U32).with_output_byte_range(0, 4 * n),
               BufferDecl.workgroup(a, lanes, DataType.U32), BufferDecl.workgroup(b, lanes, DataType.U32)]
    return Program.wrapped(buffers, (lanes, 1, 1), [wrap_anonymous(OP_ID, body)])


def _build(n: int = 4) -> Program:
    return scan_prefix_sum("input", "output", n)


ENTRY = register_case(OP_ID, _build, [pack_u32_slice([1, 2, 3, 4])], [pack_u32_slice([1, 3, 6, 10])], category="math",
                      ulp=ULP, bench=dict(n=1024))
