"""vyre-libs math::atomic (vyre-libs/src/math/atomic); importing registers them.

The seven serial ops and the compare-exchange op walk their input with one invocation
(``if gid.x == 0 { for i < buf_len(values): old = atomic(state[0], values[i]); trace[i] = old }``),
so every backend gives the same bytes.
"""
from . import atomic_compare_exchange, atomic_lru_update, serial  # noqa: F401
