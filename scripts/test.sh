#!/usr/bin/env bash
# The whole test suite: set up (building every target of build/), then nine stages, each run
# even when an earlier one failed:
#   layering     scripts/check-layering.sh: every include is of a module the includer links
#   format       scripts/check-format.sh: every C++ file as .clang-format writes it
#   tidy         scripts/check-tidy.sh: every source file passes .clang-tidy's checks (it runs
#                in the background, niced, one file at a time, while `integration` waits on
#                its children; alone when integration is not run)
#   names        scripts/check-test-names.py: no test hides another (duplicate names), every
#                Catch2 name is one ctest can select
#   unit         ctest in build/ (Catch2)
#   differential tests/differential/run.py: bootstrap's PEP 440/508/427/503/691 answers (through
#                build/differential_driver) against packaging's and pip's, on hand-written
#                vectors and a few thousand random cases from DIFFERENTIAL_SEED (fixed by default)
#   integration  pytest tests/integration (real uv, real venvs, a loopback fixture index and,
#                when PyPI answers, real PyPI)
#   sanitize     the unit tests again under ASan+UBSan (scripts/sanitize.sh, build-asan/)
#   fuzz         every fuzz target for FUZZ_SECONDS each (scripts/fuzz.sh, build-fuzz/)
# A summary line per stage ends the output; the exit status is 1 when any stage failed.
#   TEST_STAGES="unit integration"   run only these stages
#   FUZZ_SECONDS=45                  per fuzz target (12 targets, two at a time on two cores)
#   DIFFERENTIAL_SEED=N              the differential stage's random cases (default 20261203)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test-tools --target all

export PATH="$PWD/.tools/venv/bin:$PATH"
export BOOTSTRAP_BIN="$PWD/build/bootstrap"
export FUZZ_SECONDS=${FUZZ_SECONDS:-45}
# The differential stage's generated cases: a fixed seed, so that a landing never depends on the
# draw; DIFFERENTIAL_SEED=N explores others (run.py without --seed draws a new one).
export DIFFERENTIAL_SEED=${DIFFERENTIAL_SEED:-20261203}
# The sanitizer and fuzz builds share the compiler cache the main build uses.
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
STAGES=(${TEST_STAGES:-layering format tidy names unit differential integration sanitize fuzz})

summary=()
failed=0
stage() {
  local name=$1 start=$SECONDS rc=0
  shift
  echo "== $name" >&2
  "$@" || rc=$?
  if [ $rc -eq 0 ]; then
    summary+=("$(printf '%-12s passed in %d s' "$name" $((SECONDS - start)))")
  else
    summary+=("$(printf '%-12s FAILED (exit %d) after %d s' "$name" $rc $((SECONDS - start)))")
    failed=1
  fi
}

# tidy beside integration: clang-tidy is CPU-bound, the integration tests mostly wait on uv,
# Python and the loopback index.
tidy_log=""
tidy_pid=""
tidy_start=0
if [[ " ${STAGES[*]} " == *" tidy "* && " ${STAGES[*]} " == *" integration "* ]]; then
  tidy_log=$(mktemp)
  tidy_start=$SECONDS
  TIDY_JOBS=1 nice -n 10 bash scripts/check-tidy.sh >"$tidy_log" 2>&1 &
  tidy_pid=$!
fi
tidy_wait() {
  local rc=0
  wait "$tidy_pid" || rc=$?
  cat "$tidy_log" >&2
  rm -f "$tidy_log"
  return $rc
}

for s in "${STAGES[@]}"; do
  case $s in
    layering) stage layering bash scripts/check-layering.sh ;;
    format) stage format bash scripts/check-format.sh ;;
    tidy)
      if [ -z "$tidy_pid" ]; then stage tidy bash scripts/check-tidy.sh; fi ;;
    names) stage names python3 scripts/check-test-names.py ;;
    unit) stage unit ctest --test-dir build --output-on-failure -j2 ;;
    differential) stage differential .tools/venv/bin/python tests/differential/run.py --seed "$DIFFERENTIAL_SEED" ;;
    integration)
      stage integration .tools/venv/bin/pytest tests/integration -q -p no:cacheprovider
      if [ -n "$tidy_pid" ]; then
        stage tidy tidy_wait
        summary[-1]="${summary[-1]} (beside integration: $((SECONDS - tidy_start)) s in all)"
      fi ;;
    sanitize) stage sanitize bash scripts/sanitize.sh ;;
    fuzz) stage fuzz bash scripts/fuzz.sh ;;
    *) echo "test: unknown stage '$s' (known: layering format tidy names unit differential integration sanitize fuzz)" >&2; exit 2 ;;
  esac
done

echo "== summary" >&2
printf '%s\n' "${summary[@]}" >&2
exit $failed
