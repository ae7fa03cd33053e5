#!/usr/bin/env bash
# On the GPU machine (Python 3.12, numpy 2, PyTorch; no network), with bundle/ carried
# (tools/device_bundle.sh made it): install the bundle, then run the given command with
# vyre-vk importable from this checkout.  e.g.  bash tools/device_run.sh python3 tools/bench/run.py
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ -d "$ROOT/bundle/debs" ] || { echo "no bundle/. Fix: run tools/device_bundle.sh here and carry bundle" >&2; exit 1; }
# The Vulkan loader and the glvnd libraries the NVIDIA ICD (libGLX_nvidia) needs; the
# device guide unpacks exactly these into / (other packages go elsewhere).
for f in "$ROOT"/bundle/debs/*.deb; do dpkg -x "$f" /; done
ldconfig
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/vyre-site \
  "$ROOT"/bundle/wheels/kp-*.whl "$ROOT"/bundle/wheels/pyshaderc-*.whl \
  "$ROOT"/bundle/wheels/cffi-*.whl "$ROOT"/bundle/wheels/pycparser-*.whl
# optional: the benchmark's wgpu-py peer (older bundles lack it)
if ls "$ROOT"/bundle/wheels/wgpu-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/vyre-site \
    "$ROOT"/bundle/wheels/wgpu-*.whl "$ROOT"/bundle/wheels/rendercanvas-*.whl
fi
export PYTHONPATH="$ROOT:/tmp/vyre-site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
cd "$ROOT"
exec "$@"
