#!/usr/bin/env bash
# bench/build_cache: a build step answered by the build cache (`run --only fastext --force`: key
# computation — torch/nvcc/compiler facts — plus installing the cached wheel) against what the
# same step costs without a cache (`uv build --wheel` of the source, then the install) and against
# the install alone (the floor), in one hyperfine run. The source is the test world's `fastext`,
# a tiny C extension (a real compile of ~0.2 s); an apex build costs ~15 minutes instead.
# Usage: bench/build_cache.sh   (BOOTSTRAP_BIN=path: use that binary, skip setup)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
bench_setup build 0

python3 testworld/make_sources.py --out "$W/src" >/dev/null
export BOOTSTRAP_HOME="$W/home"
{ bench_recipe_head bench-build; cat <<TOML; } >"$W/bench.toml"
[[step]]
id = "fastext"
kind = "build"
source = { path = "$W/src/fastext" }
env = { TORCH_CUDA_ARCH_LIST = "9.0" }
verify = [{ import = "fastext", attr = "answer" }]
TOML

bench_first_run "$W/bench.toml"
wheel=$(ls "$W"/home/builds/*/fastext-*.whl)
py="$W/venv/bin/python"

hyperfine -N --warmup 3 --runs 20 --export-json "$W/build.json" \
  -n "bootstrap build step, cache hit" "$BS $W/bench.toml --only fastext --force" \
  -n "uv build + install (no cache)" \
  "bash -c 'rm -rf $W/out && uv build -q --wheel --out-dir $W/out --python $py $W/src/fastext && uv pip install -q --python $py --reinstall-package fastext $W/out/*.whl'" \
  -n "uv pip install of the cached wheel (floor)" \
  "uv pip install -q --python $py --reinstall-package fastext $wheel"

bench_ratios "$W/build.json"
