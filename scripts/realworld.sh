#!/usr/bin/env bash
# scripts/realworld.sh: bring the reference recipe (recipes/h200-te214.toml) up on this kind of
# machine from plain PyPI, with real packages and real builds, then check what the recipe
# promises. Not part of .ci/run: it downloads about 4 GB (torch 2.11 cu130 and the NVIDIA
# wheels from PyPI) and compiles apex and TransformerEngine's torch extension (half an hour and
# more on 2 cores).
#
#   scripts/realworld.sh MEGATRON_CHECKOUT APEX_CHECKOUT [WORKDIR]
#
# MEGATRON_CHECKOUT: a Megatron-LM git checkout (its uv.lock is synced; helpers.cpp is built in
# it, so use a scratch clone). APEX_CHECKOUT: an apex git checkout (or a bare mirror) holding
# the commit the recipe pins. Neither is copied into this repository. WORKDIR (default
# build/realworld) holds the venv's $BOOTSTRAP_HOME, the logs and the summary.
#
# Environment: PYTHON (default python3.12, else python3.11 with a notice: the recipe's
# [venv] python is 3.12: a 3.12 goes first on PATH, another version runs a copy of the recipe
# naming it by path), ARCH (default
# 9.0), BOOTSTRAP_BIN (default build/bootstrap).
# The summary (also in WORKDIR/summary.txt) lists each check with its numbers; exit 1 when one
# fails.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
[[ $# -ge 2 ]] || { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
megatron=$(realpath "$1") apex=$(realpath "$2")
work=$(realpath -m "${3:-build/realworld}")
arch=${ARCH:-9.0}
bin=${BOOTSTRAP_BIN:-$repo/build/bootstrap}
[[ -x $bin ]] || { echo "realworld: no binary at $bin (build it: cmake --build build --target bootstrap)" >&2; exit 2; }
[[ -f $megatron/pyproject.toml ]] || { echo "realworld: $megatron is not a Megatron-LM checkout (no pyproject.toml)" >&2; exit 2; }
git -C "$apex" cat-file -e 10417aceddd7d5d05d7cbf7b0fc2daad1105f8b4^{commit} 2>/dev/null ||
    { echo "realworld: $apex does not hold apex commit 10417acedd (the recipe's pin)" >&2; exit 2; }
python=${PYTHON:-}
if [[ -z $python ]]; then
    # A python3.12 on PATH that runs (a pyenv shim for a version not selected does not).
    python=$(command -v python3.12 || true)
    if [[ -z $python ]] || ! "$python" -V >/dev/null 2>&1; then
        python=$(command -v python3.11)
        echo "realworld: no working python3.12 on PATH; using $python"
    fi
fi
"$python" -V >/dev/null 2>&1 || { echo "realworld: PYTHON=$python does not run" >&2; exit 2; }

mkdir -p "$work"
export BOOTSTRAP_HOME=$work/home
export MEGATRON_DIR=$megatron
export BOOTSTRAP_TORCH_INDEX=https://pypi.org/simple
export BOOTSTRAP_NVIDIA_INDEX=https://pypi.org/simple
export BOOTSTRAP_APEX_GIT=$apex
recipe=$repo/recipes/h200-te214.toml
if [[ $("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') == 3.12 ]]; then
    # The recipe asks for "3.12": put this interpreter first on PATH as python3.12, so uv finds
    # exactly it (not a pyenv shim, not a managed download) and the recipe runs unedited (its
    # lockfile then names the committed recipe's digest).
    mkdir -p "$work/bin" && ln -sfn "$(realpath "$python")" "$work/bin/python3.12"
    export PATH=$work/bin:$PATH
else
    # Another version: run a copy of the recipe that names this interpreter by path.
    sed "s|^python = \"3.12\"|python = \"$python\"|" "$recipe" >"$work/h200-te214.toml"
    grep -q "^python = \"$python\"" "$work/h200-te214.toml" || { echo "realworld: cannot set [venv] python" >&2; exit 2; }
    recipe=$work/h200-te214.toml
fi
venv=$megatron/.venv-megatron
summary=$work/summary.txt
: >"$summary"
failures=0
say() { echo "$*" | tee -a "$summary"; }
check() {  # check NAME COMMAND...: run, record ok/FAILED with the wall time
    local name=$1; shift
    local t0 t1 rc
    t0=$(date +%s.%N)
    "$@" >"$work/$name.log" 2>"$work/$name.err"; rc=$?
    t1=$(date +%s.%N)
    if [[ $rc -eq 0 ]]; then say "ok      $name ($(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s)"
    else say "FAILED  $name (exit $rc, $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s): see $work/$name.err and .log"; failures=$((failures + 1)); fi
    return $rc
}
freeze() { "$repo/.tools/venv/bin/uv" pip freeze --python "${1:-$venv}/bin/python" 2>/dev/null | sort; }
# Each installed distribution's RECORD rows (less uv's uv_cache.json and the venv's own scripts,
# whose shebangs name the venv's path): equal for two venvs installed from the same files.
records() {
    "${1:-$venv}/bin/python" - <<'PY'
import hashlib, pathlib, sysconfig
site = pathlib.Path(sysconfig.get_paths()["purelib"])
for d in sorted(site.glob("*.dist-info")):
    rows = [r for r in (d / "RECORD").read_text().splitlines()
            if r and not r.split(",", 1)[0].endswith("/uv_cache.json") and not r.startswith("../../../bin/")]
    print(d.name, hashlib.sha256("\n".join(rows).encode()).hexdigest())
PY
}
peak_rss_mb() { awk '/Maximum resident set size/ {printf "%.0f", $6 / 1024}' "$1"; }

say "$("$bin" --version) on $(uname -m), $(nproc) cpus, python $("$python" -V 2>&1), arch $arch"

json_field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"d": d}))' "$@"; }

# nvidia-resiliency-ext >= 0.6.0 (what Megatron asserts) ships only manylinux_2_39 wheels: on an
# older glibc the optional nvrx step cannot succeed. It fails once (an impossible resolution is
# not retried) and later runs skip it while the step is unchanged.
glibc=$(ldd --version | awk 'NR == 1 { print $NF }')
nvrx_fails=0
if [[ $(printf '%s\n2.39\n' "$glibc" | sort -V | head -1) != 2.39 ]]; then
    nvrx_fails=1
    say "        glibc $glibc < 2.39: the optional nvrx step cannot install here (no wheel for this glibc)"
fi

# 1. The state before the cuBLAS upgrade: venv, Megatron's lock, torch (a run of its own, so the
#    history has an entry to roll back to). No --arch: no selected step reads {device.*}.
check first-steps "$bin" run "$recipe" --only venv megatron-deps torch --json
before=$(json_field "$work/first-steps.log" 'd["history"]["after"]')
freeze >"$work/freeze-before-cublas.txt"

# 2. The whole recipe: every step's verify clauses run when it passes.
check full-run "$bin" run "$recipe" --arch "$arch" --json
full=$(json_field "$work/full-run.log" 'd["history"]["after"]')
freeze >"$work/freeze-full.txt"
records >"$work/records-full.txt"
say "        $(wc -l <"$work/freeze-full.txt") packages; steps: $(json_field "$work/full-run.log" '", ".join("%s %s %.0fs" % (s["id"], s["result"], s["seconds"]) for s in d["steps"])')"
if [[ $nvrx_fails -eq 1 ]]; then
    check nvrx-failed-once test "$(json_field "$work/full-run.log" '[(s["result"], s["attempts"]) for s in d["steps"] if s["id"] == "nvrx"][0]')" = "('failed (optional)', 1)"
fi

# 3. A fixed point: the next run runs no step (the failed optional one is skipped with its
#    reason), changes nothing, writes no history, starts no Python for the device (--arch) and
#    asks no index. Its wall time and peak RSS; `plan` predicts the same.
history_before=$(ls "$venv/.bootstrap/history" | wc -l)
check noop /usr/bin/time -v -o "$work/noop.time" "$bin" run "$recipe" --arch "$arch" --json
ran=$(json_field "$work/noop.log" '" ".join(s["id"] for s in d["steps"] if s["result"] not in ("skipped", "not selected"))' 2>/dev/null)
if [[ -n $ran ]]; then say "FAILED  noop ran: $ran"; failures=$((failures + 1)); fi
check noop-no-history test "$(ls "$venv/.bootstrap/history" | wc -l)" = "$history_before"
say "        no-op: $(json_field "$work/noop.log" 'round(d["seconds"] * 1000, 1)') ms, peak RSS $(peak_rss_mb "$work/noop.time") MB"
[[ $nvrx_fails -eq 1 ]] && say "        nvrx on the no-op: $(json_field "$work/noop.log" '[s["reason"] for s in d["steps"] if s["id"] == "nvrx"][0]')"
check plan-says-skip bash -c "'$bin' plan '$recipe' --arch '$arch' | grep -E '^  would (run|re-verify)' && exit 1 || exit 0"
check fixed-point cmp -s "$work/freeze-full.txt" <(freeze)
check verify-all "$bin" run "$recipe" --arch "$arch" --verify

# 4. doctor on the real venv, with the recipe (its imports, pins, symbols, kernels), and as a
#    node admin runs it inside an image: no recipe, the venv's own records.
check doctor "$bin" doctor --venv "$venv" --recipe "$recipe" --arch "$arch"
check doctor-no-recipe "$bin" doctor --venv "$venv" --arch "$arch"

# 5. Rollback to before the cuBLAS upgrade, and forward again: exact both ways.
check rollback-back "$bin" rollback --venv "$venv" --to "$before"
check rollback-back-exact cmp -s "$work/freeze-before-cublas.txt" <(freeze)
check rollback-forward "$bin" rollback --venv "$venv" --to "$full"
check rollback-forward-exact cmp -s "$work/freeze-full.txt" <(freeze)

# 6. A lockfile of what came up (exact versions, sha256, origins, each step's closure; nvrx as
#    not covered where it failed), and a --locked run over the same venv that changes nothing.
check lock "$bin" lock "$recipe" --venv "$venv" -o "$work/h200-te214.lock.json"
check locked-noop "$bin" run "$recipe" --arch "$arch" --lockfile "$work/h200-te214.lock.json" --json
check locked-fixed-point cmp -s "$work/freeze-full.txt" <(freeze)

# 7. A fresh node: --locked into an empty path, from the lock just written and from the
#    committed one (te-torch and apex from the build cache): the same packages, the same files.
for which in written committed; do
    lockfile=$work/h200-te214.lock.json
    [[ $which == committed ]] && lockfile=$repo/lockfiles/h200-te214.lock.json
    fresh=$work/fresh-$which
    rm -rf "$fresh"
    check "locked-fresh-$which" "$bin" run "$recipe" --arch "$arch" --venv "$fresh" --lockfile "$lockfile" --json
    check "locked-fresh-$which-freeze" cmp -s "$work/freeze-full.txt" <(freeze "$fresh")
    check "locked-fresh-$which-records" cmp -s "$work/records-full.txt" <(records "$fresh")
done

say "$failures check(s) failed; logs in $work"
[[ $failures -eq 0 ]]
