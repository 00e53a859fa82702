# Sourced by the bench scripts. bench_setup NAME FILLERS:
#   - runs scripts/setup.sh unless BOOTSTRAP_BIN names a binary to use (then BS is that binary);
#   - makes a scratch dir W (removed on exit), writes the fixture wheelhouse with FILLERS extra
#     packages, serves it on a free loopback port, and sets INDEX (the main group's simple URL)
#     and UV_CACHE_DIR.
# The index sends PyPI's caching headers (`Cache-Control: max-age=600` on simple pages,
# `immutable` on files), so uv answers from its cache the way it does against pypi.org instead
# of revalidating every page; a comparison against an index without them flatters bootstrap.
bench_setup() {
  local name=$1 fillers=$2
  if [ -n "${BOOTSTRAP_BIN:-}" ]; then
    BS=$BOOTSTRAP_BIN
  else
    bash scripts/setup.sh --test-tools >/dev/null  # hyperfine, python3-dev: test tools
    BS=build/bootstrap
  fi
  export PATH="$PWD/.tools/venv/bin:$PATH"
  W=$(mktemp -d "/tmp/bootstrap-bench-$name.XXXXXX")
  trap 'kill $BENCH_SERVER 2>/dev/null || true; rm -rf "$W"' EXIT
  python3 testworld/make_wheels.py --filler "$fillers" "$W/wheels" >/dev/null
  python3 testworld/index_server.py --root "$W/wheels" --port 0 --port-file "$W/port" \
    --cache-max-age 600 \
    >"$W/index.log" 2>&1 &
  BENCH_SERVER=$!
  for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.1; done
  [ -s "$W/port" ] || { echo "bench: the fixture index did not start (see $W/index.log)" >&2; exit 1; }
  INDEX="http://127.0.0.1:$(cat "$W/port")/main/simple"
  export UV_CACHE_DIR="$W/uv-cache"
}

# bench_ratios HYPERFINE_JSON: each command's mean ± stddev, and the first command's time as a
# ratio of each of the others (below 1: bootstrap is faster).
bench_ratios() {
  python3 - "$1" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
ms = lambda x: f"{x['mean']*1000:.1f} ms ± {x['stddev']*1000:.1f}"
print("; ".join(f"{r['command']}: {ms(r)}" for r in results))
first = results[0]
print("; ".join(f"ratio {first['command']} / {r['command']} = {first['mean']/r['mean']:.3f}"
                for r in results[1:]))
PY
}

# bench_recipe_head NAME [VENV]: the start of a recipe over VENV (default $W/venv), its venv step
# included; the caller appends its own steps.
bench_recipe_head() {
  printf 'schema = 1\nname = "%s"\n[venv]\npath = "%s"\npython = "3.11"\n[[step]]\nid = "venv"\nkind = "venv"\n' \
    "$1" "${2:-$W/venv}"
}

# bench_fillers FROM TO: the TOML list of the filler packages FROM..TO.
bench_fillers() { seq -f "\"filler-%04g\"" "$1" "$2" | paste -sd, -; }

# bench_first_run ARGS...: the run that makes the venv; its stderr is shown when it fails.
bench_first_run() { "$BS" "$@" 2>"$W/first-run.log" || { cat "$W/first-run.log"; exit 1; }; }

# bench_installed [VENV]: how many distributions VENV (default $W/venv) holds.
bench_installed() { ls -d "${1:-$W/venv}"/lib/python3.11/site-packages/*.dist-info | wc -l; }

# bench_rss LABEL CMD...: CMD's peak resident set size (GNU time's %M), printed as "LABEL: peak RSS N MB".
bench_rss() {
  local label=$1 kb
  shift
  /usr/bin/time -o "$W/rss" -f '%M' "$@" >/dev/null 2>&1
  kb=$(tail -1 "$W/rss")
  echo "$label: peak RSS $((kb / 1024)) MB"
}

# bench_sizes [SIZE...]: sets `sizes` to the arguments (default 30 300 3000) and `max` to the
# largest, the filler count bench_setup needs.
bench_sizes() {
  sizes=("$@")
  [ ${#sizes[@]} -gt 0 ] || sizes=(30 300 3000)
  max=0
  for n in "${sizes[@]}"; do [ "$n" -gt "$max" ] && max=$n; done
}
