"""vyre-libs matching ops (vyre-libs/src/scan: dfa/, hit_buffer.rs); importing registers them."""
from . import aho_corasick, cooperative_dfa, hit_buffer  # noqa: F401
