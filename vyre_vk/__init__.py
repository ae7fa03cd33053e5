"""vyre-vk: run vyre IR programs on Vulkan devices from Python.

The pipeline: Program (vyre_vk.ir) -> validate -> optimise -> GLSL 450
(vyre_vk.lower) -> SPIR-V (vyre_vk.spirv, in-process shaderc) -> Kompute
(vyre_vk.runtime), with a NumPy reference evaluator (vyre_vk.reference) as the
oracle for every result.
"""
__version__ = "0.1.0"


__all__ = ["run", "__version__"]


def __getattr__(name: str):
    """``vyre_vk.run`` (vyre_vk.runtime.run: run a Program on the default Vulkan device) is
    imported on first use, so ``import vyre_vk`` stays free of kp and the device (PEP 562)."""
    if name == "run":
        from vyre_vk.runtime import run
        globals()["run"] = run  # later lookups are plain module attributes
        return run
    raise AttributeError(f"module 'vyre_vk' has no attribute {name!r}")
