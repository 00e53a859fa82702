#!/usr/bin/env bash
# The offline demo: set up, write the fixture wheelhouse, serve it on loopback, run the
# embedded demo recipe (`bootstrap demo`), then run it again to show a no-op re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --target bootstrap  # the unit tests are scripts/test.sh's

DEMO=${BOOTSTRAP_DEMO_DIR:-$PWD/.demo}
mkdir -p "$DEMO"
python3 testworld/make_wheels.py "$DEMO/wheels" >/dev/null
rm -f "$DEMO/port"
python3 testworld/index_server.py --root "$DEMO/wheels" --port 0 --port-file "$DEMO/port" \
  >"$DEMO/index.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$DEMO/port" ] && break; sleep 0.1; done
[ -s "$DEMO/port" ] || { echo "demo: the fixture index did not start (see $DEMO/index.log)" >&2; exit 1; }

export PATH="$PWD/.tools/venv/bin:$PATH"
export BOOTSTRAP_DEMO_INDEX="http://127.0.0.1:$(cat "$DEMO/port")"
export BOOTSTRAP_DEMO_DIR="$DEMO"
export UV_CACHE_DIR="$DEMO/uv-cache"

echo "== bootstrap demo (fixture index at $BOOTSTRAP_DEMO_INDEX)" >&2
build/bootstrap demo "$@"
echo "== again: everything is up to date, nothing runs" >&2
build/bootstrap demo "$@"
echo "== a second venv from the committed lockfile (pinned versions, sha256-checked wheels)" >&2
build/bootstrap recipes/demo.toml --locked --venv "$DEMO/locked-venv" "$@"
