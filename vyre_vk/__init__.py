"""vyre-vk: run vyre IR programs on Vulkan devices from Python.

The pipeline: Program (vyre_vk.ir) -> validate -> optimise -> GLSL 450
(vyre_vk.lower) -> SPIR-V (vyre_vk.spirv, in-process shaderc) -> Kompute
(vyre_vk.runtime), with a NumPy reference evaluator (vyre_vk.reference) as the
oracle for every result.
"""
__version__ = "0.1.0"
