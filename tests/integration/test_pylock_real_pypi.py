"""pylock.toml both ways on real PyPI (the README's recipe, real uv): PyPI's own file URLs,
binary wheels, a capitalised project. Skipped, never passed, when PyPI cannot be reached
(test_real_pypi.py's rules and cache)."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from test_real_pypi import RECIPE, Real, pypi_unreachable, recipe_text


@pytest.fixture(scope="module")
def real(tmp_path_factory, uv_bin, bootstrap_bin) -> Real:
    if why := pypi_unreachable():
        pytest.skip(f"PyPI unreachable: {why}")
    return Real(tmp_path_factory.mktemp("real-pylock"), uv_bin, bootstrap_bin)


def uv(real: Real, *args) -> subprocess.CompletedProcess:
    """uv ARGS, a network failure tried again as Real.run does."""
    for _ in range(3):
        r = subprocess.run([str(real.uv), *[str(a) for a in args]], env=real.full_env(), cwd=real.root,
                           capture_output=True, text=True, timeout=600)
        if r.returncode == 0:
            return r
    if why := pypi_unreachable():
        pytest.skip(f"PyPI became unreachable: {why}")
    raise AssertionError(f"uv {args}: exit {r.returncode}\n{r.stderr}")


def synced(real: Real, pylock: Path, name: str) -> Path:
    venv = real.root / name
    uv(real, "venv", "--python", "3.11", venv)
    uv(real, "pip", "sync", "--python", venv / "bin" / "python", pylock)
    return venv


def test_bootstraps_pylock_of_a_pypi_venv_installs_with_uv_and_with_bootstrap(real):
    venv = real.root / "venv"
    real.run([RECIPE, "--venv", venv])
    pylock = real.root / "pylock.pypi-small.toml"
    real.run(["lock", RECIPE, "--venv", venv, "--format", "pylock", "-o", pylock])
    doc = tomllib.loads(pylock.read_text())
    jinja = next(p for p in doc["packages"] if p["name"] == "jinja2")
    assert jinja["index"] == "https://pypi.org/simple"
    assert jinja["wheels"][0]["url"].startswith("https://files.pythonhosted.org/")
    assert real.freeze(synced(real, pylock, "uv-synced")) == real.freeze(venv)

    fresh = real.root / "fresh"
    real.run([RECIPE, "--venv", fresh, "--lockfile", pylock])
    assert real.freeze(fresh) == real.freeze(venv)


def test_a_pylock_uv_compiled_from_pypi_drives_a_locked_run(real):
    (real.root / "req.in").write_text("Jinja2==3.1.4\nsix==1.16.0\n")
    uv(real, "pip", "compile", "req.in", "-o", "pylock.toml", "--python-version", "3.11")
    recipe = real.root / "from-uv.toml"
    recipe.write_text(recipe_text("from-uv", "from-uv-venv") + """
[[step]]
id = "web"
kind = "install"
packages = ["Jinja2==3.1.4", "six"]
verify = [{ import = "markupsafe" }]
""")
    fresh = real.root / "from-uv-fresh"
    real.run([recipe, "--venv", fresh, "--lockfile", real.root / "pylock.toml"])
    assert real.freeze(fresh) == real.freeze(synced(real, real.root / "pylock.toml", "uv-synced-2"))
    assert {line.split("==")[0] for line in real.freeze(fresh)} == {"jinja2", "markupsafe", "six"}
