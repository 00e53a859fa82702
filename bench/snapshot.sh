#!/usr/bin/env bash
# bench/snapshot: `bootstrap snapshot` against `uv pip freeze` (and `pip freeze`) of the same
# venv, in one hyperfine run per size, printing the ratio and each side's peak RSS.
# Usage: bench/snapshot.sh [SIZE...]       fixture venvs of SIZE filler packages (default: 30 300 3000)
#        bench/snapshot.sh --venv PATH     an existing venv (a real torch + nvidia-* one, say)
# BOOTSTRAP_BIN=path uses that binary (and skips scripts/setup.sh). Goal (issue 26): <= 0.5.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

# measure VENV: the first snapshot asks Python for its facts once and caches them (and the host
# facts) in the venv, as any bootstrap run on it would have; the measured runs spawn nothing.
# Then the package cache is dropped and the first snapshot of every dist-info is timed on its own
# (2 s after the install: a stamp in the same timestamp tick as a read is not cached, and a
# whole-second one settles after 2 s); the measured ones are the settled, repeated case.
measure() {
  local venv=$1 count
  count=$(ls -d "$venv"/lib/python3*/site-packages/*.dist-info | wc -l)
  "$BS" snapshot --venv "$venv" -o /dev/null
  rm -f "$venv/.bootstrap/packages.cache"
  sleep 2
  /usr/bin/time -o "$W/first.time" -f '%e' "$BS" snapshot --venv "$venv" -o "$W/first.json"
  echo "first snapshot after the install (reads every dist-info): $(cat "$W/first.time") s"
  test "$(grep -c '"version"' "$W/first.json")" -ge "$count"
  local pip=()
  [ -x "$venv/bin/pip" ] && pip=(-n "pip freeze" "$venv/bin/python -m pip freeze")
  echo "== venv: $count installed distributions ($venv)"
  hyperfine -N --warmup 5 --runs "${RUNS:-30}" --export-json "$W/snapshot.json" \
    -n "bootstrap snapshot" "$BS snapshot --venv $venv -o /dev/null" \
    -n "uv pip freeze" "uv pip freeze --python $venv/bin/python" "${pip[@]}" >/dev/null
  bench_ratios "$W/snapshot.json"
  bench_rss "bootstrap snapshot" "$BS" snapshot --venv "$venv" -o /dev/null
  bench_rss "uv pip freeze" uv pip freeze --python "$venv/bin/python"
}

if [ "${1:-}" = "--venv" ]; then
  bench_setup snapshot 0
  measure "$(cd "$2" && pwd)"
  exit 0
fi
bench_sizes "$@"
bench_setup snapshot "$max"
for n in "${sizes[@]}"; do
  # `python3 -m venv` so that pip is in the venv (for `pip freeze`); the packages go in with uv.
  python3 -m venv "$W/venv-$n"
  seq -f "filler-%04g" 1 "$n" >"$W/reqs-$n.txt"
  uv pip install -q --python "$W/venv-$n/bin/python" --index-url "$INDEX" -r "$W/reqs-$n.txt"
  measure "$W/venv-$n"
done
