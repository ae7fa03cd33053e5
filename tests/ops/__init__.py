"""Op conformance tests. The oracle table loads first: the per-batch oracle modules import
``oracles`` and it imports them at its end, so starting anywhere else would be circular."""
from . import oracles  # noqa: F401
