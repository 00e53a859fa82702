#!/usr/bin/env bash
# The unit tests under AddressSanitizer + UndefinedBehaviorSanitizer: build build-asan/ with g++
# (-fsanitize=address,undefined -fno-sanitize-recover=all -O1 -g1: line tables are what a report's
# file:line needs, and build faster than full -g; every library instrumented) and
# run ctest there. Any sanitizer report fails the test that triggered it, and so this script.
#
#   scripts/sanitize.sh [CTEST_ARGS...]     e.g. -R pyenv: to run one module's tests
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/configure.sh

start=$SECONDS
bs_configure build-asan -DBOOTSTRAP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DBOOTSTRAP_WERROR="${BOOTSTRAP_WERROR:-OFF}"
echo "sanitize: building build-asan/ (ASan+UBSan, g++ -O1)" >&2
cmake --build build-asan -j"$(nproc)" --target unit_tests  # not the CLI: no unit test uses it
build_seconds=$((SECONDS - start))

# halt_on_error: a UBSan report aborts the test (with -fno-sanitize-recover=all it would anyway).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
rc=0
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" "$@" || rc=$?
echo "sanitize: unit tests under ASan+UBSan $([ $rc -eq 0 ] && echo passed || echo FAILED)" \
  "(build ${build_seconds} s, tests $((SECONDS - start - build_seconds)) s)" >&2
exit $rc
