"""GLSL -> SPIR-V, in-process through pyshaderc, with a verified, bounded cache.

pyshaderc's own ``compile_into_spirv`` hard-codes a Vulkan 1.0 target, which
rules out subgroup operations, and offers no 'performance' level, so this
module drives the same shaderc C API through ``pyshaderc.lib`` with the target
environment and optimisation level as options.

Compiled modules are cached in memory and on disk, keyed by :func:`cache_key`, verified on
every read and bounded in size: vyre_vk.spirv_cache (whose public names this module re-exports).

Example:
    >>> from vyre_vk.spirv import compile_glsl
    >>> words = compile_glsl("#version 450\\nlayout(local_size_x = 1) in;\\nvoid main() {}\\n")
    >>> words[:4] == b"\\x03\\x02\\x23\\x07"   # SPIR-V magic, little-endian
    True
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pyshaderc
from pyshaderc import ffi, lib

from vyre_vk.errors import VyreError
from vyre_vk.spirv_cache import (DEFAULT_DISK_CACHE_BYTES, DEFAULT_MEMORY_CACHE_BYTES, MAX_ENTRY_BYTES,  # noqa: F401
                                 SPIRV_MAGIC, CacheInfo, CompileStats, MiB, cache_dir, cache_info, clear_disk_cache,
                                 clear_memory_cache, count, disk_cache_max_bytes, disk_get, disk_put, entry_tag,
                                 memory_cache_max_bytes, memory_get, memory_put, stats)

_TARGET_ENVS = {
    "vulkan1.0": lib.shaderc_env_version_vulkan_1_0,
    "vulkan1.1": lib.shaderc_env_version_vulkan_1_1,
    "vulkan1.2": lib.shaderc_env_version_vulkan_1_2,
    "vulkan1.3": lib.shaderc_env_version_vulkan_1_3,
}
_OPT_LEVELS = {
    "zero": lib.shaderc_optimization_level_zero,
    "size": lib.shaderc_optimization_level_size,
    "performance": lib.shaderc_optimization_level_performance,
}


class ShaderCompileError(VyreError, RuntimeError):
    """shaderc rejected a GLSL source. ``.log`` is shaderc's text, ``.source`` the GLSL."""

    def __init__(self, log: str, source: str, name: str) -> None:
        self.log = log
        self.source = source
        self.name = name
        super().__init__(f"shaderc could not compile {name}:\n{log.strip()}\n"
                         "Fix: this is a vyre-vk lowering bug for a valid program; "
                         "report it with the GLSL (error.source).")


class SpirvOptionError(VyreError, ValueError):
    """compile_glsl was given an unknown target environment or optimisation level."""


_compiler_id: str | None = None


def compiler_id() -> str:
    """Identifies the exact shaderc build: the compiled CFFI module's hash."""
    global _compiler_id
    if _compiler_id is None:
        module = Path(pyshaderc._pyshaderc.__file__)  # type: ignore[attr-defined]
        version = ffi.new("unsigned int *")
        revision = ffi.new("unsigned int *")
        lib.shaderc_get_spv_version(version, revision)
        digest = hashlib.sha256(module.read_bytes()).hexdigest()[:16]
        _compiler_id = f"pyshaderc-{pyshaderc.__version__}-spv{version[0]:x}.{revision[0]}-{digest}"
    return _compiler_id


def _shaderc(source: bytes, name: str, target_env: str, optimization: str) -> bytes:
    options = lib.shaderc_compile_options_initialize()
    compiler = lib.shaderc_compiler_initialize()
    result = ffi.NULL
    try:
        lib.shaderc_compile_options_set_source_language(options, lib.shaderc_source_language_glsl)
        lib.shaderc_compile_options_set_optimization_level(options, _OPT_LEVELS[optimization])
        lib.shaderc_compile_options_set_target_env(options, lib.shaderc_target_env_vulkan,
                                                   _TARGET_ENVS[target_env])
        result = lib.shaderc_compile_into_spv(compiler, source, len(source),
                                              lib.shaderc_glsl_compute_shader,
                                              name.encode(), b"main", options)
        status = lib.shaderc_result_get_compilation_status(result)
        if status != lib.shaderc_compilation_status_success:
            log = ffi.string(lib.shaderc_result_get_error_message(result)).decode(errors="replace")
            raise ShaderCompileError(log, source.decode(errors="replace"), name)
        length = lib.shaderc_result_get_length(result)
        return bytes(ffi.buffer(lib.shaderc_result_get_bytes(result), length))
    finally:
        if result != ffi.NULL:
            lib.shaderc_result_release(result)
        lib.shaderc_compiler_release(compiler)
        lib.shaderc_compile_options_release(options)


def cache_key(source: str, target_env: str, optimization: str) -> str:
    h = hashlib.sha256()
    for part in (compiler_id(), target_env, optimization, source):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def compile_glsl(source: str, *, name: str = "vyre.comp", target_env: str = "vulkan1.1",
                 optimization: str = "performance", cache: bool = True) -> bytes:
    """Compile a GLSL 450 compute shader to SPIR-V bytes (little-endian words).

    ``target_env`` is one of vulkan1.0..vulkan1.3 (1.1 = SPIR-V 1.3, the first
    with subgroup operations); ``optimization`` is zero, size or performance.
    Raises ShaderCompileError with shaderc's message on invalid GLSL.
    """
    if target_env not in _TARGET_ENVS:
        raise SpirvOptionError(f"unknown target_env {target_env!r}. Fix: use one of {sorted(_TARGET_ENVS)}.")
    if optimization not in _OPT_LEVELS:
        raise SpirvOptionError(f"unknown optimization {optimization!r}. Fix: use one of {sorted(_OPT_LEVELS)}.")
    if not cache:
        count("shaderc_calls")
        return _shaderc(source.encode(), name, target_env, optimization)

    key = cache_key(source, target_env, optimization)
    hit = memory_get(key)
    if hit is not None:
        return hit
    root = cache_dir()
    blob = disk_get(root, key)
    if blob is not None:
        count("disk_hits")
        memory_put(key, blob)
        return blob

    blob = _shaderc(source.encode(), name, target_env, optimization)
    count("shaderc_calls")
    memory_put(key, blob)
    disk_put(root, key, blob)
    return blob


__all__ = ["compile_glsl", "cache_key", "compiler_id", "ShaderCompileError", "SpirvOptionError", "SPIRV_MAGIC",
           "CompileStats", "CacheInfo", "stats", "cache_dir", "cache_info", "clear_disk_cache", "clear_memory_cache",
           "memory_cache_max_bytes", "disk_cache_max_bytes", "entry_tag", "MAX_ENTRY_BYTES",
           "DEFAULT_MEMORY_CACHE_BYTES", "DEFAULT_DISK_CACHE_BYTES", "MiB"]
