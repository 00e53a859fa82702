#!/usr/bin/env bash
# bench/startup: what the self-contained binary costs to start, against an empty C program (the
# floor: exec, the dynamic loader, libc) in one hyperfine run: `bootstrap --version`, and `plan`
# of a settled two-step recipe (its venv made, every fact cached: what a no-op run pays before
# it finds nothing to do); `uv --version` for scale. Also the binary's size, the shared libraries
# it loads (DT_NEEDED), its glibc floor, and `perf stat`'s task-clock and page faults when perf
# is there. Goal (issue 26): each bootstrap line <= 2 ms above the empty program.
# Usage: bench/startup.sh        BOOTSTRAP_BIN=path uses that binary (and skips scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
bench_setup startup 0

echo "size: $(stat -c %s "$BS") bytes ($(du -h "$BS" | cut -f1))"
echo "loads: $(readelf -d "$BS" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
echo "glibc floor: $(objdump -T "$BS" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)"

printf 'int main(void) { return 0; }\n' >"$W/empty.c"
cc -O2 -o "$W/empty" "$W/empty.c"
{ bench_recipe_head bench-startup; cat <<TOML; } >"$W/startup.toml"
[[step]]
id = "core"
kind = "install"
packages = ["demo-core==1.0.0"]
index_url = "$INDEX"
TOML
bench_first_run "$W/startup.toml"
"$BS" plan "$W/startup.toml" >/dev/null

hyperfine -N --warmup 20 --runs "${RUNS:-300}" --export-json "$W/startup.json" \
  -n "empty C program" "$W/empty" \
  -n "bootstrap --version" "$BS --version" \
  -n "bootstrap plan (settled)" "$BS plan $W/startup.toml" \
  -n "uv --version" "$(command -v uv) --version" >/dev/null
python3 - "$W/startup.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
floor = r["empty C program"]["mean"] * 1000
for name, x in r.items():
    ms = x["mean"] * 1000
    print(f"{name}: {ms:.2f} ms ± {x['stddev'] * 1000:.2f}  ({ms - floor:+.2f} ms above the empty program)")
PY
if command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then
  for cmd in "$W/empty" "$BS --version" "$BS plan $W/startup.toml"; do
    perf stat -r 100 -e task-clock,page-faults $cmd 2>&1 >/dev/null |
      awk -v c="${cmd##*/}" '/task-clock/ {t=$1} /page-faults/ {p=$1} END {print "perf stat " c ": " t " ms task-clock, " p " page faults"}'
  done
fi
bench_rss "bootstrap plan (settled)" "$BS" plan "$W/startup.toml"
