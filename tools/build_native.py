#!/usr/bin/env python3
"""Build the native wheels vyre-vk needs: kp 0.9.0 and pyshaderc 1.1.3.

Neither installs from PyPI on a fresh Debian bookworm machine (kp fetches its
dependencies from the network at build time; pyshaderc's bundled 2017 shaderc
no longer builds), so both are built here from their official sdists with the
patch series in patches/, against the system libraries that tools/bootstrap.sh
installs. Each wheel is cached in a wheelhouse folder keyed by everything that goes into
it (its sdist and patches, CMakeLists.txt for kp, this script, the target Python), so a
second run only checks hashes.

    python tools/build_native.py                     # for this interpreter
    python tools/build_native.py --python python3.12 # e.g. for the GPU machine

Prints the two wheel paths, one per line, on stdout.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The official sdists, pinned by hash: the patches are written against them.
SDISTS = {
    "kp": ("0.9.0", "98e583dc6e9731ff6d7a3e3317817e4d93f7b2945929619e29a56325db279949"),
    "pyshaderc": ("1.1.3", "d3e779f04d0dc09da6d4ee5ec1fa749ada4c0b514cf32256fd0e011270094d28"),
}
KP_LOCAL_VERSION = "0.9.0+vyre"


def log(msg: str) -> None:
    print(f"[build_native] {msg}", file=sys.stderr, flush=True)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch_sdist(name: str, cache: Path) -> Path:
    version, digest = SDISTS[name]
    target = cache / f"{name}-{version}.tar.gz"
    if not target.exists():
        log(f"downloading the {name}=={version} sdist")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                 "-d", tmp, f"{name}=={version}"], check=True)
            (got,) = Path(tmp).glob(f"{name}-{version}.tar.gz")
            cache.mkdir(parents=True, exist_ok=True)
            shutil.move(str(got), target)
    if sha256(target) != digest:
        target.unlink()
        raise SystemExit(f"{target.name} does not match its pinned sha256 {digest}. "
                         "Fix: re-run; the corrupt download has been removed.")
    return target


def python_info(python: str) -> dict[str, str]:
    code = ("import sys, sysconfig; "
            "print(f'cp{sys.version_info[0]}{sys.version_info[1]}'); "
            "print(sysconfig.get_config_var('EXT_SUFFIX')); "
            "print(sysconfig.get_platform().replace('-', '_').replace('.', '_'))")
    tag, ext, plat = subprocess.run([python, "-c", code], check=True, capture_output=True,
                                    text=True).stdout.split()
    return {"tag": tag, "ext_suffix": ext, "platform": plat}


def default_wheelhouse() -> Path:
    """Outside the checkout, so every clone on a machine reuses one build: the same pyshaderc
    module bytes are also the SPIR-V cache's compiler identity (vyre_vk.spirv.compiler_id), so a
    rebuilt module would leave a fresh clone's test run with every shader cache entry missed."""
    env = os.environ.get("VYRE_VK_WHEELHOUSE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vyre-vk" / "wheelhouse"


def cache_key(name: str, sdist: Path, py_tag: str) -> str:
    """Everything that goes into package `name`'s wheel: a kp patch does not rebuild pyshaderc
    (whose module digest keys the SPIR-V cache: a rebuild would empty it)."""
    h = hashlib.sha256(py_tag.encode())
    inputs = [sdist, Path(__file__).resolve(), *sorted((ROOT / "patches" / name).glob("*.patch")),
              *([ROOT / "CMakeLists.txt"] if name == "kp" else [])]
    for path in inputs:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def build_kp(sdist: Path, python: str, info: dict[str, str], out: Path, build_root: Path) -> Path:
    wheel_name = f"kp-{KP_LOCAL_VERSION}-{info['tag']}-{info['tag']}-{info['platform']}.whl"
    if (out / wheel_name).exists():
        return out / wheel_name
    pybind11_dir = subprocess.run([python, "-m", "pybind11", "--cmakedir"], check=True,
                                  capture_output=True, text=True).stdout.strip()
    build = build_root / f"kp-{info['tag']}"
    log(f"building kp for {info['tag']} in {build} (about a minute on 2 cores)")
    build.mkdir(parents=True, exist_ok=True)
    logfile = build / "vyre-build.log"
    with open(logfile, "w") as logf:
        for cmd in (["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     f"-DKP_SDIST={sdist}", f"-DPython_EXECUTABLE={python}",
                     f"-DPYTHON_EXECUTABLE={python}", f"-Dpybind11_DIR={pybind11_dir}", "-Wno-dev"],
                    ["cmake", "--build", str(build), "--target", "kp", "-j", str(os.cpu_count() or 2)]):
            if subprocess.run(cmd, stdout=logf, stderr=subprocess.STDOUT).returncode:
                sys.stderr.write(logfile.read_text()[-6000:])
                raise SystemExit(f"kp build failed ({' '.join(cmd[:2])}); full log: {logfile}")
    (module,) = build.rglob(f"kp{info['ext_suffix']}")
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp) / f"kp-{KP_LOCAL_VERSION}"
        dist_info = stage / f"kp-{KP_LOCAL_VERSION}.dist-info"
        dist_info.mkdir(parents=True)
        shutil.copy2(module, stage / module.name)
        patches = ", ".join(p.stem for p in sorted((ROOT / "patches" / "kp").glob("*.patch")))
        (dist_info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: kp\nVersion: " + KP_LOCAL_VERSION + "\n"
            "Summary: Kompute 0.9.0 Python module, built by vyre-vk with patches: " + patches + "\n"
            "License: Apache-2.0\nRequires-Dist: numpy\n")
        (dist_info / "WHEEL").write_text(
            "Wheel-Version: 1.0\nGenerator: vyre-vk build_native\nRoot-Is-Purelib: false\n"
            f"Tag: {info['tag']}-{info['tag']}-{info['platform']}\n")
        subprocess.run([python, "-m", "wheel", "pack", "-d", tmp, str(stage)], check=True,
                       stdout=subprocess.DEVNULL)
        os.replace(Path(tmp) / wheel_name, out / wheel_name)  # the cache is shared: never a partial wheel
    return out / wheel_name


def build_pyshaderc(sdist: Path, python: str, info: dict[str, str], out: Path) -> Path:
    existing = list(out.glob(f"pyshaderc-*-{info['tag']}-*.whl"))
    if existing:
        return existing[0]
    log(f"building pyshaderc for {info['tag']} against the system shaderc")
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(sdist) as tar:
            tar.extractall(tmp, filter="data")
        (src,) = Path(tmp).glob("pyshaderc-*")
        for patch in sorted((ROOT / "patches" / "pyshaderc").glob("*.patch")):
            subprocess.run(["patch", "-p1", "--batch", "--forward", "-s", "-i", str(patch)],
                           cwd=src, check=True)
        built = Path(tmp) / "wheel"
        subprocess.run([python, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
                        "-w", str(built), str(src)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL if not os.environ.get("VYRE_VK_VERBOSE") else None)
        (wheel,) = built.glob(f"pyshaderc-*-{info['tag']}-*.whl")
        os.replace(wheel, out / wheel.name)
    return out / wheel.name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter to build for (needs setuptools, wheel, cffi, pybind11)")
    ap.add_argument("--wheelhouse", type=Path, default=default_wheelhouse(),
                    help="wheel cache (default $VYRE_VK_WHEELHOUSE, else ~/.cache/vyre-vk/wheelhouse)")
    ap.add_argument("--build-dir", type=Path, default=ROOT / "build")
    args = ap.parse_args(argv)

    python = shutil.which(args.python) or args.python
    info = python_info(python)
    sdists = {name: fetch_sdist(name, args.wheelhouse / "sdist") for name in SDISTS}
    out = {name: args.wheelhouse / f"{info['tag']}-{name}-{cache_key(name, sdists[name], info['tag'])}"
           for name in SDISTS}
    for folder in out.values():
        folder.mkdir(parents=True, exist_ok=True)
    kp_wheel = build_kp(sdists["kp"], python, info, out["kp"], args.build_dir)
    shaderc_wheel = build_pyshaderc(sdists["pyshaderc"], python, info, out["pyshaderc"])
    print(kp_wheel)
    print(shaderc_wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
