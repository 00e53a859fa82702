#!/usr/bin/env bash
# The whole test suite: set up, then unit tests (ctest) and integration tests (pytest, real
# uv, real venvs, a loopback fixture index).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

export PATH="$PWD/.tools/venv/bin:$PATH"
export BOOTSTRAP_BIN="$PWD/build/bootstrap"

echo "== unit tests" >&2
ctest --test-dir build --output-on-failure -j2

echo "== integration tests" >&2
.tools/venv/bin/pytest tests/integration -q -p no:cacheprovider
