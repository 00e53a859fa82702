"""`run --locked` / `plan --locked` with locked steps left out by --skip (issue 42, item 6): what
only the left-out steps' closures lock is left out of the lock check, and the run says so; a
kept step that needs it (a build against it) is refused before anything is installed, naming
the steps. Before, the plan passed and the run failed after installing: "the venv differs from
the lockfile in N package(s)"."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import recipes as R
from recipes import steps_by_id


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


@pytest.fixture
def locked(world, sources):
    """A venv made by venv, core (demo-core), utils (demo-utils, which needs demo-core), extra
    (click, needed by nothing) and a build of fastext against demo-core (abi_packages), and its
    lock: (world, recipe, lockfile)."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    world.env["BOOTSTRAP_HOME"] = str(world.root / "home")
    tree = world.root / "fastext"
    shutil.copytree(sources["tree"], tree)
    url = world.index.url("main")
    steps = [R.venv(),
             R.install("core", ["demo-core==1.0.0"], index_url=url, verify=[R.imp("demo_core")]),
             R.install("utils", ["demo-utils==1.0.0"], index_url=url, verify=[R.imp("demo_utils")]),
             R.install("extra", ["click"], index_url=url, verify=[R.imp("click")]),
             {"id": "fastext", "kind": "build", "source": {"path": str(tree)}, "abi_packages": ["demo-core"],
              "env": {"FASTEXT_BUILD_LOG": str(world.root / "builds.log")},
              "verify": [R.imp("fastext", "answer")]}]
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe]))
    lockfile = world.root / "sel.lock.json"
    ok(world.run(["lock", recipe, "-o", lockfile]))
    lock = json.loads(lockfile.read_text())
    assert lock["steps"]["utils"]["packages"] == ["demo-core", "demo-utils"]
    assert lock["steps"]["extra"]["packages"] == ["click"]
    return world, recipe, lockfile


def test_locked_skip_of_steps_a_kept_build_needs_is_refused_before_anything_installs(locked):
    world, recipe, lockfile = locked
    fresh = world.root / "fresh"
    for command in (["plan", recipe], [recipe]):
        proc = world.run([*command, "--venv", fresh, "--lockfile", lockfile, "--skip", "core", "utils"])
        assert proc.returncode == 2, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        assert "--locked: the selection leaves out steps 'core', 'utils', which kept steps need" in proc.stderr
        assert "step 'fastext' builds against demo-core (abi_packages), which only steps 'core', 'utils' lock" \
            in proc.stderr
        assert "--skip core utils" in proc.stderr
        assert not fresh.exists()


def test_locked_skip_of_a_leaf_step_leaves_its_packages_out_of_the_lock_check_and_says_so(locked):
    world, recipe, lockfile = locked
    fresh = world.root / "fresh"
    said = "--locked: step extra left out: the lock check does not require the 1 package(s) only it locks: click"
    proc = ok(world.run(["plan", recipe, "--venv", fresh, "--lockfile", lockfile, "--skip", "extra"]))
    assert said in proc.stdout + proc.stderr
    proc = world.run([recipe, "--venv", fresh, "--lockfile", lockfile, "--skip", "extra", "--json"])
    ok(proc)
    assert said in proc.stderr
    doc = json.loads(proc.stdout)
    results = {s["id"]: s["result"] for s in doc["steps"]}
    assert results == {"venv": "ran", "core": "ran", "utils": "ran", "extra": "not selected",
                       "fastext": "ran"}, doc["steps"]
    assert world.version_of("click", fresh) is None
    assert world.version_of("demo-utils", fresh) == "1.0.0"
    # Settled: the same locked run again changes nothing.
    proc, doc = world.run_json([recipe, "--venv", fresh, "--lockfile", lockfile, "--skip", "extra"])
    ok(proc)
    assert all(s["result"] in ("skipped", "not selected") for s in doc["steps"]), doc["steps"]
    assert steps_by_id(doc)["extra"]["result"] == "not selected"


def test_locked_skip_of_a_step_whose_packages_a_kept_step_also_locks_checks_everything(locked):
    """utils' closure holds demo-core: leaving out core leaves nothing out of the check."""
    world, recipe, lockfile = locked
    fresh = world.root / "fresh"
    proc = ok(world.run([recipe, "--venv", fresh, "--lockfile", lockfile, "--skip", "core"]))
    assert "left out: the lock check" not in proc.stderr
    assert world.version_of("demo-core", fresh) == "1.0.0"
