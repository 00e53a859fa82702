#!/usr/bin/env bash
# bench/reference_image: the reference recipe's image (recipes/h200-te214.toml, --arch 9.0) built
# by hand with buildah, cold (empty cache mounts) and warm (a rebuild: apex and te-torch from
# the build cache on the cache mount); prints the build times and the image's size. Not in CI:
# it downloads ~4 GB from PyPI and compiles for ~40 CPU-minutes.
#
#   MEGATRON_DIR=... APEX_GIT=... CUDA_DIR=/usr/local/cuda-13.0 PYTHON312=/path/to/python3.12-prefix \
#     bench/reference_image.sh WORKDIR
#
# The base is what a CUDA devel image gives a build, made here from Debian's packages: minbase
# with python3, python3-venv and ca-certificates, the recipe's own needs (g++, git, ninja), the
# CUDA 13.0 toolkit from CUDA_DIR (its lib dir registered with the loader, as its packages do)
# and a Python 3.12 (`[venv] python = "3.12"`: python3.12 on PATH) from PYTHON312, a relocatable
# prefix placed at the same path. torch and the NVIDIA wheels come from PyPI
# (BOOTSTRAP_TORCH_INDEX=BOOTSTRAP_NVIDIA_INDEX=https://pypi.org/simple), apex from APEX_GIT (a
# local clone or mirror). The build gets the CA bundle SSL_CERT_FILE names as the ca-bundle secret.
# REF_SKIP="apex te-torch" passes `--skip` to containerfile (no compiling); after the builds the
# image is checked in place: `plan --check` (exit 0) and a first `run` that changes no file.
set -euo pipefail
cd "$(dirname "$0")/.."
W=$(realpath -m "${1:?usage: bench/reference_image.sh WORKDIR}")
: "${MEGATRON_DIR:?set MEGATRON_DIR to a Megatron-LM checkout}" "${APEX_GIT:?set APEX_GIT to an apex clone}"
: "${CUDA_DIR:?set CUDA_DIR to a CUDA 13.0 toolkit}" "${PYTHON312:?set PYTHON312 to a Python 3.12 prefix}"
BS=${BOOTSTRAP_BIN:-build/bootstrap}
UV=${UV:-.tools/venv/bin/uv}
mkdir -p "$W/tmp"
RUNROOT=$(mktemp -d /tmp/bs-ref-run.XXXXXX)
R=(--root "$W/store" --runroot "$RUNROOT" --storage-driver vfs)
export STORAGE_DRIVER=vfs TMPDIR=$W/tmp BUILDAH_ISOLATION=chroot

if ! buildah "${R[@]}" inspect --type image localhost/ref-base >/dev/null 2>&1; then
  [ -f "$W/base.tar" ] || mmdebstrap --variant=minbase --include=python3,python3-venv,ca-certificates,g++,git,ninja-build,libsqlite3-0,libffi8,libreadline8,libbz2-1.0,liblzma5,libuuid1,zlib1g \
    bookworm "$W/base.tar"
  ctr=$(buildah "${R[@]}" from scratch)
  mnt=$(buildah "${R[@]}" mount "$ctr")
  tar -xf "$W/base.tar" -C "$mnt"
  mkdir -p "$mnt$(dirname "$CUDA_DIR")" "$mnt$(dirname "$PYTHON312")"
  cp -a "$CUDA_DIR" "$mnt$CUDA_DIR" && ln -sfn "$CUDA_DIR" "$mnt/usr/local/cuda"
  echo "$CUDA_DIR/lib" >"$mnt/etc/ld.so.conf.d/zz-cuda.conf"
  echo "$CUDA_DIR/lib64" >>"$mnt/etc/ld.so.conf.d/zz-cuda.conf"
  chroot "$mnt" /sbin/ldconfig
  cp -a "$PYTHON312" "$mnt$PYTHON312" && ln -sf "$PYTHON312/bin/python3.12" "$mnt/usr/local/bin/python3.12"
  buildah "${R[@]}" umount "$ctr" >/dev/null
  buildah "${R[@]}" commit -q --timestamp 0 "$ctr" localhost/ref-base >/dev/null
  buildah "${R[@]}" rm "$ctr" >/dev/null
fi

rm -rf "$W/ctx"
MEGATRON_DIR=$MEGATRON_DIR BOOTSTRAP_APEX_GIT=$APEX_GIT \
BOOTSTRAP_TORCH_INDEX=https://pypi.org/simple BOOTSTRAP_NVIDIA_INDEX=https://pypi.org/simple \
  "$BS" containerfile recipes/h200-te214.toml --arch 9.0 --base localhost/ref-base -o "$W/ctx" --uv "$UV" \
  ${REF_SKIP:+--skip $REF_SKIP}

build() {  # build TAG: the printed `buildah bud` with the sandbox's flags and the CA secret
  local start=$SECONDS
  buildah "${R[@]}" bud --isolation chroot --layers=false --secret "id=ca-bundle,src=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" \
    -t "$1" "$W/ctx" >"$W/build-${1##*:}.log" 2>&1 || { tail -40 "$W/build-${1##*:}.log"; exit 1; }
  echo "$1: $((SECONDS - start)) s ($(grep -c 'build cache hit' "$W/build-${1##*:}.log") build cache hits)"
}
rm -rf "$W/tmp/buildah-cache"  # cold: empty cache mounts
build localhost/h200-te214:cold
echo 'LABEL io.bootstrap.rebuild="warm"' >>"$W/ctx/Dockerfile"
build localhost/h200-te214:warm
buildah "${R[@]}" images --format '{{.Name}}:{{.Tag}} {{.Size}}' | grep -E 'ref-base|h200-te214'
ctr=$(buildah "${R[@]}" from localhost/h200-te214:warm)
buildah "${R[@]}" run "$ctr" -- bootstrap plan /etc/bootstrap/recipe.toml --venv /opt/venv --check >"$W/plan-check.log" 2>&1 \
  && echo "in the image: plan --check exit 0" || { tail -20 "$W/plan-check.log"; echo "in the image: plan --check failed"; }
buildah "${R[@]}" run "$ctr" -- sh -c 'touch /tmp/before-run; sleep 1; bootstrap run /etc/bootstrap/recipe.toml --venv /opt/venv >/dev/null \
  && echo "in the image: first run exit 0, $(find /opt/venv -newer /tmp/before-run | wc -l) file(s) of the venv changed"'
buildah "${R[@]}" rm "$ctr" >/dev/null
