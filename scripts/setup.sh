#!/usr/bin/env bash
# Set up a fresh Debian 12 machine for bootstrap: Debian packages, a pinned uv (and pytest) from
# PyPI in a project-local tools venv, then a Release build in build/. Safe to re-run: each part
# is skipped when already in place.
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9
PYTEST_VERSION=8.3.5
DEB_PACKAGES=(cmake ninja-build g++ pkg-config python3 python3-venv git
  libcurl4-openssl-dev libarchive-dev nlohmann-json3-dev libtomlplusplus-dev libspdlog-dev
  libcli11-dev catch2 libexpected-dev libyaml-cpp-dev libelf-dev libssl-dev hyperfine
  pybind11-dev python3-dev
  clang-14 libclang-rt-14-dev llvm-14)  # scripts/fuzz.sh: libFuzzer, and llvm-symbolizer for stacks

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Tools venv: uv (pinned) and pytest. /usr/bin/python3 is Debian's; any python3 >= 3.9 works.
PY=${BOOTSTRAP_SETUP_PYTHON:-python3}
if [ ! -x .tools/venv/bin/uv ] || [ "$(.tools/venv/bin/uv --version | awk '{print $2}')" != "$UV_VERSION" ] \
   || [ ! -x .tools/venv/bin/pytest ]; then
  echo "setup: installing uv $UV_VERSION and pytest into .tools/venv" >&2
  rm -rf .tools/venv
  "$PY" -m venv .tools/venv
  .tools/venv/bin/python -m pip install -q --disable-pip-version-check \
    "uv==$UV_VERSION" "pytest==$PYTEST_VERSION"
fi

BUILD_TYPE=${BUILD_TYPE:-Release}
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" >/dev/null
fi
cmake --build build -j"$(nproc)"
