"""A fresh node from a lockfile: `run --locked` into an empty venv path reproduces the venv the
lock was made from exactly (issue 20), whatever the steps' reinstall, upgrade and override
flags; `lock` after a partial run locks what ran."""

from __future__ import annotations

import json
import subprocess

import recipes as R


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def freeze(world, venv) -> list[str]:
    proc = subprocess.run([str(world.uv), "pip", "freeze", "--python", str(venv / "bin" / "python")],
                          capture_output=True, text=True, env=world.full_env(), check=True)
    return sorted(proc.stdout.splitlines())


def records(venv) -> dict[str, str]:
    """RECORD of every dist-info, less the venv's own scripts (their shebangs name the venv)."""
    out = {}
    for record in sorted(venv.glob("lib/python*/site-packages/*.dist-info/RECORD")):
        rows = [r for r in record.read_text().splitlines() if not r.startswith("../../../bin/")]
        out[record.parent.name] = "\n".join(rows)
    return out


def test_locked_run_into_an_empty_path_survives_a_later_reinstall_of_a_dependency(world):
    """Step `utils` installs demo-utils (which needs demo-core); a later step reinstalls
    demo-core. The old lock credited demo-core to the later step, so a locked run into an empty
    path installed demo-utils alone and its verify failed (No module named 'demo_core')."""
    steps = [R.venv(),
             R.install("utils", ["demo-utils==1.0.0"], index_url=world.index.url("main"),
                       verify=[R.imp("demo_utils")]),
             R.install("core", ["demo-core"], index_url=world.index.url("main"), reinstall=True,
                       verify=[R.imp("demo_core")])]
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe]))
    lockfile = world.root / "itest.lock.json"
    ok(world.run(["lock", recipe, "-o", lockfile]))
    lock = json.loads(lockfile.read_text())
    assert lock["packages"]["demo-core"]["origin"]["step"] == "core"
    assert lock["steps"]["utils"]["packages"] == ["demo-core", "demo-utils"]
    assert lock["steps"]["core"]["packages"] == ["demo-core"]

    fresh = world.root / "fresh"
    assert not fresh.exists()
    proc, doc = world.run_json([recipe, "--venv", fresh, "--lockfile", lockfile])
    ok(proc)
    assert {s["id"]: s["result"] for s in doc["steps"]} == {"venv": "ran", "utils": "ran", "core": "skipped"}
    assert freeze(world, fresh) == freeze(world, world.venv)
    assert records(fresh) == records(world.venv)


def test_lock_after_a_partial_run_covers_what_ran_and_a_locked_run_refuses_the_rest(world):
    """Issue 20: `lock` refused after a run with skipped steps. It now locks what ran and records
    the steps it does not cover; a locked run refuses a selected one (naming it and how to leave
    it out), skips an optional one that failed, and installs nothing for a step whose
    requirements have no package on this interpreter."""
    steps = [R.venv(),
             R.install("core", ["demo-core==1.0.0"], index_url=world.index.url("main"), verify=[R.imp("demo_core")]),
             R.install("py2-only", ['platformdirs; python_version < "3"'], index_url=world.index.url("main")),
             R.install("never", ["demo-core>=99"], index_url=world.index.url("main"), optional=True),
             R.install("later", ["demo-utils==1.0.0"], index_url=world.index.url("main"))]
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe, "--skip", "later"]))
    lockfile = world.root / "partial.lock.json"
    proc = ok(world.run(["lock", recipe, "-o", lockfile]))
    assert "not covered: step 'never' (optional): optional step failed on " in proc.stderr
    assert "not covered: step 'later': not run" in proc.stderr
    lock = json.loads(lockfile.read_text())
    for step in lock["steps"].values():
        step.pop("inputs")  # what the step does (test_lock_meaning.py)
    assert lock["steps"]["later"] == {"covered": False, "why": "not run"}
    assert lock["steps"]["never"]["optional"] is True and lock["steps"]["never"]["covered"] is False
    assert lock["steps"]["py2-only"] == {}  # covered, nothing to install here
    assert set(lock["packages"]) == {"demo-core"}

    fresh = world.root / "fresh"
    proc = world.run([recipe, "--venv", fresh, "--lockfile", lockfile])
    assert proc.returncode == 2, proc.stderr
    assert f"error: --locked: the lockfile {lockfile} does not cover step later" in proc.stderr
    assert "later: not run when the lock was made" in proc.stderr
    assert "--skip later" in proc.stderr
    assert not fresh.exists()  # refused before anything ran

    proc, doc = world.run_json([recipe, "--venv", fresh, "--lockfile", lockfile, "--skip", "later"])
    ok(proc)
    results = {s["id"]: (s["result"], s["reason"]) for s in doc["steps"]}
    assert results["core"][0] == "ran"
    assert results["py2-only"][0] == "skipped"  # nothing of it on this interpreter: no installer runs
    assert results["never"][0] == "skipped"
    assert results["never"][1].startswith("not in the lockfile: optional step failed on ")
    assert results["later"] == ("not selected", "not selected")
    assert freeze(world, fresh) == freeze(world, world.venv)
