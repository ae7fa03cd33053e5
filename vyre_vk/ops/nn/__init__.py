from . import activation, backward, linear, norm  # noqa: F401  (registers the nn ops)
from . import optim  # noqa: F401  (nn/optim, ported in ops3)
