#!/usr/bin/env bash
# The whole test suite: set up, then unit tests (ctest) and integration tests (pytest, real
# uv, real venvs, a loopback fixture index), then the unit tests again under ASan+UBSan
# (scripts/sanitize.sh) and every parser's fuzz target for FUZZ_SECONDS each (scripts/fuzz.sh).
# Every stage runs even when an earlier one fails; a summary line per stage closes the output.
#
# CI budget: 40 minutes on 2 cores. Setup, build, unit and integration tests take ~12 min. On a
# cold ccache the ASan+UBSan unit test build is ~16 CPU-minutes (~8 min on 2 cores) and its tests
# 20 s; the fuzz build ~4.5 CPU-minutes (~2.5 min); fuzzing 10 targets, 2 at a time, takes
# 5 x FUZZ_SECONDS (5 min at 60 s). That is ~28 min in all, leaving room for a slower machine.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1

export PATH="$PWD/.tools/venv/bin:$PATH"
export BOOTSTRAP_BIN="$PWD/build/bootstrap"
export FUZZ_SECONDS=${FUZZ_SECONDS:-60}

summary=()
failed=0
stage() {
  local name=$1 start=$SECONDS rc=0
  shift
  echo "== $name" >&2
  "$@" || rc=$?
  local took=$((SECONDS - start))
  if [ $rc -eq 0 ]; then
    summary+=("$name: passed (${took} s)")
  else
    summary+=("$name: FAILED, exit $rc (${took} s)")
    failed=1
  fi
}

stage "unit tests" ctest --test-dir build --output-on-failure -j2
stage "integration tests" .tools/venv/bin/pytest tests/integration -q -p no:cacheprovider
stage "unit tests under ASan+UBSan" bash scripts/sanitize.sh
stage "fuzzing (${FUZZ_SECONDS} s per target)" bash scripts/fuzz.sh

echo "== summary" >&2
for line in "${summary[@]}"; do echo "$line" >&2; done
exit $failed
