#!/usr/bin/env bash
# Set up a fresh Debian 12 machine for bootstrap: the Debian packages that building and running
# it need (with --test-tools, also those only the test suite needs), pinned uv, pytest,
# auditwheel, packaging and pip from PyPI in a project-local tools venv, then a Release build in
# build/ of the `bootstrap` target alone (the unit tests are built by scripts/test.sh). Safe to
# re-run: each part is skipped when already in place.
#
#   scripts/setup.sh [--test-tools] [--target NAME]...   NAME: a CMake target, or `all`
#   BOOTSTRAP_WERROR=ON         warnings fail the build (CI: .ci/run sets it; default OFF)
#   BUILD_TYPE=Release          CMake build type of a new build/
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/configure.sh

UV_VERSION=0.13.9
PYTEST_VERSION=8.3.5
AUDITWHEEL_VERSION=6.4.2  # the wheel test asks it whether scripts/wheel.sh's wheel is manylinux
# The differential test's references (tests/differential/): packaging for PEP 440/508/427 and
# name normalisation, pip's index-page parsing for PEP 503/691.
PACKAGING_VERSION=26.4
PIP_VERSION=26.3
# Building (compiler, CMake, Ninja, the libraries' headers, Catch2 for CMake's configure step;
# the static archives the self-contained binary links: libarchive's codecs, nettle and libacl,
# zlib, xz, bzip2, zstd) and running the demo (python3 and python3-venv for the tools venv; the
# demo recipe builds no extension, so no python3-dev or pybind11).
DEB_PACKAGES=(cmake ninja-build g++ pkg-config python3 python3-venv git ccache
  libcurl4-openssl-dev libarchive-dev nlohmann-json3-dev libtomlplusplus-dev libspdlog-dev
  libfmt-dev libcli11-dev catch2 libexpected-dev libyaml-cpp-dev libelf-dev libssl-dev
  nettle-dev libacl1-dev zlib1g-dev liblzma-dev libbz2-dev libzstd-dev)
# Only the test suite needs these (scripts/test.sh passes --test-tools): clang-format and clang-tidy
# for the format and tidy stages, clang's libFuzzer and
# sanitizer runtimes for scripts/fuzz.sh, llvm's symbolizer for readable stacks, python3-dev and
# pybind11 for the pybind11 and build steps' tests, tmux for the terminal tests, hyperfine for
# bench/, slurm-wlm and munge for the Slurm bring-up test (a four-node cluster on one host),
# buildah, podman, docker.io (a Docker Engine the image tests start) and mmdebstrap (their bare
# base image).
TEST_PACKAGES=(clang-14 clang-format-14 clang-tidy-14 libclang-rt-14-dev llvm-14 python3-dev pybind11-dev tmux hyperfine slurm-wlm munge buildah podman
  docker.io mmdebstrap)
TARGETS=()
while [ $# -gt 0 ]; do
  case $1 in
    --test-tools) DEB_PACKAGES+=("${TEST_PACKAGES[@]}") ;;
    --target)
      [ $# -ge 2 ] || { echo "setup: --target needs a CMake target name (or 'all')" >&2; exit 2; }
      TARGETS+=("$2"); shift ;;
    --target=*) TARGETS+=("${1#--target=}") ;;
    *) echo "setup: unknown option '$1' (known: --test-tools, --target NAME)" >&2; exit 2 ;;
  esac
  shift
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(bootstrap)

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

# Tools venv: uv, pytest, auditwheel, packaging and pip, each pinned. /usr/bin/python3 is
# Debian's; any python3 >= 3.9 works. A pinned Python package is in place when its dist-info is.
PY=${BOOTSTRAP_SETUP_PYTHON:-python3}
has_dist() { compgen -G ".tools/venv/lib/python3*/site-packages/$1-$2.dist-info" >/dev/null; }
if [ ! -x .tools/venv/bin/uv ] || [ "$(.tools/venv/bin/uv --version | awk '{print $2}')" != "$UV_VERSION" ] \
   || [ ! -x .tools/venv/bin/pytest ] || [ ! -x .tools/venv/bin/auditwheel ] \
   || ! has_dist packaging "$PACKAGING_VERSION" || ! has_dist pip "$PIP_VERSION"; then
  echo "setup: installing uv $UV_VERSION, pytest, auditwheel, packaging $PACKAGING_VERSION and pip $PIP_VERSION" \
    "into .tools/venv" >&2
  rm -rf .tools/venv
  "$PY" -m venv .tools/venv
  .tools/venv/bin/python -m pip install -q --disable-pip-version-check \
    "uv==$UV_VERSION" "pytest==$PYTEST_VERSION" "auditwheel==$AUDITWHEEL_VERSION" \
    "packaging==$PACKAGING_VERSION" "pip==$PIP_VERSION"
fi

BUILD_TYPE=${BUILD_TYPE:-Release}
# ccache (when present) makes a rebuild, or a second clone's build, mostly cache hits; paths
# are taken relative to the checkout so clones in other folders share entries.
LAUNCHER=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD"
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
bs_configure build -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "${LAUNCHER[@]}" \
  -DBOOTSTRAP_WERROR="${BOOTSTRAP_WERROR:-OFF}"
cmake --build build -j"$(nproc)" --target "${TARGETS[@]}"
