"""Issue 13: the SPIR-V cache is verified and bounded.

A disk entry that is corrupt, truncated, another key's module, not a regular file or
unreadable is discarded with a CacheWarning and recompiled — never used, never fatal;
the in-memory layer and the disk folder stay under their byte caps.
"""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from vyre_vk import spirv
from vyre_vk.compile import clear_cache as clear_compile_cache
from vyre_vk.errors import CacheWarning
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.runtime import Device

U32 = DataType.U32


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "spirv-cache"
    monkeypatch.setenv("VYRE_VK_CACHE_DIR", str(root))
    monkeypatch.delenv("VYRE_VK_CACHE_MAX_BYTES", raising=False)
    monkeypatch.delenv("VYRE_VK_SPIRV_MEMORY_CACHE_BYTES", raising=False)
    spirv.clear_memory_cache()
    yield root
    spirv.clear_memory_cache()


def glsl(k: int) -> str:
    """A shader per k whose module differs (the constant is in the code, not a comment)."""
    return ("#version 450\nlayout(local_size_x = 1) in;\n"
            "layout(std430, binding = 0) buffer Out { uint v[]; } o;\n"
            f"void main() {{ o.v[0] = {k + 1000}u; }}\n")


def entry_of(root: Path, source: str) -> Path:
    key = spirv.cache_key(source, "vulkan1.1", "performance")
    (path,) = (root / key[:2]).glob(f"{key}.*.spv")
    return path


def recompiles(source: str, expected: bytes, *, warns: bool = True) -> None:
    """compile_glsl(source) runs shaderc again, returns ``expected`` and leaves a good entry."""
    spirv.clear_memory_cache()
    calls, discarded = spirv.stats.shaderc_calls, spirv.stats.discarded
    if warns:
        with pytest.warns(CacheWarning, match="discarded SPIR-V cache entry"):
            words = spirv.compile_glsl(source)
        assert spirv.stats.discarded > discarded
    else:
        words = spirv.compile_glsl(source)
    assert words == expected
    assert spirv.stats.shaderc_calls == calls + 1
    path = entry_of(spirv.cache_dir(), source)
    assert path.is_file() and not path.is_symlink() and path.read_bytes() == expected
    spirv.clear_memory_cache()
    hits = spirv.stats.disk_hits
    assert spirv.compile_glsl(source) == expected and spirv.stats.disk_hits == hits + 1


def program(k: int) -> Program:
    i = Expr.gid_x()
    return Program.wrapped([BufferDecl.read("a", 0, U32).with_count(64), BufferDecl.output("out", 1, U32).with_count(64)],
                           (64, 1, 1), [wrap_anonymous(f"cache{k}", [Node.store("out", i, Expr.add(Expr.load("a", i), Expr.u32(k)))])])


def entry_holding(root: Path, words: bytes) -> Path:
    """The entry a kernel's module came from (however Device.compile lowered the program)."""
    (path,) = [p for p in root.rglob("*.spv") if p.read_bytes() == words]
    return path


@pytest.mark.parametrize("how", ["copied_over", "renamed_over"])
def test_poisoned_entry_is_discarded_and_recompiled(cache, how):
    a, b = spirv.compile_glsl(glsl(1)), spirv.compile_glsl(glsl(2))
    assert a != b
    pa, pb = entry_of(cache, glsl(1)), entry_of(cache, glsl(2))
    if how == "copied_over":
        shutil.copyfile(pb, pa)
    else:   # B's whole file, its digest name included, moved under A's key
        pa.unlink()
        os.replace(pb, pa.with_name(pa.name.split(".")[0] + "." + pb.name.split(".", 1)[1]))
    recompiles(glsl(1), a)


def test_poisoned_cache_end_to_end_each_program_gets_its_own_result(cache):
    x = np.arange(64, dtype=np.uint32)
    with Device() as dev:
        k1, k2 = dev.compile(program(1)), dev.compile(program(2))
        assert (k1.run({"a": x})["out"] == x + 1).all() and (k2.run({"a": x})["out"] == x + 2).all()
        assert k1.spirv != k2.spirv
    shutil.copyfile(entry_holding(cache, k2.spirv), entry_holding(cache, k1.spirv))
    spirv.clear_memory_cache()
    clear_compile_cache()  # the compile front door's cache would answer without reading SPIR-V
    with Device() as dev, pytest.warns(CacheWarning):
        assert (dev.compile(program(1)).run({"a": x})["out"] == x + 1).all()


def _magic_and_garbage(words: bytes, plausible_header: bool = False) -> bytes:
    """The SPIR-V magic, then seeded random bytes (this segfaulted lavapipe's createComputePipeline
    when the cache used it), or a plausible header followed by zero-count instructions."""
    if plausible_header:
        return spirv.SPIRV_MAGIC + struct.pack("<4I", 0x00010300, 0, 64, 0) + b"\0" * (len(words) - 20)
    return spirv.SPIRV_MAGIC + np.random.default_rng(0).integers(0, 256, len(words) - 4, np.uint8).tobytes()


@pytest.mark.parametrize("plausible_header", [False, True])
def test_magic_followed_by_garbage_is_discarded(cache, plausible_header):
    good = spirv.compile_glsl(glsl(3))
    path = entry_of(cache, glsl(3))
    bad = _magic_and_garbage(good, plausible_header)
    path.write_bytes(bad)
    recompiles(glsl(3), good)
    # Even under a name whose digest matches, the module check rejects it.
    key = path.name.split(".")[0]
    path.unlink()
    forged = path.with_name(f"{key}.{spirv.entry_tag(key, bad)}.spv")
    forged.write_bytes(bad)
    recompiles(glsl(3), good)
    assert not forged.exists()


def test_magic_and_garbage_entry_does_not_crash_a_fresh_process(cache):
    # In a child process: a regression here is a segfault in the driver, not a failed assert.
    code = textwrap.dedent("""
        import sys, warnings, numpy as np
        sys.path.insert(0, sys.argv[1])
        from test_spirv_cache import program, entry_holding, _magic_and_garbage
        from vyre_vk import spirv
        from vyre_vk.compile import clear_cache
        from vyre_vk.runtime import Device
        from pathlib import Path
        root, p = spirv.cache_dir(), program(5)
        with Device() as dev:
            path = entry_holding(root, dev.compile(p).spirv)
        bad = _magic_and_garbage(path.read_bytes())
        key = path.name.split(".")[0]
        path.unlink()
        path.with_name(f"{key}.{spirv.entry_tag(key, bad)}.spv").write_bytes(bad)
        spirv.clear_memory_cache()
        clear_cache()  # the compile front door's cache would answer without reading SPIR-V
        x = np.arange(64, dtype=np.uint32)
        with Device() as dev, warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = dev.compile(p).run({"a": x})["out"]
        print(bool((out == x + 5).all()), any("discarded" in str(m.message) for m in w))
    """)
    env = {**os.environ, "VYRE_VK_CACHE_DIR": str(cache)}
    res = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == ["True", "True"]


def test_truncated_entry_is_discarded(cache):
    good = spirv.compile_glsl(glsl(4))
    entry_of(cache, glsl(4)).write_bytes(good[: len(good) // 2])
    recompiles(glsl(4), good)


def test_empty_entry_is_discarded(cache):
    good = spirv.compile_glsl(glsl(5))
    entry_of(cache, glsl(5)).write_bytes(b"")
    recompiles(glsl(5), good)


def test_symlink_to_dev_zero_is_not_read(cache):
    good = spirv.compile_glsl(glsl(6))
    path = entry_of(cache, glsl(6))
    path.unlink()
    path.symlink_to("/dev/zero")
    t0 = time.monotonic()
    recompiles(glsl(6), good)
    assert time.monotonic() - t0 < 30


def test_fifo_in_place_of_entry_does_not_hang(cache):
    good = spirv.compile_glsl(glsl(7))
    path = entry_of(cache, glsl(7))
    path.unlink()
    os.mkfifo(path)
    recompiles(glsl(7), good)


def test_directory_in_place_of_entry_is_discarded(cache):
    good = spirv.compile_glsl(glsl(8))
    path = entry_of(cache, glsl(8))
    path.unlink()
    path.mkdir()
    (path / "inner").write_bytes(b"x")
    recompiles(glsl(8), good)


def test_cache_dir_that_is_a_file_is_not_fatal(tmp_path, monkeypatch):
    # chmod 000 does not stop root; a regular file where the folder should be is unusable for everyone.
    blocker = tmp_path / "not-a-dir"
    blocker.write_bytes(b"in the way")
    monkeypatch.setenv("VYRE_VK_CACHE_DIR", str(blocker))
    spirv.clear_memory_cache()
    calls = spirv.stats.shaderc_calls
    with pytest.warns(CacheWarning, match="not usable"):
        good = spirv.compile_glsl(glsl(9))
    spirv.clear_memory_cache()
    assert spirv.compile_glsl(glsl(9)) == good      # recompiled, no error
    assert spirv.stats.shaderc_calls == calls + 2
    assert blocker.read_bytes() == b"in the way"
    spirv.clear_memory_cache()


def test_memory_cache_is_an_lru_bounded_by_bytes(cache, monkeypatch):
    size = len(spirv.compile_glsl(glsl(100)))
    cap = 3 * size + size // 2
    monkeypatch.setenv("VYRE_VK_SPIRV_MEMORY_CACHE_BYTES", str(cap))
    spirv.clear_memory_cache()
    evictions = spirv.stats.memory_evictions
    for k in range(100, 120):
        spirv.compile_glsl(glsl(k))
        info = spirv.cache_info()
        assert info.memory_bytes <= cap and info.memory_max_bytes == cap
    assert spirv.cache_info().memory_entries == 3
    assert spirv.stats.memory_evictions - evictions == 17
    hits, disk = spirv.stats.memory_hits, spirv.stats.disk_hits
    spirv.compile_glsl(glsl(119))      # recent: still in memory
    spirv.compile_glsl(glsl(100))      # oldest: evicted, back from disk
    assert (spirv.stats.memory_hits, spirv.stats.disk_hits) == (hits + 1, disk + 1)


def test_disk_cache_is_capped_evicting_least_recently_used(cache, monkeypatch):
    sizes = [len(spirv.compile_glsl(glsl(k))) for k in range(200, 205)]
    cap = sum(sizes) + max(sizes) // 2                  # five entries fit, a sixth does not
    monkeypatch.setenv("VYRE_VK_CACHE_MAX_BYTES", str(cap))
    old = time.time() - 1000
    for k in range(200, 205):                           # distinct, increasing last-use times
        os.utime(entry_of(cache, glsl(k)), (old + k, old + k))
    spirv.clear_memory_cache()
    spirv.compile_glsl(glsl(200))                       # a disk hit refreshes 200's last use
    evictions = spirv.stats.disk_evictions
    for k in range(205, 230):
        spirv.compile_glsl(glsl(k))
        info = spirv.cache_info()
        assert info.bytes <= cap and info.max_bytes == cap, (k, info)
        if k == 205:
            assert entry_of(cache, glsl(200)).exists()   # recently used: kept
            assert not list(cache.rglob(spirv.cache_key(glsl(201), "vulkan1.1", "performance") + ".*"))
    assert spirv.stats.disk_evictions > evictions


def test_writes_are_atomic_and_leave_no_temp_files(cache, monkeypatch):
    for k in range(300, 305):
        spirv.compile_glsl(glsl(k))
    assert not list(cache.rglob("*.tmp")) and len(list(cache.rglob("*.spv"))) == 5

    def fail(*_args, **_kw):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", fail)
    with pytest.warns(CacheWarning, match="not usable"):
        words = spirv.compile_glsl(glsl(305))     # the store fails; the compile does not
    monkeypatch.undo()
    assert words[:4] == spirv.SPIRV_MAGIC
    assert not list(cache.rglob("*.tmp")) and len(list(cache.rglob("*.spv"))) == 5


def test_stale_temp_files_are_swept_and_clear_disk_cache_empties(cache):
    spirv.compile_glsl(glsl(400))
    stale = entry_of(cache, glsl(400)).parent / ".deadbeef.abc.tmp"
    stale.write_bytes(b"half a module")
    os.utime(stale, (time.time() - 2 * 3600,) * 2)
    spirv.clear_disk_cache()
    assert not stale.exists() and not list(cache.rglob("*.spv"))
    assert spirv.cache_info().entries == 0


def test_bad_cap_env_value_warns_and_uses_default(cache, monkeypatch):
    monkeypatch.setenv("VYRE_VK_CACHE_MAX_BYTES", "lots")
    with pytest.warns(CacheWarning, match="VYRE_VK_CACHE_MAX_BYTES"):
        assert spirv.disk_cache_max_bytes() == spirv.DEFAULT_DISK_CACHE_BYTES
