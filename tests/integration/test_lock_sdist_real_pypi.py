"""An sdist-only release from real PyPI (docopt 0.6.2: PyPI has no wheel of it) is locked, as
JSON and as pylock.toml, and `run --locked` reproduces it on a fresh node (its own
$BOOTSTRAP_HOME and an empty uv cache: uv downloads the hash-checked sdist and builds it).
Skipped, never passed, when PyPI cannot be reached (test_real_pypi.py's rules)."""

from __future__ import annotations

import json
import re
import tomllib

import pytest

from test_real_pypi import Real, pypi_unreachable, recipe_text

DOCOPT_SDIST = "docopt-0.6.2.tar.gz"


@pytest.fixture(scope="module")
def real(tmp_path_factory, uv_bin, bootstrap_bin) -> Real:
    if why := pypi_unreachable():
        pytest.skip(f"PyPI unreachable: {why}")
    return Real(tmp_path_factory.mktemp("real-sdist"), uv_bin, bootstrap_bin)


def fresh_node(real: Real, name: str) -> Real:
    """Another node: its own root, $BOOTSTRAP_HOME and an empty uv cache."""
    node = Real(real.root / name, real.uv, real.bootstrap)
    node.root.mkdir()
    node.env["UV_CACHE_DIR"] = str(node.root / "uv-cache")
    return node


def test_docopt_sdist_is_locked_and_reproduced_fresh(real):
    recipe = real.root / "sdist.toml"
    recipe.write_text(recipe_text("sdist-pypi", "sdist-venv") + """
[[step]]
id = "cli"
kind = "install"
packages = ["docopt==0.6.2"]
verify = [{ import = "docopt" }]
""")
    venv = real.root / "sdist-venv"
    real.run([recipe, "--venv", venv])
    lockfile = real.root / "sdist.lock.json"
    real.run(["lock", recipe, "--venv", venv, "-o", lockfile])
    p = json.loads(lockfile.read_text())["packages"]["docopt"]
    assert p["version"] == "0.6.2"
    assert p["sdist"] == DOCOPT_SDIST
    assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"])
    assert p["url"].startswith("https://files.pythonhosted.org/") and p["url"].endswith(DOCOPT_SDIST)
    assert p["index"] == "https://pypi.org/simple"
    assert p["built"]["wheel"].startswith("docopt-0.6.2-") and p["built"]["wheel"].endswith(".whl")
    assert "not byte-identical" in p["built"]["note"]

    pylock = real.root / "pylock.sdist-pypi.toml"
    real.run(["lock", recipe, "--venv", venv, "--format", "pylock", "-o", pylock])
    (docopt,) = [q for q in tomllib.loads(pylock.read_text())["packages"] if q["name"] == "docopt"]
    assert docopt["sdist"]["name"] == DOCOPT_SDIST
    assert docopt["sdist"]["hashes"]["sha256"] == p["sha256"]
    assert "wheels" not in docopt

    for i, lock in enumerate((lockfile, pylock)):
        node = fresh_node(real, f"node{i}")
        fresh = node.root / "fresh"
        node.run([recipe, "--venv", fresh, "--lockfile", lock])
        assert real.freeze(fresh) == real.freeze(venv) == ["docopt==0.6.2"]
