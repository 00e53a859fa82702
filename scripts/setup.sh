#!/usr/bin/env bash
# Set up a fresh Debian 12 machine for bootstrap: Debian packages (with --test-tools, also those
# the fuzz targets need), a pinned uv (and pytest) from PyPI in a project-local tools venv, then
# a Release build in build/. Safe to re-run: each part is skipped when already in place.
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9
PYTEST_VERSION=8.3.5
DEB_PACKAGES=(cmake ninja-build g++ pkg-config python3 python3-venv git
  libcurl4-openssl-dev libarchive-dev nlohmann-json3-dev libtomlplusplus-dev libspdlog-dev
  libcli11-dev catch2 libexpected-dev libyaml-cpp-dev libelf-dev libssl-dev hyperfine
  pybind11-dev python3-dev ccache tmux)
# Only the test suite needs these (scripts/test.sh passes --test-tools): clang's libFuzzer and
# sanitizer runtimes for scripts/fuzz.sh, llvm's symbolizer for readable stacks.
TEST_PACKAGES=(clang-14 libclang-rt-14-dev llvm-14)
for arg in "$@"; do
  case $arg in
    --test-tools) DEB_PACKAGES+=("${TEST_PACKAGES[@]}") ;;
    *) echo "setup: unknown option '$arg' (known: --test-tools)" >&2; exit 2 ;;
  esac
done

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
# ccache (when present) makes a rebuild, or a second clone's build, mostly cache hits; paths
# are taken relative to the checkout so clones in other folders share entries.
LAUNCHER=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD"
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "${LAUNCHER[@]}" >/dev/null
fi
cmake --build build -j"$(nproc)"
