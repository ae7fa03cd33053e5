#!/usr/bin/env bash
# README command 2: bootstrap if needed, then the whole test suite on the default Vulkan device,
# on $VYRE_VK_TEST_WORKERS pytest-xdist workers (default 2; each file stays on one worker).
# `bash tools/test.sh -m quick` is the quick tier (tests/conftest.py says what it leaves out).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/tools/bootstrap.sh"
cd "$ROOT"
exec "${VYRE_VK_VENV:-$ROOT/.venv}/bin/python" -m pytest -n "${VYRE_VK_TEST_WORKERS:-2}" --dist loadfile "$@"
