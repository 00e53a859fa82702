#!/usr/bin/env bash
# Package the bootstrap binary as a wheel, the way uv, ruff, cmake and ninja ship: installing it
# (`uv tool install bootstrap-*.whl`, `pip install`) puts `bootstrap` on PATH. A plain wheel
# writer (no build backend): the binary is the wheel's one script (bootstrap-V.data/scripts/).
#
#   scripts/wheel.sh [-b BINARY] [-o OUTDIR]     (defaults: build/bootstrap, build/dist/)
#
# The version is the binary's own (`bootstrap --version`, its first word). The platform tag is
# manylinux_2_<Y>_<machine>, Y the newest GLIBC_2.Y symbol version the binary asks for, when it
# loads nothing but glibc and libgcc_s (the portable build, CMakeLists.txt: what auditwheel
# accepts); otherwise linux_<machine> (a build linked to the distribution's shared libraries
# installs only where they are). Members are sorted and dated SOURCE_DATE_EPOCH (else
# 1980-01-01): one binary, one wheel.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=build/bootstrap
out=build/dist
while [ $# -gt 0 ]; do
  case $1 in
    -b) [ $# -ge 2 ] || { echo "wheel: -b needs the binary's path" >&2; exit 2; }; binary=$2; shift 2 ;;
    -o) [ $# -ge 2 ] || { echo "wheel: -o needs a directory" >&2; exit 2; }; out=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "wheel: unknown argument '$1' (see scripts/wheel.sh --help)" >&2; exit 2 ;;
  esac
done
[ -x "$binary" ] || { echo "wheel: no executable binary at '$binary' (build it: cmake --build build --target bootstrap)" >&2; exit 1; }
version_line=$("$binary" --version) || { echo "wheel: '$binary --version' failed" >&2; exit 1; }
version=$(echo "$version_line" | awk '{print $2}')
[[ $version =~ ^[0-9]+(\.[0-9]+)*$ ]] || { echo "wheel: cannot read a version from '$version_line'" >&2; exit 1; }
mkdir -p "$out"

# What the binary needs of the system: its DT_NEEDED libraries and its newest glibc version.
needed=$(LC_ALL=C readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
glibc=$(LC_ALL=C objdump -T "$binary" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)
platform=linux_$(uname -m)
extra=$(echo "$needed" | grep -v -E '^(libc|libm|libgcc_s|libpthread|libdl|librt|ld-linux-x86-64|ld-linux-aarch64)\.so' || true)
if [ -z "$extra" ] && [ -n "$glibc" ]; then
  platform=manylinux_2_${glibc#GLIBC_2.}_$(uname -m)
else
  echo "wheel: tagged $platform: the binary loads $(echo $extra | tr '\n' ' ')(not a portable build)" >&2
fi

python3 - "$binary" "$version" "$out" "$platform" <<'EOF'
import base64, hashlib, os, sys, zipfile

binary, version, out, platform = sys.argv[1:5]
name = "bootstrap"
tag = f"py3-none-{platform}"
epoch = max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)  # zip starts at 1980
import time
date = time.gmtime(epoch)[:6]
dist_info = f"{name}-{version}.dist-info"
data = f"{name}-{version}.data"
with open(binary, "rb") as f:
    exe = f.read()
files = {
    f"{data}/scripts/bootstrap": (exe, 0o755),
    f"{dist_info}/METADATA": (("Metadata-Version: 2.1\n"
                               f"Name: {name}\nVersion: {version}\n"
                               "Summary: Build reproducible GPU training environments from declarative recipes\n"
                               "Requires-Python: >=3.8\n").encode(), 0o644),
    f"{dist_info}/WHEEL": (("Wheel-Version: 1.0\nGenerator: bootstrap scripts/wheel.sh\n"
                            f"Root-Is-Purelib: false\nTag: {tag}\n").encode(), 0o644),
}

def digest(b: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()

record = "".join(f"{p},{digest(b)},{len(b)}\n" for p, (b, _) in sorted(files.items()))
record += f"{dist_info}/RECORD,,\n"
files[f"{dist_info}/RECORD"] = (record.encode(), 0o644)
wheel = os.path.join(out, f"{name}-{version}-{tag}.whl")
part = wheel + f".part-{os.getpid()}"
try:
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(files, key=lambda p: (p.endswith("RECORD"), p)):  # RECORD last
            content, mode = files[path]
            info = zipfile.ZipInfo(path, date)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, content)
    os.replace(part, wheel)
finally:
    if os.path.exists(part):
        os.unlink(part)
print(wheel)
EOF
