"""vyre-libs nn/quant (ids ``vyre-libs::quant::*``, category "nn"); importing registers them."""
from . import byte_shuffle, gptq, int4, int6, int8, pack  # noqa: F401
