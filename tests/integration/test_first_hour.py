"""What a new user meets in the first hour: labels that do not contradict themselves, a recipe
without a venv step, --recreate that cannot lose a venv, a bare `python` in a run step, `~` in
paths, and history that does not repeat itself."""

from __future__ import annotations

import json
import os

import recipes as R
from recipes import steps_by_id


def ok(proc):
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_a_failed_verify_is_labelled_as_such_not_up_to_date(world):
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core"], index_url=world.index.url(),
                                                                   verify=[R.imp("demo_core")])])
    ok(world.run([recipe]))
    init = next(world.venv.glob("lib/python3*/site-packages/demo_core/__init__.py"))
    init.write_text("raise ImportError('damaged on purpose')\n")
    proc, doc = world.run_json([recipe, "--verify"])
    assert proc.returncode == 1
    core = steps_by_id(doc)["core"]
    assert core["result"] == "failed" and core["reason"] == "verify failed", core
    assert "failed: up to date" not in proc.stderr


def test_install_steps_without_a_venv_step_are_refused_before_anything_runs(world):
    recipe = R.write_recipe(world.root, steps=[R.install("core", ["demo-core"], index_url=world.index.url())])
    line, _ = R.line_of(recipe, "[[step]]")
    for args in (["plan", recipe], [recipe]):
        proc = world.run(args)
        assert proc.returncode == 2, proc.stderr
        assert f"{recipe}:{line + 1}:" in proc.stderr or f"{recipe}:{line}:" in proc.stderr, proc.stderr
        assert "needs a venv, but the recipe has no `venv` step" in proc.stderr
    assert not world.venv.exists()


def test_recreate_with_a_python_that_cannot_be_had_leaves_the_old_venv(world):
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core"], index_url=world.index.url())])
    ok(world.run([recipe]))
    before = sorted(p.name for p in (world.venv / "lib").glob("python3*/site-packages/*"))
    impossible = R.write_recipe(world.root, "py399.toml", python="3.99",
                                steps=[R.venv(), R.install("core", ["demo-core"], index_url=world.index.url())])
    proc = world.run([impossible, "--recreate"])
    assert proc.returncode == 1, proc.stderr
    assert (world.venv / "pyvenv.cfg").exists()
    assert sorted(p.name for p in (world.venv / "lib").glob("python3*/site-packages/*")) == before
    assert world.version_of("demo-core") is not None
    assert not (world.venv / ".bootstrap" / "recreate-old").exists()
    # The venv still works as before: a plain re-run is a no-op.
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert {s["result"] for s in doc["steps"]} == {"skipped"}


def test_run_step_python_is_the_venvs_and_tilde_is_home(world):
    home = world.root / "home"
    home.mkdir()
    out = "~/seen.txt"
    recipe = R.write_recipe(world.root, venv_path="~/venvs/v", steps=[
        R.venv(),
        R.run("where", ["python", "-c",
                        "import os, sys; open(os.path.expanduser('~/seen.txt'), 'w').write(sys.prefix + ' ' + os.environ['VIRTUAL_ENV'])"],
              creates=out)])
    ok(world.run([recipe], env={"HOME": str(home)}))
    venv = home / "venvs" / "v"
    assert (venv / "pyvenv.cfg").exists()
    assert not (world.root / "~").exists()
    assert (home / "seen.txt").read_text() == f"{venv} {venv}"


def test_a_run_step_with_a_foreign_python_says_so_when_it_fails(world):
    recipe = R.write_recipe(world.root, steps=[
        R.venv(), R.run("foreign", ["python3", "-I", "-c", "import demo_core"], env={"PATH": "/usr/bin:/bin"})])
    # With PATH set by the step itself, `python3` resolves outside the venv.
    proc = world.run([recipe])
    assert proc.returncode == 1
    assert "not the venv's interpreter" in proc.stderr, proc.stderr
    assert "A module is missing from the venv" not in proc.stderr


def test_a_forced_rerun_that_changes_nothing_adds_no_history_entry(world):
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core"], index_url=world.index.url())])
    ok(world.run([recipe]))
    history = sorted((world.venv / ".bootstrap" / "history").glob("*.json"))
    # A forced re-run changes no distribution: history records changes, so it adds no entry
    # (neither a "before" nor an "after"); the run itself is in the journal and its log.
    proc, doc = world.run_json([recipe, "--force", "--only", "core"])
    ok(proc)
    after = sorted((world.venv / ".bootstrap" / "history").glob("*.json"))
    assert after == history, [p.name for p in after]
    assert doc["history"] == {"before": None, "after": None}
    assert doc["changes"] == "no change"
    assert world.journal()["steps"]["core"]["run_id"] == doc["run_id"]