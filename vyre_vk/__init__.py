"""vyre-vk: run vyre IR programs on Vulkan devices from Python.

The pipeline: Program (vyre_vk.ir) -> validate -> optimise -> GLSL 450
(vyre_vk.lower) -> SPIR-V (vyre_vk.spirv, in-process shaderc) -> Kompute
(vyre_vk.runtime), with a NumPy reference evaluator (vyre_vk.reference) as the
oracle for every result.
"""
__version__ = "0.1.0"


def run(program, inputs=None, **kwargs):
    """Run ``program`` on the default Vulkan device: ``vyre_vk.run(p, {"a": a})["out"]``.

    A repeated call with the same Program object costs one dictionary lookup over
    ``Kernel.run`` (no hashing, no validation)."""
    global run
    from vyre_vk.runtime import run as _run
    run = _run  # later calls skip this import
    return _run(program, inputs, **kwargs)
