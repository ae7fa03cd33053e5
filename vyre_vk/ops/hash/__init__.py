"""vyre-libs hash ops (vyre-libs/src/hash); importing registers them."""
from . import adler32, blake3_compress, crc32, fnv1a32, fnv1a64, multi_hash  # noqa: F401
