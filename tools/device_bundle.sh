#!/usr/bin/env bash
# Gather what the GPU machine needs into bundle/ (git-ignored; carried by the device call):
#   bundle/wheels/  cp312 wheels of kp (patched) and pyshaderc, cffi + pycparser, vyre-vk itself,
#                   wgpu + rendercanvas (the benchmark's wgpu-py peer)
#   bundle/nofence/ a cp312 kp module without the fence patch (A/B latency only)
#   bundle/debs/    the Vulkan loader and libfmt9 (kp links it), unpacked there into /tmp/vkroot
#   bundle/bin/     the raw-Vulkan probes (tools/bench/vk_submit_probe.c, vk_dispatch_probe.c)
# The GPU machine runs Python 3.12 with numpy 2 and PyTorch, and fetches nothing.
# Usage: bash tools/device_bundle.sh   (then see README "Benchmarks" for the device call)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/bundle"
PY312="${VYRE_VK_PY312:-$(ls -d "$(pyenv root 2>/dev/null || echo /root/.pyenv)"/versions/3.12*/bin/python3.12 2>/dev/null | head -1)}"
[ -x "$PY312" ] || { echo "no Python 3.12 found. Fix: set VYRE_VK_PY312=/path/to/python3.12" >&2; exit 1; }
bash "$ROOT/tools/bootstrap.sh" >/dev/null   # system packages and the local venv

BUILD_VENV="$ROOT/build/py312-venv"
if [ ! -x "$BUILD_VENV/bin/python" ]; then
  "$PY312" -m venv "$BUILD_VENV"
  "$BUILD_VENV/bin/python" -m pip install -q --upgrade pip setuptools wheel cffi "pybind11==2.13.6" "numpy>=2"
fi
rm -rf "$OUT"; mkdir -p "$OUT/wheels" "$OUT/nofence" "$OUT/debs" "$OUT/bin"

mapfile -t WHEELS < <("$BUILD_VENV/bin/python" "$ROOT/tools/build_native.py" --python "$BUILD_VENV/bin/python")
cp "${WHEELS[@]}" "$OUT/wheels/"
"$BUILD_VENV/bin/python" -m pip wheel -q --no-deps -w "$OUT/wheels" "$ROOT"
"$BUILD_VENV/bin/python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$OUT/wheels" "cffi==$("$BUILD_VENV/bin/python" -c 'import cffi; print(cffi.__version__)')" pycparser
# the wgpu-py peer of tools/bench/run.py (wgpu-native inside; rendercanvas is pure Python)
"$BUILD_VENV/bin/python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform any \
  -d "$OUT/wheels" "wgpu==0.32.0" rendercanvas

# kp without the fence patch, for tools/bench/fence_latency.py --nofence-dir
"$BUILD_VENV/bin/python" - "$ROOT" "$OUT/nofence" <<'EOF'
import shutil, sys
from pathlib import Path
root, out = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, str(root / "tools" / "bench"))
import fence_latency
shutil.copy2(next(fence_latency.build_unpatched(sys.executable).glob("kp.cpython-312*.so")), out)
EOF

( cd "$OUT/debs"
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64'
  # libGLX_nvidia (the NVIDIA Vulkan ICD) needs the glvnd dispatch libraries
  apt-get $o download libvulkan1 libfmt9 libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2 >/dev/null 2>&1 )
for p in vk_submit_probe vk_dispatch_probe; do gcc -O2 -o "$OUT/bin/$p" "$ROOT/tools/bench/$p.c" -lvulkan; done
du -sh "$OUT"; find "$OUT" -type f | sed "s|$ROOT/||"
