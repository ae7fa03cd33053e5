#!/usr/bin/env bash
# README command 2: bootstrap if needed, then the whole test suite on the default Vulkan device.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/tools/bootstrap.sh"
cd "$ROOT"
exec "${VYRE_VK_VENV:-$ROOT/.venv}/bin/python" -m pytest "$@"
