#!/usr/bin/env bash
# Make this checkout runnable from nothing on Debian bookworm (idempotent):
#   1. system packages: Vulkan loader/headers, Mesa lavapipe 25.x (bookworm-backports;
#      bookworm's 22.3 lavapipe silently stops loops after 65535 iterations), shaderc,
#      glslang, SPIRV-Tools, fmt, cmake;
#   2. the venv (.venv) with the build tools;
#   3. the native wheels (tools/build_native.py, cached in ~/.cache/vyre-vk/wheelhouse);
#   4. those wheels and this project (editable, with test extras) in the venv.
# A second run only compares versions and hashes. Prints its own elapsed time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VYRE_VK_VENV:-$ROOT/.venv}"
PYTHON="${VYRE_VK_PYTHON:-python3}"
start=$(date +%s.%N)
say() { echo "[bootstrap] $*" >&2; }

APT_PACKAGES=(libvulkan1 libvulkan-dev vulkan-tools mesa-vulkan-drivers glslc glslang-dev
              glslang-tools libshaderc-dev spirv-tools libfmt-dev cmake g++ make patch
              vulkan-validationlayers)
BACKPORTS=/etc/apt/sources.list.d/vyre-vk-bookworm-backports.sources

system_ok() {
  local pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || return 1
  done
  # lavapipe must be Mesa 25.x, never bookworm's 22.3 with the loop limiter.
  dpkg-query -W -f='${Version}' mesa-vulkan-drivers | grep -q '^25\.'
}

if ! system_ok; then
  if [ "$(id -u)" != 0 ]; then
    say "system packages missing and not root. Fix: run as root, or install: ${APT_PACKAGES[*]} (mesa-vulkan-drivers 25.x from bookworm-backports)"
    exit 1
  fi
  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    say "adding the bookworm-backports suite"
    cat > "$BACKPORTS" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  fi
  say "installing system packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -t bookworm-backports "${APT_PACKAGES[@]}" >/dev/null
  system_ok || { say "mesa-vulkan-drivers is not 25.x after install. Fix: check that bookworm-backports is reachable"; exit 1; }
fi

# Build tools live in the venv so the native build needs nothing from the network
# but PyPI. pybind11 2.13 is the oldest line with NumPy 2 support that kp 0.9.0's
# -Werror build accepts.
BUILD_REQS="pip>=24 setuptools>=70 wheel>=0.43 cffi>=1.16 pybind11==2.13.6 numpy>=1.26"
export PIP_DISABLE_PIP_VERSION_CHECK=1  # three pip runs on a fresh clone; the check is a round trip each
stamp_ok() { [ -f "$VENV/.vyre-$1" ] && [ "$(cat "$VENV/.vyre-$1")" = "$2" ]; }
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
if ! stamp_ok build-reqs "$BUILD_REQS"; then
  say "installing build tools into the venv"
  # shellcheck disable=SC2086
  "$VENV/bin/python" -m pip install -q --upgrade $BUILD_REQS
  echo "$BUILD_REQS" > "$VENV/.vyre-build-reqs"
fi

mapfile -t WHEELS < <("$VENV/bin/python" "$ROOT/tools/build_native.py")
native_key="$(basename "$(dirname "${WHEELS[0]}")")"
if ! stamp_ok native "$native_key"; then
  say "installing ${WHEELS[*]##*/}"
  "$VENV/bin/python" -m pip install -q --force-reinstall --no-deps "${WHEELS[@]}"
  echo "$native_key" > "$VENV/.vyre-native"
fi

project_key="$(sha256sum "$ROOT/pyproject.toml" | cut -c1-16)"
if ! stamp_ok project "$project_key"; then
  say "installing vyre-vk (editable, with test extras)"
  "$VENV/bin/python" -m pip install -q -e "$ROOT[test]"
  echo "$project_key" > "$VENV/.vyre-project"
fi

end=$(date +%s.%N)
say "$(awk -v s="$start" -v e="$end" -v v="$VENV" 'BEGIN { printf "ready in %.1f s (venv %s)", e - s, v }')"
