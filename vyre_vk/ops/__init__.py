"""Registered ops (vyre-libs ports) and the byte-packing helpers their vectors use."""
from .registry import OpEntry, all_ops, builder_params, get, register, register_op
from .wire import (pack_bytes_as_u32_slice, pack_f32_slice, pack_i32_slice, pack_u32_slice,
                   unpack_f32_slice, unpack_i32_slice, unpack_u32_slice)

__all__ = ["OpEntry", "register", "register_op", "builder_params", "get", "all_ops", "pack_f32_slice",
           "pack_u32_slice", "pack_i32_slice", "pack_bytes_as_u32_slice",
           "unpack_f32_slice", "unpack_u32_slice", "unpack_i32_slice"]
