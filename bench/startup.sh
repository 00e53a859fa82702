#!/usr/bin/env bash
# bench/startup: what the self-contained binary costs to start and carry: `bootstrap --version`
# against `uv --version` (both single static-ish binaries) in one hyperfine run, the binary's
# size, the shared libraries it loads (DT_NEEDED) and its glibc floor (newest GLIBC_2.Y asked).
# Usage: bench/startup.sh        BOOTSTRAP_BIN=path uses that binary (and skips scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${BOOTSTRAP_BIN:-}" ]; then
  BS=$BOOTSTRAP_BIN
else
  bash scripts/setup.sh --test-tools >/dev/null  # hyperfine: a test tool
  BS=build/bootstrap
fi
export PATH="$PWD/.tools/venv/bin:$PATH"
W=$(mktemp -d /tmp/bootstrap-bench-startup.XXXXXX)
trap 'rm -rf "$W"' EXIT
source bench/lib.sh

echo "size: $(stat -c %s "$BS") bytes ($(du -h "$BS" | cut -f1))"
echo "loads: $(readelf -d "$BS" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
echo "glibc floor: $(objdump -T "$BS" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)"
hyperfine -N --warmup 20 --runs 300 --export-json "$W/startup.json" \
  -n "bootstrap --version" "$BS --version" \
  -n "uv --version" "$(command -v uv) --version"
bench_ratios "$W/startup.json"
