"""vyre-libs visual ops (vyre-libs/src/visual): packed RGBA u32 pixel compositions; importing
registers them."""
from . import blur, box_shadow, composite, downsample, filter_chain, glass, gradient, upsample  # noqa: F401
