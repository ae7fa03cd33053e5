from . import activation, backward, linear, norm  # noqa: F401  (registers the nn ops)
