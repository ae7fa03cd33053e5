from . import mlp_backward  # noqa: F401
