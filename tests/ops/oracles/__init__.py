"""Independent NumPy oracles of every registered op, keyed by op id in ``ORACLES``.

Each ``<area>_<group>.py`` module registers the oracles of the ops whose builders live in
``vyre_vk/ops/<area>/<group>`` (a package or a module), e.g. ``nn::softmax`` (built in
vyre_vk/ops/nn/attention/softmax.py) in ``nn_attention.py``; tests/ops/test_registry.py checks
that layout. See core.py for what an oracle returns.

Example::

    >>> spec = ORACLES["vyre-libs::nn::silu"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> value, scale = spec.numpy(ins, spec.params)["output"]
"""
from . import (math_algebra, math_atomic, math_broadcast, math_conv, math_fft, math_linalg,  # noqa: F401
               math_reduce_variance, math_succinct, nn_activation, nn_attention, nn_backward, nn_linear, nn_moe,
               nn_norm, nn_optim, nn_quant)
from . import (logical_binary, math_avg_floor, math_bit_count_ops, math_clamp_u32,  # noqa: F401
               math_reduce_mean, math_scan, math_square, math_weighted_sum, math_wrapping_neg,
               representation_unpack, substrate_catalog)
from . import (decode_base64, decode_encodex, decode_hex, decode_inflate, hash_adler32,  # noqa: F401
               hash_blake3_compress, hash_crc32, hash_fnv1a32, hash_fnv1a64, hash_multi_hash)
from . import (visual_blur, visual_box_shadow, visual_composite, visual_downsample,  # noqa: F401
               visual_filter_chain, visual_glass, visual_gradient, visual_upsample)
# [visual oracles]
from . import (security_aliases_dataflow, security_catalog, security_label_by_family,  # noqa: F401
               security_path_reconstruct)
# [security oracles]
from . import (graph_ast_walk, matching_aho_corasick, matching_cooperative_dfa,  # noqa: F401
               matching_hit_buffer, scan_substring)
# [matching oracles]
from . import parsing_c, parsing_delimiter, parsing_python  # noqa: F401
# [parsing oracles]
from . import parsing_core_ast  # noqa: F401
# [parsing-py oracles]
# [parsing-c11 oracles]
from . import parsing_sema  # noqa: F401
# [parsing-sema oracles]
from . import security_fixpoint_hit, security_fixpoint_reach  # noqa: F401
# [convergence oracles]
from .core import ORACLES, Oracle, oracle

__all__ = ["ORACLES", "Oracle", "oracle"]
