#!/usr/bin/env bash
# bench/device_noop: a no-op re-run of a recipe whose build step needs {device.*}, over a venv
# with ~110 installed distributions including a stand-in torch (tests/fixtures/fake_torch, given
# a dist-info like an installed one; it sleeps FAKE_TORCH_IMPORT_SECONDS (default 0) when
# imported, as a real torch takes seconds). Three cases; wall time by hyperfine, peak RSS by
# /usr/bin/time, and how many times torch was imported (FAKE_TORCH_IMPORT_LOG):
#   --arch 9.0      nothing is probed
#   cached          no --arch: torch's answer from <venv>/.bootstrap/torch-probe.json
#   cache removed   no --arch, the cache deleted before each run: the venv's python imports torch
# Usage: bench/device_noop.sh [FILLER_PACKAGES=100]   (BOOTSTRAP_BIN=path: use that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
N=${1:-100}
bench_setup device-noop "$N"

list() { seq -f "\"filler-%04g\"" "$1" "$2" | paste -sd, -; }
cat >"$W/device.toml" <<TOML
schema = 1
name = "bench-device-noop"
[device]
probes = ["torch", "driver", "nvml", "nvidia-smi"]
[venv]
path = "$W/venv"
python = "3.11"
[[step]]
id = "venv"
kind = "venv"
[[step]]
id = "fillers"
kind = "install"
packages = [$(list 1 "$N")]
index_url = "$INDEX"
[[step]]
id = "libs"
kind = "install"
packages = ["demo-torch==2.11.0", "demo-utils", "transformers", "wandb"]
index_url = "$INDEX"
[[step]]
id = "build"
kind = "run"
argv = ["true"]
env = { TORCH_CUDA_ARCH_LIST = "{device.torch_arch_list}" }
TOML

"$BS" "$W/device.toml" --arch 9.0 >"$W/first-run.log" 2>&1 || { cat "$W/first-run.log"; exit 1; }
site=$(echo "$W"/venv/lib/python3.11/site-packages)
cp -r tests/fixtures/fake_torch/torch "$site/torch"
# A real torch's import costs seconds: the stand-in sleeps instead (the cold case shows it).
printf 'import time as _t, os as _o\n_t.sleep(float(_o.environ.get("FAKE_TORCH_IMPORT_SECONDS", "0")))\n' \
  >>"$site/torch/__init__.py"
mkdir "$site/torch-2.11.0.dist-info"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0\n' >"$site/torch-2.11.0.dist-info/METADATA"
(cd "$site" && find torch -type f -printf '%p,,\n' && echo 'torch-2.11.0.dist-info/RECORD,,') \
  >"$site/torch-2.11.0.dist-info/RECORD"
export FAKE_TORCH_DEVICES="9.0" FAKE_TORCH_IMPORT_SECONDS="${FAKE_TORCH_IMPORT_SECONDS:-0}"
# Any GPU driver on this machine would be probed too (it is, live, on every run).
"$BS" "$W/device.toml" >"$W/second-run.log" 2>&1 || { cat "$W/second-run.log"; exit 1; }
count=$(ls -d "$site"/*.dist-info | wc -l)
echo "venv: $count installed distributions (torch import sleeps ${FAKE_TORCH_IMPORT_SECONDS}s)" >&2

# One --prepare per command (a single one would run before every command's runs).
hyperfine -N --warmup 3 --runs 30 --export-json "$W/device-noop.json" \
  --prepare true -n "no-op --arch 9.0" "$BS $W/device.toml --arch 9.0" \
  --prepare true -n "no-op, torch answer cached" "$BS $W/device.toml" \
  --prepare "rm -f $W/venv/.bootstrap/torch-probe.json" \
  -n "no-op, cache removed (imports torch)" "$BS $W/device.toml"

imports() {  # imports ARGS...: how many times one run imported torch
  rm -f "$W/imports.log"
  FAKE_TORCH_IMPORT_LOG="$W/imports.log" "$@" >/dev/null 2>&1
  if [ -f "$W/imports.log" ]; then wc -l <"$W/imports.log"; else echo 0; fi
}
rss() {  # rss LABEL ARGS...: the largest peak RSS among bootstrap and the children it waited for
  # (time -v reports wait4's ru_maxrss: a python that imports torch counts, as it should)
  local label=$1
  shift
  /usr/bin/time -v "$@" >/dev/null 2>"$W/time.txt"
  printf '%-40s %6s MB peak RSS, %s s wall\n' \
    "$label" "$(awk '/Maximum resident/ {printf "%.1f", $6/1024}' "$W/time.txt")" \
    "$(awk '/Elapsed \(wall/ {print $NF}' "$W/time.txt")"
}
rss "no-op --arch 9.0" "$BS" "$W/device.toml" --arch 9.0
rss "no-op, torch answer cached" "$BS" "$W/device.toml"
rm -f "$W/venv/.bootstrap/torch-probe.json"
rss "no-op, cache removed (imports torch)" "$BS" "$W/device.toml"
echo "torch imported by one run: --arch 9.0: $(imports "$BS" "$W/device.toml" --arch 9.0)," \
  "cached: $(imports "$BS" "$W/device.toml")," \
  "cache removed: $(rm -f "$W/venv/.bootstrap/torch-probe.json"; imports "$BS" "$W/device.toml")"
python3 - "$W/device-noop.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"{r['command']}: {r['mean']*1000:.1f} ms ± {r['stddev']*1000:.1f} (median {r['median']*1000:.1f})")
PY
