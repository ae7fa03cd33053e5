"""Run compiled programs on a Vulkan device through Kompute."""
from vyre_vk.runtime.device import Device, DeviceError, LoopProbe

__all__ = ["Device", "DeviceError", "LoopProbe"]
