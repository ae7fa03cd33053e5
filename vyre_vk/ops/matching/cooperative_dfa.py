"""`vyre-libs::matching::cooperative_dfa`: subgroup-cooperative DFA scan (port of
vyre-libs/src/scan/dfa/cooperative_dfa.rs; tables from :mod:`.dfa_compile`).

Workgroup ``[max(subgroup_size, 1), 1, 1]``, one invocation per input byte. Each lane starts at
the root and takes its own byte, ``state = T[0][byte]``; then for ``r < floor(log2(width))``
rounds it takes the state of lane ``local - 2^r`` (lane 0 where ``local < 2^r``) with
``subgroup_shuffle`` and steps it with its own byte again, ``state = T[shuffled][byte]``. Finally
``matches[idx] = accept_mask[state] != 0`` for in-bounds lanes (out-of-bounds lanes read byte 0
and take part in the shuffles, but never store).

What this computes (faithful to vyre; noted for the lead): the rounds forward *states*, not
composed transition functions, so it is not an exact DFA scan for multi-byte patterns, and every
workgroup restarts at the root (no carry across workgroups). Lane 0 shuffles from itself and so
applies its byte ``1 + rounds`` times (pattern ``aa`` on input ``a`` reports a match). For
single-byte patterns (vyre's vector: ``a`` in ``banana``) every lane's result is exact.

Subgroups: vyre's reference simulates 32-lane subgroups (lane index relative to the lane's own
subgroup; a lane outside it reads 0), and vyre_vk lowers ``subgroup_shuffle`` to that same
width-32 exchange through workgroup memory on every device (vyre_vk/lower/glsl.py), whatever the
hardware subgroup width (8 on lavapipe, 32 on NVIDIA). So the results are exact on every device
and no device needs refusing. The shuffle lane is the workgroup-local id, as in vyre: for widths
above 32 it names lanes of other 32-lane subgroups, which read 0 (the reference's rule too).

Example::

    >>> p = cooperative_dfa_scan("input", "transitions", "accept_mask", "matches", 6, 2, 4)
    >>> p.workgroup_size, [b.count for b in p.buffers]
    ((4, 1, 1), [6, 512, 2, 6])
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..hash.wrap import check_count
from ..registry import OpParamError, register_case
from ..wire import pack_u32_slice
from .dfa_compile import ALPHABET_SIZE, dfa_compile

OP_ID = "vyre-libs::matching::cooperative_dfa"
ULP = None  # u32 results: exact
U32 = DataType.U32
U32_MAX = 0xFFFFFFFF
#: The largest workgroup width this builder accepts (Vulkan's guaranteed maxComputeWorkGroupSize[0]).
MAX_WIDTH = 1024


def _transition(transitions: str, state: Expr, byte: Expr) -> Expr:
    return Expr.load(transitions, Expr.add(Expr.mul(state, Expr.u32(ALPHABET_SIZE)), byte))


def cooperative_dfa_scan_body_with_store(input: str, transitions: str, accept_mask: str, matches: str,
                                         subgroup_size: int, store_value: Expr) -> list[Node]:
    """The scan body (vyre inlines it into fused decode->scan programs); `store_value` is what an
    in-bounds lane stores to ``matches[idx]``, over the bound ``accepting`` (= accept_mask[state])."""
    width = max(subgroup_size, 1)
    rounds = width.bit_length() - 1  # floor(log2(width)), as vyre's ilog2
    local = Expr.local_x()
    lane_body = [
        Node.let_bind("safe_idx", Expr.select(Expr.var("in_bounds"), Expr.var("idx"), Expr.u32(0))),
        Node.let_bind("byte", Expr.load(input, Expr.var("safe_idx"))),
        Node.assign("state", _transition(transitions, Expr.var("state"), Expr.var("byte"))),
    ]
    for r in range(rounds):
        offset = 1 << r
        src = Expr.select(Expr.lt(local, Expr.u32(offset)), Expr.u32(0), Expr.sub(local, Expr.u32(offset)))
        name = f"forwarded_state_{r}"
        lane_body += [Node.let_bind(name, Expr.subgroup_shuffle(Expr.var("state"), src)),
                      Node.assign("state", _transition(transitions, Expr.var(name), Expr.var("byte")))]
    lane_body += [
        Node.let_bind("accepting", Expr.load(accept_mask, Expr.var("state"))),
        Node.if_then(Expr.var("in_bounds"), [Node.store(matches, Expr.gid_x(), store_value)]),
    ]
    return [Node.let_bind("idx", Expr.gid_x()),
            Node.let_bind("in_bounds", Expr.lt(Expr.var("idx"), Expr.buf_len(input))),
            Node.let_bind("state", Expr.u32(0)),
            *lane_body]


def cooperative_dfa_scan(input: str, transitions: str, accept_mask: str, matches: str, input_len: int,
                         state_count: int, subgroup_size: int) -> Program:
    """``matches[i] = 1`` where the cooperative scan ends byte ``i`` in an accepting state, else 0."""
    for name, value in (("input_len", input_len), ("state_count", state_count), ("subgroup_size", subgroup_size)):
        check_count(OP_ID, name, value)
    width = max(subgroup_size, 1)
    if width > MAX_WIDTH:
        raise OpParamError(f"{OP_ID}: subgroup_size = {subgroup_size} makes a workgroup of {width} lanes, over "
                           f"{MAX_WIDTH}. Fix: pass a subgroup_size in [1, {MAX_WIDTH}] (vyre passes the device's, "
                           "e.g. 32).")
    accepting = Expr.select(Expr.ne(Expr.var("accepting"), Expr.u32(0)), Expr.u32(1), Expr.u32(0))
    body = cooperative_dfa_scan_body_with_store(input, transitions, accept_mask, matches, subgroup_size, accepting)
    return Program.wrapped(
        [BufferDecl.read(input, 0, U32).with_count(input_len),
         BufferDecl.read(transitions, 1, U32).with_count(min(state_count * ALPHABET_SIZE, U32_MAX)),
         BufferDecl.read(accept_mask, 2, U32).with_count(state_count),
         BufferDecl.output(matches, 3, U32).with_count(input_len)],
        (width, 1, 1), [wrap_anonymous(OP_ID, body)])


def _build(input_len: int = 6, state_count: int = 2, subgroup_size: int = 4) -> Program:
    return cooperative_dfa_scan("input", "transitions", "accept_mask", "matches", input_len, state_count,
                                subgroup_size)


_A = dfa_compile([b"a"])  # 2 states: the registered size
ENTRY = register_case(
    OP_ID, _build, [pack_u32_slice(b"banana"), pack_u32_slice(_A.transitions), pack_u32_slice(_A.accept)],
    [pack_u32_slice([0, 1, 0, 1, 0, 1])], category=None, ulp=ULP, bench=dict(input_len=1 << 16, subgroup_size=32))

__all__ = ["OP_ID", "cooperative_dfa_scan", "cooperative_dfa_scan_body_with_store"]
