from . import backward  # noqa: F401  (registers the nn ops)
