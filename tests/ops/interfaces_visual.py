"""Interface rows of the visual ops (vyre-libs/src/visual; vyre_vk/ops/visual), merged into
tests/ops/interfaces.py. Every written pixel buffer is plain ReadWrite storage in vyre (not
BufferDecl::output), so its bytes are an input too. The registered blur and glass programs are the
horizontal pass, which writes the scratch buffer."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO, RW = A.ReadOnly, A.ReadWrite
_V = "vyre-libs::visual::"
_WG = (256, 1, 1)
_MAP = "vyre-primitives::visual::packed_rgba_map"

INTERFACE = {
    _V + "blur": (_WG, [("input", 0, RO, T.U32, 16), ("scratch", 1, RW, T.U32, 16)]),
    _V + "box_shadow": (_WG, [("out", 0, RW, T.U32, 64)]),
    _V + "composite": (_WG, [("fg", 0, RO, T.U32, 2), ("bg", 1, RO, T.U32, 2), ("out", 2, RW, T.U32, 2)]),
    _V + "downsample": (_WG, [("input", 0, RO, T.U32, 16), ("output", 1, RW, T.U32, 4)]),
    _V + "filter_chain": (_WG, [("pixels", 0, RW, T.U32, 4)]),
    _V + "glass": (_WG, [("scene", 0, RO, T.U32, 16), ("scratch", 1, RW, T.U32, 16)]),
    _V + "gradient": (_WG, [("output", 0, RW, T.U32, 4)]),
    _V + "upsample": (_WG, [("input", 0, RO, T.U32, 4), ("output", 1, RW, T.U32, 16)]),
}
CHILD_REGIONS = {
    _V + "blur": ("vyre-primitives::math::conv1d", _V + "blur"),
    _V + "composite": (_MAP, _V + "composite"),
    _V + "filter_chain": (_MAP, _V + "filter_chain"),
    _V + "gradient": (_MAP, _V + "gradient"),
    # tag_program re-parents the blur pass's own Region under glass
    _V + "glass": (_V + "blur", _V + "glass"),
}
CATEGORY = {_V + op: "visual" for op in ("blur", "box_shadow", "composite", "downsample", "filter_chain", "glass",
                                         "gradient", "upsample")}
