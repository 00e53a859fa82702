#!/usr/bin/env bash
# bench/pack: `bootstrap pack` / `unpack` against `tar --zstd` (GNU tar + zstd -3, the same
# level) on the same venv, timed in one run: wall seconds and MB/s of venv data.
#   bench/pack.sh VENV [RUNS=3]     (BOOTSTRAP_BIN=path: the binary, default build/bootstrap)
# Use a real venv (e.g. one with torch and its NVIDIA wheels, several GB): a small one measures
# process start, not throughput. Unpack includes relocation and the check against the manifest.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(realpath "${1:?usage: bench/pack.sh VENV [RUNS]}")
runs=${2:-3}
bs=$(realpath "${BOOTSTRAP_BIN:-build/bootstrap}")
w=$(mktemp -d /tmp/bootstrap-bench-pack.XXXXXX)
trap 'rm -rf "$w"' EXIT
mb=$(du -sm --apparent-size "$venv" | cut -f1)
best() {  # best NAME CMD...: the fastest of $runs runs, in seconds
  local name=$1 t0 t1 best=""; shift
  for _ in $(seq "$runs"); do
    rm -rf "$w/out" "$w/x.tar.zst"
    t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
    best=$(echo "$t1 - $t0" | bc | awk -v b="$best" '{ if (b == "" || $1 < b) print $1; else print b }')
  done
  printf '%-28s %7.2f s  %7.1f MB/s\n' "$name" "$best" "$(echo "$mb / $best" | bc -l)"
}
echo "venv $venv: $mb MB, $(find "$venv" -type f | wc -l) files; best of $runs"
best "bootstrap pack" "$bs" pack --venv "$venv" -o "$w/x.tar.zst"
"$bs" pack --venv "$venv" -o "$w/pack.tar.zst" >/dev/null
best "tar --zstd -c (zstd -3)" tar --zstd -cf "$w/x.tar.zst" -C "$venv" .
tar --zstd -cf "$w/tar.tar.zst" -C "$venv" .
best "bootstrap unpack" "$bs" unpack "$w/pack.tar.zst" "$w/out"
best "tar --zstd -x" sh -c "mkdir '$w/out' && tar --zstd -xf '$w/tar.tar.zst' -C '$w/out'"
echo "sizes: bootstrap $(du -m "$w/pack.tar.zst" | cut -f1) MB, tar $(du -m "$w/tar.tar.zst" | cut -f1) MB"
