#!/usr/bin/env bash
# Fuzz every parser for a bounded time: build build-fuzz/ (clang++-14, libFuzzer, ASan+UBSan on
# the targets and every library they link) and run each target of tests/fuzz/ for FUZZ_SECONDS,
# starting from its committed seed corpus. New corpus entries and crash reproducers go to a
# scratch directory, never into the repository. Exits 1 when any target crashes, leaks, times
# out or runs out of memory, unless tests/fuzz/known_crashes.txt names that crash (a bug being
# fixed elsewhere); each finding is printed with its reproducer and stack.
#
#   scripts/fuzz.sh [TARGET...]        all targets by default
#   FUZZ_SECONDS=30                    per target (CI's budget: see scripts/test.sh)
#   FUZZ_SCRATCH=DIR                   corpus/artifacts/logs (default: a per-checkout dir in TMPDIR)
#   FUZZ_CXX=clang++-14                the compiler (scripts/setup.sh installs clang-14)
#   FUZZ_KNOWN_CRASHES=FILE            default tests/fuzz/known_crashes.txt
#   FUZZ_JOBS=$(nproc)                 targets fuzzed at the same time (one core each)
#   FUZZ_TIMEOUT=25                    seconds one input may take before it counts as a hang
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/configure.sh
root=$PWD

FUZZ_SECONDS=${FUZZ_SECONDS:-30}
FUZZ_CXX=${FUZZ_CXX:-clang++-14}
# One input may take this long before it counts as a hang: generous, since CI's two cores are
# shared and an ASan build of a std::regex compile is slow; a real infinite loop still trips it.
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-25}
checkout_id=$(printf '%s' "$root" | cksum | cut -d' ' -f1)
scratch=${FUZZ_SCRATCH:-${TMPDIR:-/tmp}/bootstrap-fuzz.$checkout_id}

# name:max_len. Each cap lies above the inputs that once crashed its parser (all bounded now,
# and each has a seed in corpus/<target>/ that replays it): a dotted key of 50,000 segments and a
# 100,000-character [[fault]] match (recipe), markers nested 100,000 deep (pep508, dist_info),
# probe and log lines of 40,000+ characters (import_probe, perf).
TARGETS=(recipe:131072 dist_info:131072 pep440:1024 pep508:131072 import_probe:65536
  fatbin:8192 elf:16384 index_page:65536 pylock:65536 perf:65536 flags:4096 terminal_text:65536)
# Run only when named: the planted crash tests/integration/test_fuzz_script.py checks this with.
NAMED_ONLY=(selftest:64)

if [ $# -gt 0 ]; then
  selected=()
  for want in "$@"; do
    found=""
    for t in "${TARGETS[@]}" "${NAMED_ONLY[@]}"; do [ "${t%%:*}" = "$want" ] && found=$t; done
    [ -n "$found" ] || { echo "fuzz: no target '$want' (known: ${TARGETS[*]%%:*})" >&2; exit 2; }
    selected+=("$found")
  done
  TARGETS=("${selected[@]}")
fi

if ! command -v "$FUZZ_CXX" >/dev/null; then
  echo "fuzz: $FUZZ_CXX not found (scripts/setup.sh installs clang-14 and libclang-rt-14-dev)" >&2
  exit 1
fi

build_start=$SECONDS
echo "fuzz: building build-fuzz/ with $FUZZ_CXX" >&2
bs_configure build-fuzz -DCMAKE_CXX_COMPILER="$FUZZ_CXX" -DBOOTSTRAP_FUZZ=ON \
  -DBOOTSTRAP_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DBOOTSTRAP_WERROR="${BOOTSTRAP_WERROR:-OFF}"
targets_to_build=()
for t in "${TARGETS[@]}"; do targets_to_build+=("fuzz_${t%%:*}"); done
cmake --build build-fuzz -j"$(nproc)" --target "${targets_to_build[@]}"
build_seconds=$((SECONDS - build_start))

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
symbolizer=/usr/lib/llvm-14/bin/llvm-symbolizer
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$symbolizer}

known_file=${FUZZ_KNOWN_CRASHES:-tests/fuzz/known_crashes.txt}

# report_of LOG: the report of a finding, from the sanitizer's (or libFuzzer's) first line to the
# reproducer, without the shadow-memory map and the input's hex and base64 dumps.
report_of() {
  awk '/==ERROR:|^terminate called|fuzz invariant failed|runtime error:|ALARM: working on|out-of-memory|ERROR: libFuzzer|LeakSanitizer/ { on = 1 }
       /^Shadow bytes around/ { shadow = 1 }
       /==ABORTING/ { shadow = 0 }
       on && !shadow && !/^#[0-9]+\t/ && !/^0x[0-9a-f][0-9a-f],/ && !/^Base64:/ { print; if (++n >= 80) exit }' "$1" |
    cut -c1-400
}

# known_crash TARGET REPORT: print the description of the known crash whose patterns all match
# REPORT (known_file: tab-separated lines of target, description, one or more extended regexes).
known_crash() {
  local target=$1 report=$2 name description patterns p all
  [ -f "$known_file" ] || return 1
  while IFS=$'\t' read -r name description patterns; do
    [ "$name" = "$target" ] || continue
    all=1
    IFS=$'\t' read -r -a pats <<<"$patterns"
    for p in "${pats[@]}"; do LC_ALL=C grep -Eq -- "$p" "$report" || { all=0; break; }; done
    if [ $all = 1 ]; then printf '%s\n' "$description"; return 0; fi
  done < <(grep -v '^#' "$known_file" | grep -v '^[[:space:]]*$')
  return 1
}

# fuzz_target NAME MAX_LEN: fuzz one target for FUZZ_SECONDS; its messages go to stderr, and its
# exec count and verdict ("ok" or "crash") to $scratch/NAME/result.
fuzz_target() {
  local name=$1 max_len=$2
  local work=$scratch/$name
  mkdir -p "$work/corpus"
  rm -rf "$work/artifacts" "$work/tmp" "$work"/run*.log "$work/result"
  mkdir -p "$work/artifacts" "$work/tmp"
  local dict=()
  [ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")

  local execs=0 runs=0 known=0 verdict="no crash" result=ok log rc n reproducer description
  local deadline=$((SECONDS + FUZZ_SECONDS))
  # A known crash ends a libFuzzer run; fuzzing resumes from the corpus until the time is up.
  while [ $((deadline - SECONDS)) -ge 1 ] && [ $runs -lt 20 ]; do
    runs=$((runs + 1))
    log=$work/run$runs.log
    rc=0
    TMPDIR=$work/tmp "build-fuzz/fuzz_$name" -max_total_time=$((deadline - SECONDS)) \
      -max_len="$max_len" -rss_limit_mb=2048 -timeout="$FUZZ_TIMEOUT" -print_final_stats=1 \
      -print_funcs=0 -artifact_prefix="$work/artifacts/" "${dict[@]}" \
      "$work/corpus" "tests/fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
    n=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
    execs=$((execs + ${n:-0}))
    [ $rc -eq 0 ] && break
    reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    report_of "$log" >"$log.report"
    if description=$(known_crash "$name" "$log.report"); then
      known=$((known + 1))
      echo "fuzz: $name: known crash ($description): $reproducer" >&2
      # A corpus entry kept from an earlier run may be the reproducer itself (libFuzzer names
      # both by the input's SHA-1): drop it, or every restart would stop on it at once.
      [ -n "$reproducer" ] && rm -f "$work/corpus/${reproducer##*-}"
      continue
    fi
    verdict="CRASH" result=crash
    echo "fuzz: $name: FINDING (exit $rc); reproduce:" \
      "build-fuzz/fuzz_$name ${reproducer:-<no artifact: see $log>}" >&2
    sed 's/^/    /' "$log.report" >&2
    break
  done
  local corpus
  corpus=$(find "$work/corpus" -type f | wc -l)
  if [ $known -gt 0 ] && [ "$verdict" = "no crash" ]; then
    verdict="no new crash ($known known, see $known_file)"
  fi
  echo "fuzz: $name: $execs execs, max_len $max_len, corpus $corpus in $work/corpus: $verdict" >&2
  echo "$execs $result" >"$work/result"
}

# Targets run FUZZ_JOBS at a time (libFuzzer uses one core each); each one's messages are printed
# together once it is done.
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc)}
fuzz_start=$SECONDS
running=0
for t in "${TARGETS[@]}"; do
  if [ $running -ge "$FUZZ_JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  mkdir -p "$scratch/${t%%:*}"
  fuzz_target "${t%%:*}" "${t#*:}" 2>"$scratch/${t%%:*}/report.txt" &
  running=$((running + 1))
done
wait

failed=()
total_execs=0
for t in "${TARGETS[@]}"; do
  name=${t%%:*}
  cat "$scratch/$name/report.txt" >&2
  read -r execs result <"$scratch/$name/result" || { execs=0 result=crash; }
  total_execs=$((total_execs + execs))
  [ "$result" = ok ] || failed+=("$name")
done

echo "fuzz: ${#TARGETS[@]} targets, $total_execs execs in $((SECONDS - fuzz_start)) s" \
  "($FUZZ_JOBS at a time; build ${build_seconds} s), scratch $scratch" >&2
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: passed: no crash outside $known_file" >&2
