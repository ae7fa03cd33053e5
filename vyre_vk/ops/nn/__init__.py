from . import activation, backward, linear, norm  # noqa: F401  (registers the nn ops)
from . import optim, quant  # noqa: F401  (nn/optim, nn/quant: ported in ops3)
