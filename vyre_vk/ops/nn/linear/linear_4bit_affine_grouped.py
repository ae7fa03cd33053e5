"""`vyre-libs::nn::linear_4bit_affine_grouped`: f32 affine layer over 4-bit weight codes with a
per-group scale and zero point (port of vyre-libs/src/nn/linear/inner/linear_4bit.rs
``linear_4bit_affine_grouped``; the first port that uses subgroup collectives).

``out[i] = b[i] + sum_k x[k] * ((f32(code(k, i)) - f32(zp[g*out_dim + i])) * scale[g*out_dim + i])``
with ``g = k / group_size`` and ``code(k, i) = (w[(k/8)*out_dim + i] >> ((k%8)*4)) & 0xF`` (the
layout of ``linear_4bit``). One 32-lane subgroup per output: workgroup [256,1,1] = 8 outputs,
``out_idx = workgroup_x * 8 + local_x / 32``, lane = local_x % 32. Each chunk of 32 k values: lane
``l`` owns ``k = chunk*32 + l``; the first lane of every 8 loads the packed word and a subgroup
shuffle hands it to its 8 lanes; each lane accumulates one product; finally ``subgroup_add`` of the
lane sums (lane order) and lane 0 stores ``b[i] + sum``. When ``group_size`` is a multiple of 32 and
larger than 32, a group loop loads scale/zero point once per group on lane 0 and shuffles them
(``group_idx``/``group_chunk`` loops); otherwise every lane loads them per chunk (``chunk`` loop).

Buffers x ro f32 (0, in_dim), w ro u32 (1, in_dim/8*out_dim), scale ro f32 (2, groups*out_dim),
zero_point ro u32 (3, groups*out_dim), b ro f32 (4, out_dim), out f32 output (5, ceil(out_dim/8)*256
elements, returned bytes cut to out_dim). in_dim must be a multiple of 8.

Example::

    >>> [b.count for b in linear_4bit_affine_grouped("x", "w", "scale", "zp", "b", "out", 8, 2, 4).buffers]
    [8, 2, 4, 4, 2, 256]
"""
from __future__ import annotations

from ....ir import DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice, pack_u32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::linear_4bit_affine_grouped"
# 4 ULP: elementary f32 ops only (vyre's program budget): exact casts of codes, sub, mul, add, lane-order sum.
ULP = 4

WORKGROUP = 256
LANES_PER_OUTPUT = 32  # one vyre (simulated) subgroup per output
OUTPUTS_PER_WARP = 1
WARPS_PER_WORKGROUP = WORKGROUP // LANES_PER_OUTPUT
OUTPUTS_PER_WORKGROUP = WARPS_PER_WORKGROUP * OUTPUTS_PER_WARP


def linear_4bit_affine_grouped(x: str, w_packed: str, scale: str, zero_point: str, b: str, out: str,
                               in_dim: int, out_dim: int, group_size: int) -> Program:
    if in_dim == 0:
        raise OpParamError("Fix: linear_4bit_affine_grouped in_dim=0 is invalid: empty reduction")
    if out_dim == 0:
        raise OpParamError("Fix: linear_4bit_affine_grouped out_dim=0 is invalid: empty output")
    if group_size == 0:
        raise OpParamError("Fix: linear_4bit_affine_grouped group_size=0 is invalid: group size must be > 0")
    if in_dim % 8 != 0:
        raise OpParamError(f"Fix: linear_4bit_affine_grouped in_dim={in_dim} is not divisible by 8; "
                         "pad weights to a multiple of 8.")
    words = in_dim // 8 * out_dim
    groups = -(-in_dim // group_size)
    sidecars = groups * out_dim
    if words > 0xFFFFFFFF or sidecars > 0xFFFFFFFF:
        raise OpParamError("Fix: linear_4bit_affine_grouped buffer sizes overflow u32; reduce dimensions.")
    tile = LANES_PER_OUTPUT
    chunks = -(-in_dim // tile)
    out_idx, lane, k = Expr.var("out_idx"), Expr.var("lane"), Expr.var("k")
    lane_in_word, leader_lane, leader_k = Expr.var("lane_in_word"), Expr.var("word_leader_lane"), Expr.var("word_leader_k")
    packed_idx = Expr.add(Expr.mul(Expr.div(leader_k, Expr.u32(8)), Expr.u32(out_dim)), out_idx)
    nibble = Expr.bitand(Expr.shr(Expr.var("packed_word"), Expr.mul(lane_in_word, Expr.u32(4))), Expr.u32(0xF))
    weight = Expr.mul(Expr.sub(Expr.cast(DataType.F32, nibble), Expr.cast(DataType.F32, Expr.var("group_zero_point"))),
                      Expr.var("group_scale"))
    accumulate = Node.if_then(Expr.lt(k, Expr.u32(in_dim)), [
        Node.assign("local_acc", Expr.add(Expr.var("local_acc"), Expr.mul(Expr.load(x, k), weight)))])

    def word_broadcast(chunk_base: Expr) -> list:
        """k for this lane, and the packed word of its 8-lane group shuffled from the group's first lane."""
        return [
            Node.let_bind("k", Expr.add(chunk_base, lane)),
            Node.let_bind("lane_in_word", Expr.bitand(lane, Expr.u32(7))),
            Node.let_bind("word_leader_lane", Expr.bitand(lane, Expr.u32(0xFFFFFFF8))),
            Node.let_bind("word_leader_k", Expr.add(chunk_base, leader_lane)),
            Node.let_bind("packed_word_lane", Expr.u32(0)),
            Node.if_then(Expr.and_(Expr.eq(lane_in_word, Expr.u32(0)), Expr.lt(leader_k, Expr.u32(in_dim))),
                         [Node.assign("packed_word_lane", Expr.load(w_packed, packed_idx))]),
            Node.let_bind("packed_word", Expr.subgroup_shuffle(Expr.var("packed_word_lane"), leader_lane)),
        ]

    per_output = [Node.let_bind("local_acc", Expr.f32(0.0))]
    if group_size > tile and group_size % tile == 0:
        # sidecars once per (group, output): lane 0 loads, a shuffle broadcasts
        sidecar = Expr.var("sidecar_idx")
        group_base = Expr.var("group_base")
        per_output.append(Node.loop_for("group_idx", Expr.u32(0), Expr.u32(groups), [
            Node.let_bind("group_base", Expr.mul(Expr.var("group_idx"), Expr.u32(group_size))),
            Node.let_bind("sidecar_idx", Expr.add(Expr.mul(Expr.var("group_idx"), Expr.u32(out_dim)), out_idx)),
            Node.let_bind("scale_lane", Expr.f32(0.0)),
            Node.let_bind("zero_point_lane", Expr.u32(0)),
            Node.if_then(Expr.eq(lane, Expr.u32(0)), [
                Node.assign("scale_lane", Expr.load(scale, sidecar)),
                Node.assign("zero_point_lane", Expr.load(zero_point, sidecar))]),
            Node.let_bind("group_scale", Expr.subgroup_shuffle(Expr.var("scale_lane"), Expr.u32(0))),
            Node.let_bind("group_zero_point", Expr.subgroup_shuffle(Expr.var("zero_point_lane"), Expr.u32(0))),
            Node.loop_for("group_chunk", Expr.u32(0), Expr.u32(group_size // tile),
                          word_broadcast(Expr.add(group_base, Expr.mul(Expr.var("group_chunk"), Expr.u32(tile))))
                          + [accumulate]),
        ]))
    else:
        chunk_base = Expr.mul(Expr.var("chunk"), Expr.u32(tile))
        per_output.append(Node.loop_for("chunk", Expr.u32(0), Expr.u32(chunks), word_broadcast(chunk_base) + [
            Node.let_bind("sidecar_idx", Expr.add(Expr.mul(Expr.div(k, Expr.u32(group_size)), Expr.u32(out_dim)), out_idx)),
            Node.let_bind("group_scale", Expr.load(scale, Expr.var("sidecar_idx"))),
            Node.let_bind("group_zero_point", Expr.load(zero_point, Expr.var("sidecar_idx"))),
            accumulate,
        ]))
    per_output += [
        Node.let_bind("warp_sum", Expr.subgroup_add(Expr.var("local_acc"))),
        Node.if_then(Expr.eq(lane, Expr.u32(0)),
                     [Node.store(out, out_idx, Expr.add(Expr.load(b, out_idx), Expr.var("warp_sum")))]),
    ]
    local = Expr.var("local")
    body = [
        Node.let_bind("local", Expr.local_x()),
        Node.let_bind("warp", Expr.div(local, Expr.u32(LANES_PER_OUTPUT))),
        Node.let_bind("lane", Expr.rem(local, Expr.u32(LANES_PER_OUTPUT))),
        Node.loop_for("warp_output", Expr.u32(0), Expr.u32(OUTPUTS_PER_WARP), [
            Node.let_bind("out_idx", Expr.add(
                Expr.add(Expr.mul(Expr.workgroup_x(), Expr.u32(OUTPUTS_PER_WORKGROUP)),
                         Expr.mul(Expr.var("warp_output"), Expr.u32(WARPS_PER_WORKGROUP))),
                Expr.var("warp"))),
            Node.if_then(Expr.lt(out_idx, Expr.u32(out_dim)), per_output),
        ]),
    ]
    padded = -(-out_dim // OUTPUTS_PER_WORKGROUP) * WORKGROUP
    if padded > 0xFFFFFFFF:
        raise OpParamError("Fix: linear_4bit_affine_grouped output workgroups overflow u32; reduce dimensions.")
    return Program.wrapped(
        [ro_decl(x, 0, in_dim), ro_decl(w_packed, 1, words, DataType.U32), ro_decl(scale, 2, sidecars),
         ro_decl(zero_point, 3, sidecars, DataType.U32), ro_decl(b, 4, out_dim),
         out_decl(out, 5, padded).with_output_byte_range(0, out_dim * 4)],
        (WORKGROUP, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(in_dim: int = 8, out_dim: int = 2, group_size: int = 4) -> Program:
    return linear_4bit_affine_grouped("x", "w", "scale", "zp", "b", "out", in_dim, out_dim, group_size)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]),
                          pack_u32_slice([0x87654321, 0x00000000]),
                          pack_f32_slice([0.5, 1.0, 2.0, 1.0]),
                          pack_u32_slice([1, 0, 4, 0]),
                          pack_f32_slice([0.0, 3.0])]],
    # out[0] = sum_{k<4} k1*(code-1)*0.5 + sum_{k>=4} k1*(code-4)*2 = 10 + 140 = 150 (code = k+1); out[1] = 0 + b = 3
    expected_output=lambda: [[pack_f32_slice([150.0, 3.0])]],
    category="nn", ulp=ULP,
    bench=dict(in_dim=4096, out_dim=4096, group_size=128),
)
