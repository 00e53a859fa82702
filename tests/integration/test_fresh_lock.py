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
