"""The on-disk SPIR-V cache, tampered with between a compile and the next one.

Each case gets its own cache folder; compiling the program writes its entries (found as the
files that appear, whatever the layout), the case damages them, then a fresh process (no
in-memory layer) compiles and runs the program again. The right answer is expected every
time: a bad entry is discarded with a warning, never used, never fatal.
"""
from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import numpy as np

from .common import Wrong, add, case_cache_dir, compare, fresh_process
from .progs import axpy_u32, f32s, inputs_for, scale_f32, u32s

C = "cache"


def entries(root: Path) -> set[Path]:
    """Every cache entry under ``root`` (temp files, dot-named, excluded)."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for n in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            if not n.startswith("."):
                out.add(Path(dirpath) / n)
    return out


def _programs(kind: str):
    """(program, inputs, a program with the same interface and another result)."""
    if kind == "u32":
        return axpy_u32(64, 3, 1, op="hostile::cache_p"), {"a": u32s(64, 1)}, axpy_u32(64, 5, 2, op="hostile::cache_q")
    if kind == "f32":
        return scale_f32(64, 2.0, op="hostile::cache_pf"), {"a": f32s(64, 2)}, scale_f32(64, -3.0, op="hostile::cache_qf")
    from vyre_vk.ops import get
    e = get("vyre-libs::nn::softmax")  # several stages after optimisation: several entries
    p, q = e.build_with(n=64), e.build_with(n=32)
    return p, inputs_for(p, 3), q


def _fresh_run(p, inputs):
    """A new Device in this process (the folder cases: every compile here meets the bad folder)."""
    from vyre_vk.runtime import Device
    with Device() as dev:
        return dev.compile(p).run(inputs)


def _write(path: Path, data: bytes) -> None:
    _clear(path)
    path.write_bytes(data)


def _clear(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _tamper(kind: str, mine: list[Path], theirs: list[Path]) -> None:
    rng = np.random.default_rng(len(kind))
    for k, path in enumerate(mine):
        blob = path.read_bytes()
        other = theirs[k % len(theirs)] if theirs else None
        if kind == "poison":
            _write(path, other.read_bytes())
        elif kind == "magic-plus-garbage":
            _write(path, b"\x03\x02\x23\x07" + rng.integers(0, 256, 4 * 64, dtype=np.uint8).tobytes())
        elif kind == "bit-flip":
            b = bytearray(blob)
            b[len(b) // 2] ^= 0x10
            _write(path, bytes(b))
        elif kind == "truncated-half":
            _write(path, blob[: len(blob) // 8 * 4])
        elif kind == "empty":
            _write(path, b"")
        elif kind == "huge-sparse-file":
            _clear(path)
            with open(path, "wb") as f:
                f.truncate(100 << 20)
        elif kind == "symlink-dev-zero":
            _clear(path)
            path.symlink_to("/dev/zero")
        elif kind == "symlink-to-other-entry":
            _clear(path)
            path.symlink_to(other)
        elif kind == "dangling-symlink":
            _clear(path)
            path.symlink_to(path.parent / "does-not-exist")
        elif kind == "directory":
            _clear(path)
            path.mkdir()
            (path / "x").write_bytes(blob)
        elif kind == "fifo":
            _clear(path)
            os.mkfifo(path)
        elif kind == "junk-neighbours":
            (path.parent / "not-an-entry.spv").write_bytes(b"junk")
            (path.parent / (path.name + ".tmp")).write_bytes(blob[:7])
            (path.parent / (path.name.split(".")[0] + ".zz.spv")).write_bytes(blob)
        else:
            raise KeyError(kind)


def run_fresh(program_kind: str) -> str:
    """Phase B, in a fresh process (no in-process cache of any layer): compile, run, compare."""
    import vyre_vk
    from vyre_vk import reference
    p, inputs, _ = _programs(program_kind)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        compare(vyre_vk.run(p, inputs), reference.run(p, inputs), what="run after tampering")
    return f"{len(seen)} warning(s): " + "; ".join(str(w.message)[:90] for w in seen[:2])


def tamper_case(kind: str, program_kind: str, case_id: str) -> str:
    from vyre_vk import reference
    from vyre_vk.runtime import Device
    root = case_cache_dir(case_id)
    p, inputs, q = _programs(program_kind)
    want = reference.run(p, inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Device() as dev:
            base = entries(root)
            compare(dev.compile(p).run(inputs), want, what="first run")
            mine = sorted(entries(root) - base)
            dev.compile(q).run(inputs_for(q, 4))
            theirs = sorted(entries(root) - base - set(mine))
    if not mine:
        raise Wrong(f"compiling the program wrote no entry under {root}")
    _tamper(kind, mine, theirs)
    return fresh_process(f"{__name__.rsplit('.', 1)[-1]}:run_fresh", program_kind, timeout=25)


_ENTRY_KINDS = ["poison", "magic-plus-garbage", "bit-flip", "truncated-half", "empty", "huge-sparse-file",
                "symlink-dev-zero", "symlink-to-other-entry", "dangling-symlink", "directory", "fifo", "junk-neighbours"]
for _k in _ENTRY_KINDS:
    add(f"{C}/entry/{_k}", lambda k=_k: tamper_case(k, "u32", f"entry-{k}"), timeout=30)
for _k in ["poison", "truncated-half"]:
    add(f"{C}/entry-f32/{_k}", lambda k=_k: tamper_case(k, "f32", f"entry-f32-{k}"), timeout=30)
for _k in ["poison", "empty"]:
    add(f"{C}/entry-multistage/{_k}", lambda k=_k: tamper_case(k, "softmax", f"entry-ms-{k}"), timeout=30)


# ----------------------------------------------------------------------------- the folder itself
def folder_case(kind: str, case_id: str) -> None:
    from vyre_vk import reference
    root = case_cache_dir(case_id)
    p, inputs, _ = _programs("u32")
    if kind == "is-a-file":
        target = root / "cache-file"
        target.write_bytes(b"not a folder")
    elif kind == "symlink-to-dev-null":
        target = root / "link"
        target.symlink_to("/dev/null")
    elif kind == "dangling-symlink":
        target = root / "link"
        target.symlink_to(root / "missing" / "deeper")
    elif kind == "odd-characters":
        target = root / "sp ace\u00e9\nnewline"
    elif kind == "bucket-is-a-file":
        target = root / "c"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            os.environ["VYRE_VK_CACHE_DIR"] = str(target)
            _fresh_run(p, inputs)
        for e in entries(target):
            if e.parent != target:
                shutil.rmtree(e.parent, ignore_errors=True)
                e.parent.write_bytes(b"bucket replaced by a file")
    elif kind == "empty-variable":  # falls back to $XDG_CACHE_HOME, pointed at this case's folder
        os.environ["XDG_CACHE_HOME"] = str(root / "xdg")
        target = ""
    else:
        raise KeyError(kind)
    os.environ["VYRE_VK_CACHE_DIR"] = str(target)
    want = reference.run(p, inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(_fresh_run(p, inputs), want, what="first run")
        compare(_fresh_run(p, inputs), want, what="second run")


for _k in ["is-a-file", "symlink-to-dev-null", "dangling-symlink", "odd-characters", "bucket-is-a-file",
           "empty-variable"]:
    add(f"{C}/folder/{_k}", lambda k=_k: folder_case(k, f"folder-{k}"), timeout=30)
