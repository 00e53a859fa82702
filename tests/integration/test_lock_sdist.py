"""A package uv builds from an sdist (the index has no wheel of it) is locked and reproduced:
`lock` records the sdist (sha256, url, index) and the wheel built from it; `run --locked` into
an empty path on a fresh $BOOTSTRAP_HOME and uv cache installs it from the hash-checked sdist; a
wrong sdist hash in the lock names the lock's FILE:LINE; a pylock.toml uv wrote with an sdist is
read."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

import recipes as R
import sdists
from sdists import fresh_node

NAME, VERSION = "tinysd", "0.1.0"
SDIST = f"{NAME}-{VERSION}.tar.gz"


def make_sdist(path: Path) -> str:
    """A deterministic pure-Python sdist (its PEP 517 backend in the sdist itself, `requires = []`:
    it builds offline, with no compiler); returns its sha256."""
    return sdists.make_sdist(path, NAME, VERSION)


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


@pytest.fixture
def sdist_index(index_factory, tmp_path):
    """An index whose group `sd` lists only the sdist (no wheel of it anywhere)."""
    root = tmp_path / "sdroot"
    group = root / "sd"
    group.mkdir(parents=True)
    (group / ".list-sdists").write_text("")
    sha = make_sdist(group / SDIST)
    return index_factory(root=root), sha


def built_venv(world, srv) -> Path:
    steps = [R.venv(), R.install("tiny", [f"{NAME}=={VERSION}"], index_url=srv.url("sd"), verify=[R.imp(NAME)])]
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe]))
    return recipe


def test_lock_records_the_sdist_and_a_locked_run_on_a_fresh_node_rebuilds_it(world, sdist_index):
    srv, sha = sdist_index
    recipe = built_venv(world, srv)
    lockfile = world.root / "l.json"
    proc = ok(world.run(["lock", recipe, "-o", lockfile]))
    assert "no wheel hash" not in proc.stderr
    p = json.loads(lockfile.read_text())["packages"][NAME]
    assert p["version"] == VERSION
    assert p["sdist"] == SDIST
    assert p["sha256"] == sha
    assert p["url"] == f"{srv.base_url}/sd/files/{SDIST}"
    assert p["index"] == srv.url("sd")
    # bootstrap downloaded the sdist to build it through its build cache, checked to that digest
    assert p["hash_source"] == "build-cache"
    assert p["built"]["wheel"] == f"{NAME}-{VERSION}-py3-none-any.whl"
    assert len(p["built"]["sha256"]) == 64
    assert "not byte-identical" in p["built"]["note"]

    fresh = world.root / "fresh"
    proc, doc = world.run_json([recipe, "--venv", fresh, "--lockfile", lockfile], env=fresh_node(world, "n2"))
    ok(proc)
    assert {s["id"]: s["result"] for s in doc["steps"]} == {"venv": "ran", "tiny": "ran"}
    assert world.version_of(NAME, fresh) == VERSION
    # Built through the build cache from the sdist bootstrap downloaded and checked against the
    # lock's sha256 (the entry's key says so); the installer gets that wheel, pinned by its hash.
    assert R.steps_by_id(doc)["tiny"]["reason"].startswith(f"{NAME} {VERSION}: built from {SDIST}")
    keyed = [f.read_text() for f in (world.root / "n2-home" / "builds").glob("*/inputs.txt")]
    assert len(keyed) == 1 and f"source: sha256 {sha}\n" in keyed[0]
    built = [f for f in (fresh / ".bootstrap").rglob("*.built.txt") if f.is_file()]
    assert len(built) == 1 and built[0].read_text().startswith(f"{NAME}=={VERSION} --hash=sha256:")
    # The venv it made is the lock's: the same lock check passes again, with nothing to do.
    proc, doc = world.run_json([recipe, "--venv", fresh, "--lockfile", lockfile], env=fresh_node(world, "n2"))
    ok(proc)


def test_pylock_of_an_sdist_package_round_trips_and_reproduces(world, sdist_index):
    srv, sha = sdist_index
    recipe = built_venv(world, srv)
    pylock = world.root / "pylock.itest.toml"
    ok(world.run(["lock", recipe, "--format", "pylock", "-o", pylock]))
    text = pylock.read_text()
    assert "[packages.sdist]" in text
    assert f'name = "{SDIST}"' in text
    assert f'hashes = {{ sha256 = "{sha}" }}' in text
    assert "built-wheel" in text and "not byte-identical" in text
    fresh = world.root / "fresh"
    ok(world.run([recipe, "--venv", fresh, "--lockfile", pylock], env=fresh_node(world, "n3")))
    assert world.version_of(NAME, fresh) == VERSION


def test_a_wrong_sdist_hash_in_the_lock_names_its_file_and_line(world, sdist_index):
    srv, sha = sdist_index
    recipe = built_venv(world, srv)
    lockfile = world.root / "l.json"
    ok(world.run(["lock", recipe, "-o", lockfile]))
    wrong = hashlib.sha256(b"other bytes").hexdigest()
    lockfile.write_text(lockfile.read_text().replace(sha, wrong))
    line, _ = R.line_of(lockfile, f'"{NAME}": {{')
    fresh = world.root / "fresh"
    proc = world.run([recipe, "--venv", fresh, "--lockfile", lockfile], env=fresh_node(world, "n4"))
    assert proc.returncode != 0, proc.stderr
    assert f"{lockfile}:{line}: sdist {SDIST} sha256 {wrong}" in proc.stderr, proc.stderr
    assert world.version_of(NAME, fresh) is None


def test_a_pylock_uv_wrote_with_an_sdist_is_read_and_installed(world, sdist_index):
    srv, sha = sdist_index
    steps = [R.venv(), R.install("tiny", [f"{NAME}=={VERSION}"], index_url=srv.url("sd"), verify=[R.imp(NAME)])]
    recipe = R.write_recipe(world.root, steps=steps)
    (world.root / "req.in").write_text(f"{NAME}=={VERSION}\n")
    pylock = world.root / "pylock.toml"
    proc = subprocess.run([str(world.uv), "pip", "compile", "--format", "pylock.toml", "--index-url", srv.url("sd"),
                           "req.in", "-o", str(pylock)], cwd=world.root, env=world.full_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "sdist = {" in pylock.read_text() and "wheels" not in pylock.read_text()
    fresh = world.root / "fresh"
    proc = ok(world.run([recipe, "--venv", fresh, "--lockfile", pylock], env=fresh_node(world, "n5")))
    assert "not a valid pylock.toml" not in proc.stderr
    assert world.version_of(NAME, fresh) == VERSION
