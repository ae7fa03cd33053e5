"""vyre-libs nn/optim (ids ``vyre-libs::optim::*``, category "nn"); importing registers them."""
from . import adamw_step, ema_apply, muon_update, muoneq_r, newton_schulz  # noqa: F401
