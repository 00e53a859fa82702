"""A lock stands for what the recipe's steps do, not for its bytes (issue 42, item 3): a comment
or a new `summary` leaves a lockfile standing for `run --locked`; a changed pin makes it stale,
and the error names the step and the input, as `plan --explain` does. A lockfile written before
locks recorded that keeps the byte check, and says how to get the finer one."""

from __future__ import annotations

import json
import subprocess

import recipes as R


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def locked_recipe(world, lock_name: str, fmt: str = "json"):
    steps = [R.venv(),
             R.install("core", ["demo-core==1.0.0"], index_url=world.index.url("main"), verify=[R.imp("demo_core")])]
    recipe = R.write_recipe(world.root, steps=steps, header='summary = "the demo core"')
    ok(world.run([recipe]))
    lockfile = world.root / lock_name
    ok(world.run(["lock", recipe, "-o", lockfile, "--format", fmt]))
    return recipe, lockfile


def test_a_comment_or_a_summary_leaves_the_lock_standing(world):
    recipe, lockfile = locked_recipe(world, "core.lock.json")
    lock = json.loads(lockfile.read_text())
    assert ["packages", ["demo-core==1.0.0"]] in lock["steps"]["core"]["inputs"]
    assert ["venv.python", "3.11"] in lock["recipe"]["inputs"]

    recipe.write_text("# pinned for the demo\n" + recipe.read_text() + "\n# edited\n")
    proc, doc = world.run_json([recipe, "--lockfile", lockfile])
    ok(proc)
    assert {s["id"]: s["result"] for s in doc["steps"]} == {"venv": "skipped", "core": "skipped"}

    recipe.write_text(recipe.read_text().replace('summary = "the demo core"', 'summary = "core, pinned"'))
    ok(world.run(["plan", recipe, "--lockfile", lockfile]))
    ok(world.run([recipe, "--lockfile", lockfile]))


def test_a_changed_pin_makes_the_lock_stale_naming_the_step_and_the_input(world):
    recipe, lockfile = locked_recipe(world, "core.lock.json")
    recipe.write_text(recipe.read_text().replace("demo-core==1.0.0", "demo-core==2.0.0"))
    for command in ([recipe, "--lockfile", lockfile], ["plan", recipe, "--lockfile", lockfile]):
        proc = world.run(command)
        assert proc.returncode == 2, proc.stderr
        line = (f"error: the recipe {recipe} changed since its lockfile {lockfile} was written: "
                "step 'core': packages: +demo-core==2.0.0, -demo-core==1.0.0")
        assert line in proc.stderr.splitlines()
        assert proc.stderr.count("demo-core==2.0.0") == 1  # each change told once
        assert f"bootstrap lock {recipe} -o {lockfile}" in proc.stderr
    assert world.version_of("demo-core") == "1.0.0"  # refused before anything ran

    # Two changes: one line each, under a count.
    recipe.write_text(recipe.read_text().replace('import = "demo_core"', 'import = "demo_core.sub"'))
    proc = world.run([recipe, "--lockfile", lockfile])
    assert proc.returncode == 2, proc.stderr
    assert f"changed since its lockfile {lockfile} was written: 2 changes" in proc.stderr
    assert "step 'core': packages: +demo-core==2.0.0, -demo-core==1.0.0" in proc.stderr
    assert "step 'core': verify: +{import = \"demo_core.sub\"}, -{import = \"demo_core\"}" in proc.stderr


def test_a_pylock_records_the_meaning_too(world):
    recipe, lockfile = locked_recipe(world, "pylock.itest.toml", "pylock")
    text = lockfile.read_text()
    assert "[tool.bootstrap.recipe-inputs.steps.core]" in text
    assert 'packages = ["demo-core==1.0.0"]' in text
    recipe.write_text(recipe.read_text() + "# a comment\n")
    ok(world.run([recipe, "--lockfile", lockfile]))
    recipe.write_text(recipe.read_text().replace("demo-core==1.0.0", "demo-core==2.0.0"))
    proc = world.run([recipe, "--lockfile", lockfile])
    assert proc.returncode == 2, proc.stderr
    assert "step 'core': packages: +demo-core==2.0.0, -demo-core==1.0.0" in proc.stderr
    assert f"-o {lockfile} --format pylock" in proc.stderr


def test_a_lock_without_recorded_meaning_keeps_the_byte_check(world):
    recipe, lockfile = locked_recipe(world, "old.lock.json")
    lock = json.loads(lockfile.read_text())
    del lock["recipe"]["inputs"]
    for step in lock["steps"].values():
        step.pop("inputs", None)
    lockfile.write_text(json.dumps(lock, indent=2))
    ok(world.run([recipe, "--lockfile", lockfile]))  # the same bytes
    recipe.write_text(recipe.read_text() + "# a comment\n")
    proc = world.run([recipe, "--lockfile", lockfile])
    assert proc.returncode == 2, proc.stderr
    assert f"error: the recipe {recipe} changed since its lockfile {lockfile} was written\n" in proc.stderr
    assert "this lockfile records only the recipe's bytes" in proc.stderr

    # Locking again needs no run: the venv is still at the recipe's fixed point.
    ok(world.run(["lock", recipe, "-o", lockfile]))
    ok(world.run([recipe, "--lockfile", lockfile]))


def test_record_inputs_upgrades_an_older_lock_without_a_run(world):
    """`lock --record-inputs` gives an older lock what the recipe's steps do, with no venv at all,
    only while the recipe's bytes are those it was locked from."""
    recipe, lockfile = locked_recipe(world, "old.lock.json")
    lock = json.loads(lockfile.read_text())
    del lock["recipe"]["inputs"]
    for step in lock["steps"].values():
        step.pop("inputs", None)
    lockfile.write_text(json.dumps(lock, indent=2))
    elsewhere = R.write_recipe(world.root, "elsewhere.toml", venv_path="nowhere", steps=[R.venv()])
    proc = world.run(["lock", elsewhere, "-o", lockfile, "--record-inputs"])
    assert proc.returncode == 2 and f"the recipe {elsewhere} changed since {lockfile} was written" in proc.stderr

    ok(world.run(["lock", recipe, "-o", lockfile, "--record-inputs", "--venv", world.root / "none"]))
    upgraded = json.loads(lockfile.read_text())
    assert ["packages", ["demo-core==1.0.0"]] in upgraded["steps"]["core"]["inputs"]
    assert upgraded["packages"] == lock["packages"]
    recipe.write_text(recipe.read_text() + "# a comment\n")
    ok(world.run(["plan", recipe, "--lockfile", lockfile]))
