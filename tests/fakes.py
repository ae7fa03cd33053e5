"""Stand-ins the tests share."""


class ManagerWith:
    """A kp.Manager whose get_device_properties() reports ``props`` over the device's own (a device
    without shaderFloat64, without 8-bit storage, ...); everything else passes through."""

    def __init__(self, mgr, **props):
        self._mgr, self._props = mgr, props

    def get_device_properties(self):
        return {**self._mgr.get_device_properties(), **self._props}

    def __getattr__(self, name):
        return getattr(self._mgr, name)
