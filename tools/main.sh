#!/usr/bin/env bash
# README command 1: bootstrap if needed, then the main job on the default Vulkan device.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/tools/bootstrap.sh"
exec "${VYRE_VK_VENV:-$ROOT/.venv}/bin/vyre-vk" main "$@"
