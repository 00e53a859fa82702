"""scripts/wheel.sh: the bootstrap binary as a manylinux wheel (what auditwheel says), which
`uv tool install` puts on PATH, here and on a bare base image."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bare_base import CHROOT, bare_root, ok

REPO = Path(__file__).resolve().parents[2]
WHEEL_SH = REPO / "scripts" / "wheel.sh"


def make_wheel(bootstrap_bin, out: Path, env: dict | None = None) -> Path:
    proc = subprocess.run(["bash", str(WHEEL_SH), "-b", str(bootstrap_bin), "-o", str(out)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1])


def test_uv_tool_install_of_the_wheel_runs_bootstrap(bootstrap_bin, uv_bin, tmp_path, clean_env):
    wheel = make_wheel(bootstrap_bin, tmp_path / "dist")
    version = subprocess.run([str(bootstrap_bin), "--version"], capture_output=True, text=True).stdout
    assert re.fullmatch(rf"bootstrap-{re.escape(version.split()[1])}-py3-none-manylinux_2_\d+_{os.uname().machine}\.whl",
                        wheel.name), wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        script = next(n for n in names if n.endswith(".data/scripts/bootstrap"))
        assert z.getinfo(script).external_attr >> 16 & 0o111
        assert names[-1].endswith(".dist-info/RECORD")
    env = clean_env({"UV_TOOL_DIR": tmp_path / "tools", "UV_TOOL_BIN_DIR": tmp_path / "bin",
                     "UV_CACHE_DIR": tmp_path / "uv-cache", "UV_PYTHON_DOWNLOADS": "never"})
    proc = subprocess.run([str(uv_bin), "tool", "install", "--offline", str(wheel)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    installed = subprocess.run([str(tmp_path / "bin" / "bootstrap"), "--version"], capture_output=True, text=True)
    assert installed.returncode == 0 and installed.stdout == version


def test_the_same_binary_makes_the_same_wheel(bootstrap_bin, tmp_path):
    env = {"SOURCE_DATE_EPOCH": "1700000000"}
    a = make_wheel(bootstrap_bin, tmp_path / "a", env)
    b = make_wheel(bootstrap_bin, tmp_path / "b", env)
    assert a.read_bytes() == b.read_bytes()
    assert not [p for p in (tmp_path / "a").iterdir() if ".part-" in p.name]


def test_wheel_sh_names_a_missing_binary(tmp_path):
    proc = subprocess.run(["bash", str(WHEEL_SH), "-b", str(tmp_path / "nope"), "-o", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and str(tmp_path / "nope") in proc.stderr


def glibc_floor(binary: Path) -> int:
    """The newest GLIBC_2.Y symbol version the binary asks for: Y."""
    symbols = ok(subprocess.run(["objdump", "-T", str(binary)], capture_output=True, text=True)).stdout
    return max(int(m) for m in re.findall(r"GLIBC_2\.(\d+)", symbols))


def test_auditwheel_accepts_the_wheel_as_manylinux(bootstrap_bin, tmp_path):
    """The binary loads only glibc and libgcc_s: auditwheel (PyPI's reference for manylinux)
    finds the wheel consistent with its tag, manylinux_2_34 or lower."""
    beside = Path(sys.executable).parent / "auditwheel"  # the tools venv running pytest
    auditwheel = str(beside) if beside.exists() else shutil.which("auditwheel")
    if auditwheel is None:
        pytest.skip("auditwheel is not installed (scripts/setup.sh puts it in .tools/venv)")
    wheel = make_wheel(bootstrap_bin, tmp_path / "dist")
    tag = re.search(r"(manylinux_2_(\d+)_\w+)\.whl$", wheel.name)
    assert tag and int(tag.group(2)) <= 34, wheel.name
    assert int(tag.group(2)) == glibc_floor(bootstrap_bin)
    shown = ok(subprocess.run([auditwheel, "show", str(wheel)], capture_output=True, text=True, timeout=120))
    text = " ".join(shown.stdout.split())
    assert f'is consistent with the following platform tag: "{tag.group(1)}"' in text, shown.stdout
    needed = ok(subprocess.run(["readelf", "-d", str(bootstrap_bin)], capture_output=True, text=True)).stdout
    libs = sorted(re.findall(r"\(NEEDED\).*\[(.*)\]", needed))
    assert set(libs) <= {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"}, libs


def test_the_wheel_installs_with_uv_tool_on_a_bare_base(bootstrap_bin, uv_bin, tmp_path):
    """`uv tool install` of the wheel into a fresh directory inside the bare base image
    (python3 and CA certificates only: no libarchive, libssl, zlib), then `bootstrap --version`
    there."""
    if os.geteuid() != 0 or shutil.which("mmdebstrap") is None:
        pytest.skip("needs root and mmdebstrap for the bare base (scripts/setup.sh --test-tools)")
    wheel = make_wheel(bootstrap_bin, tmp_path / "dist")
    root = bare_root(tmp_path / "root")
    shutil.copy2(wheel, root / "tmp" / wheel.name)
    shutil.copy2(uv_bin, root / "usr/local/bin/uv")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "UV_TOOL_DIR": "/opt/tools",
           "UV_TOOL_BIN_DIR": "/opt/tools/bin", "UV_CACHE_DIR": "/tmp/uv-cache", "UV_PYTHON_DOWNLOADS": "never",
           "UV_NO_CONFIG": "1"}
    ok(subprocess.run([CHROOT, str(root), "uv", "tool", "install", "--offline", f"/tmp/{wheel.name}"],
                      capture_output=True, text=True, env=env, timeout=300))
    ran = ok(subprocess.run([CHROOT, str(root), "/opt/tools/bin/bootstrap", "--version"], capture_output=True,
                            text=True, env=env))
    assert ran.stdout == subprocess.run([str(bootstrap_bin), "--version"], capture_output=True, text=True).stdout
    shutil.rmtree(root, ignore_errors=True)
