"""scripts/wheel.sh: the bootstrap binary as a wheel that `uv tool install` puts on PATH."""

from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

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
    assert wheel.name == f"bootstrap-{version.split()[1]}-py3-none-linux_{os.uname().machine}.whl"
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
