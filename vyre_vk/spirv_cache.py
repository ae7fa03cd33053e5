"""The SPIR-V cache behind :func:`vyre_vk.spirv.compile_glsl`: verified, bounded, two layers.

The key is sha256 of the compiler build, target env, optimisation level and GLSL text
(:func:`vyre_vk.spirv.cache_key`). Two layers:

- in memory: an LRU bounded by bytes, 64 MiB by default
  (``VYRE_VK_SPIRV_MEMORY_CACHE_BYTES``; 0 turns it off);
- on disk: ``$VYRE_VK_CACHE_DIR``, else ``$XDG_CACHE_HOME/vyre-vk/spirv``, else
  ``~/.cache/vyre-vk/spirv``; entries total at most 256 MiB by default
  (``VYRE_VK_CACHE_MAX_BYTES``; 0 turns storing off). When a store takes the
  total over the cap, least-recently-used entries (mtime, refreshed on every
  hit) are deleted down to 90% of it. The total is tracked in-process; the
  folder is rescanned only on a process's first store, when the total may
  exceed the cap, and every 64 stores (to see other processes' writes).

A disk entry is ``<dir>/<key[:2]>/<key>.<tag>.spv``: the file holds the raw
module (so spirv-dis reads it as is; the check lives in the name), and ``tag = sha256(format version || key || module)`` binds it to the
key it was compiled for. An entry is used only if it is a regular file (not
followed through a symlink) of at most 64 MiB whose tag matches and whose
instruction stream is well formed; anything else (corrupt, truncated, another
key's module, a symlink, a directory, unreadable) is deleted where possible
and recompiled with a ``CacheWarning``, never used and never fatal. An
unusable cache folder only costs recompiles (one warning per process).
Deleting the folder is always safe; ``clear_disk_cache()`` does it.

vyre_vk.spirv re-exports the public names (cache_dir, cache_info, clear_*, stats, ...).

Example::

    >>> valid_spirv(b"not a module")
    False
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
import warnings
from array import array
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from vyre_vk.errors import CacheWarning

SPIRV_MAGIC = b"\x03\x02\x23\x07"
MiB = 1 << 20
DEFAULT_MEMORY_CACHE_BYTES = 64 * MiB
DEFAULT_DISK_CACHE_BYTES = 256 * MiB
MAX_ENTRY_BYTES = 64 * MiB          # no real module comes near; bounds a read of a hostile file
_EVICT_TO = 0.9                     # of the cap, so eviction is not rerun on every store
_RESCAN_EVERY = 64                  # stores between scans: catches other processes' writes
_STALE_TMP_S = 3600                 # a temp file this old belongs to a writer that died
_FORMAT = b"vyre-vk-spirv-cache-v1\0"
_ENTRY_RE = re.compile(r"^([0-9a-f]{64})\.([0-9a-f]{64})\.spv$")
_LEGACY_RE = re.compile(r"^[0-9a-f]{64}\.spv$")   # unverified raw entries of earlier versions


@dataclass
class CompileStats:
    """Counters for tests and the benchmark: how often shaderc really ran, what the caches did."""
    shaderc_calls: int = 0
    memory_hits: int = 0
    disk_hits: int = 0
    discarded: int = 0           # disk entries rejected (and deleted where possible)
    memory_evictions: int = 0
    disk_evictions: int = 0


@dataclass(frozen=True)
class CacheInfo:
    """What ``cache_info()`` reports: the disk folder and both layers' sizes and caps, in bytes."""
    dir: Path
    entries: int
    bytes: int
    max_bytes: int
    memory_entries: int
    memory_bytes: int
    memory_max_bytes: int


stats = CompileStats()
_lock = threading.Lock()             # stats and the memory LRU
_disk_lock = threading.Lock()        # the per-folder size accounting and scans
_memory: "OrderedDict[str, bytes]" = OrderedDict()
_memory_bytes = 0
_disk_state: dict[str, list[int]] = {}   # folder -> [approximate total or -1, stores since scan]
_warned: set[str] = set()                # one-per-process warnings already given


def cache_dir() -> Path:
    """Where compiled SPIR-V is kept between processes."""
    env = os.environ.get("VYRE_VK_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vyre-vk" / "spirv"


def _warn_once(tag: str, message: str) -> None:
    with _lock:
        if tag in _warned:
            return
        _warned.add(tag)
    warnings.warn(message, CacheWarning, stacklevel=3)


def _env_bytes(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
        if value >= 0:
            return value
    except ValueError:
        pass
    _warn_once(f"env:{name}={raw}", f"{name}={raw!r} is not a byte count; using {default}. "
               f"Fix: set {name} to a non-negative integer (0 disables that cache).")
    return default


def memory_cache_max_bytes() -> int:
    return _env_bytes("VYRE_VK_SPIRV_MEMORY_CACHE_BYTES", DEFAULT_MEMORY_CACHE_BYTES)


def disk_cache_max_bytes() -> int:
    return _env_bytes("VYRE_VK_CACHE_MAX_BYTES", DEFAULT_DISK_CACHE_BYTES)


def entry_tag(key: str, module: bytes) -> str:
    """The digest in an entry's file name: binds the module to the key it was compiled for."""
    return hashlib.sha256(_FORMAT + bytes.fromhex(key) + module).hexdigest()


def valid_spirv(blob: bytes) -> bool:
    """Header and instruction stream well formed: what a driver parses before anything else."""
    if len(blob) < 20 or len(blob) % 4 or blob[:4] != SPIRV_MAGIC:
        return False
    words = array("I", blob)
    if sys.byteorder != "little":
        words.byteswap()
    if words[1] >> 24 or (words[1] >> 16) & 0xFF != 1 or words[3] == 0 or words[4] != 0:
        return False                 # version 1.x, non-zero id bound, reserved schema 0
    i, n = 5, len(words)
    while i < n:
        count = words[i] >> 16       # each instruction's first word: word count << 16 | opcode
        if count == 0 or i + count > n:
            return False
        i += count
    return True


def count(counter: str) -> None:
    """Add one to ``stats.<counter>`` (thread-safe)."""
    with _lock:
        setattr(stats, counter, getattr(stats, counter) + 1)


# ---- memory layer ----

def memory_get(key: str) -> bytes | None:
    with _lock:
        hit = _memory.get(key)
        if hit is not None:
            _memory.move_to_end(key)
            stats.memory_hits += 1
        return hit


def memory_put(key: str, blob: bytes) -> None:
    global _memory_bytes
    cap = memory_cache_max_bytes()
    with _lock:
        old = _memory.pop(key, None)
        if old is not None:
            _memory_bytes -= len(old)
        if len(blob) > cap:
            return
        _memory[key] = blob
        _memory_bytes += len(blob)
        while _memory_bytes > cap:
            _, dropped = _memory.popitem(last=False)
            _memory_bytes -= len(dropped)
            stats.memory_evictions += 1


def clear_memory_cache() -> None:
    """Forget in-process results (the disk cache stays)."""
    global _memory_bytes
    with _lock:
        _memory.clear()
        _memory_bytes = 0


# ---- disk layer ----

def _read_regular(path: Path) -> tuple[bytes | None, str | None]:
    """(contents, None), (None, None) if gone, or (None, why it can't be used)."""
    flags = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))   # NONBLOCK: a FIFO can't hang us
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, None            # evicted or replaced by another process meanwhile
    except OSError as e:             # ELOOP: a symlink; EACCES; ...
        return None, f"cannot be opened ({e.strerror or e})"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "is not a regular file"
        if st.st_size > MAX_ENTRY_BYTES:
            return None, f"is {st.st_size} bytes, over the {MAX_ENTRY_BYTES}-byte entry limit"
        chunks, left = [], st.st_size + 1   # one byte more than expected reveals a growing file
        while left > 0:
            chunk = os.read(fd, min(left, MiB))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) != st.st_size:
            return None, "changed size while being read"
        return data, None
    except OSError as e:
        return None, f"cannot be read ({e.strerror or e})"
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass                         # read-only cache: the entry stays rejected, never used


def _discard(path: Path, why: str) -> None:
    with _lock:
        stats.discarded += 1
    warnings.warn(f"discarded SPIR-V cache entry {path}: it {why}; recompiling. "
                  "Fix: nothing to do (the entry is replaced); delete the cache folder to start clean.",
                  CacheWarning, stacklevel=4)
    _remove(path)


def disk_get(root: Path, key: str) -> bytes | None:
    bucket = root / key[:2]
    try:
        names = os.listdir(bucket)
    except OSError:                  # no folder yet, or the cache path is a file / not readable
        return None
    prefix = key + "."
    for name in names:
        if not name.startswith(prefix):
            continue
        path = bucket / name
        m = _ENTRY_RE.match(name)
        if m is None:
            if not _LEGACY_RE.match(name):   # an earlier version's entry is never read; eviction ages it out
                _discard(path, "has a malformed name")
            continue
        blob, why = _read_regular(path)
        if blob is None and why is None:
            continue
        if why is None and entry_tag(key, blob) != m.group(2):
            why = "does not match its digest (corrupt, truncated or another program's module)"
        if why is None and not valid_spirv(blob):
            why = "is not a well-formed SPIR-V module"
        if why is not None:
            _discard(path, why)
            continue
        try:
            os.utime(path)           # LRU order for eviction is mtime
        except OSError:
            pass
        return blob
    return None


def disk_put(root: Path, key: str, blob: bytes) -> None:
    cap = disk_cache_max_bytes()
    if cap == 0:
        return
    bucket = root / key[:2]
    path = bucket / f"{key}.{entry_tag(key, blob)}.spv"
    tmp: str | None = None
    try:
        bucket.mkdir(parents=True, exist_ok=True)
        # The dot prefix keeps a temp file out of every entry lookup; write-then-rename
        # means a reader never sees a half-written module.
        fd, tmp = tempfile.mkstemp(dir=bucket, prefix=f".{key[:16]}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        _warn_once(f"dir:{root}", f"SPIR-V cache folder {root} is not usable ({e.strerror or e}); "
                   "shaders will be recompiled in every process. "
                   "Fix: set VYRE_VK_CACHE_DIR to a writable folder.")
        return
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    _account(root, len(blob), cap)


def _account(root: Path, added: int, cap: int) -> None:
    """Add a store to the folder's running total; scan and evict only when it may be over."""
    with _disk_lock:
        state = _disk_state.setdefault(str(root), [-1, 0])
        state[1] += 1
        if state[0] >= 0 and state[0] + added <= cap and state[1] < _RESCAN_EVERY:
            state[0] += added
            return
        state[0] = _scan(root, cap)
        state[1] = 0


def _entries(root: Path, tmp_max_age_s: float = _STALE_TMP_S) -> list[tuple[float, int, str]]:
    """(mtime, size, path) of every cache entry file under ``root``; drops older temp files."""
    found: list[tuple[float, int, str]] = []
    now = time.time()
    try:
        buckets = [e for e in os.scandir(root) if len(e.name) == 2 and e.is_dir(follow_symlinks=False)]
    except OSError:
        return found
    for b in buckets:
        try:
            items = list(os.scandir(b.path))
        except OSError:
            continue
        for e in items:
            try:
                if not e.is_file(follow_symlinks=False):
                    continue
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if e.name.endswith(".tmp") and e.name.startswith("."):
                if now - st.st_mtime > tmp_max_age_s:
                    _remove(Path(e.path))
            elif _ENTRY_RE.match(e.name) or _LEGACY_RE.match(e.name):
                found.append((st.st_mtime, st.st_size, e.path))
    return found


def _scan(root: Path, cap: int) -> int:
    """The folder's total after evicting least-recently-used entries down to 90% of ``cap``."""
    entries = _entries(root)
    total = sum(size for _, size, _ in entries)
    if total <= cap:
        return total
    entries.sort()
    target, evicted = int(cap * _EVICT_TO), 0
    for _, size, path in entries:
        if total <= target:
            break
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass                     # another process evicted it first
        except OSError:
            continue
        total -= size
        evicted += 1
    with _lock:
        stats.disk_evictions += evicted
    return total


def cache_info() -> CacheInfo:
    """Sizes and caps of both cache layers (scans the disk folder)."""
    root = cache_dir()
    entries = _entries(root)
    with _lock:
        mem_entries, mem_bytes = len(_memory), _memory_bytes
    return CacheInfo(root, len(entries), sum(s for _, s, _ in entries), disk_cache_max_bytes(),
                     mem_entries, mem_bytes, memory_cache_max_bytes())


def clear_disk_cache() -> int:
    """Delete every entry (and temp file) in the disk cache folder; returns how many entries went.

    Only vyre-vk's own files are removed, so a ``VYRE_VK_CACHE_DIR`` pointing at a shared
    folder loses nothing else.
    """
    root = cache_dir()
    removed = 0
    with _disk_lock:
        for _, _, path in _entries(root, tmp_max_age_s=60):   # spare a writer mid-store
            try:
                os.unlink(path)
                removed += 1
            except OSError:
                pass
        for i in range(256):
            try:
                os.rmdir(root / f"{i:02x}")   # only if empty
            except OSError:
                pass
        _disk_state.pop(str(root), None)
    return removed


__all__ = ["SPIRV_MAGIC", "MiB", "DEFAULT_MEMORY_CACHE_BYTES", "DEFAULT_DISK_CACHE_BYTES", "MAX_ENTRY_BYTES",
           "CompileStats", "CacheInfo", "stats", "cache_dir", "memory_cache_max_bytes", "disk_cache_max_bytes",
           "entry_tag", "valid_spirv", "count", "memory_get", "memory_put", "disk_get", "disk_put", "clear_memory_cache",
           "cache_info", "clear_disk_cache"]
