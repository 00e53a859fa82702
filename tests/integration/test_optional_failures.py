"""Re-runs that stay no-ops (issue 20): a failure another attempt cannot change is not retried;
an optional step that failed so is skipped while its key holds (no network, no log, no history)
and `plan` says so; device facts are asked only for selected steps; `plan` checks the
interpreter request and the project directories before anything runs."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import recipes as R
from recipes import steps_by_id


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def history(venv: Path) -> list[str]:
    d = venv / ".bootstrap" / "history"
    return sorted(p.name for p in d.glob("*.json")) if d.exists() else []


def log_dirs(venv: Path) -> list[str]:
    d = venv / ".bootstrap" / "logs"
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def unresolvable_recipe(world, **optional_extra):
    """venv, a core install, and an optional step that can never resolve (no demo-core 99)."""
    steps = [R.venv(),
             R.install("core", ["demo-core==1.0.0"], index_url=world.index.url("main")),
             R.install("extra", ["demo-core>=99"], index_url=world.index.url("main"), optional=True,
                       **optional_extra),
             R.check("check", [R.imp("demo_core")])]
    return R.write_recipe(world.root, steps=steps, network={"attempts": 3})


def test_an_unsatisfiable_optional_step_fails_once_then_is_skipped_while_its_key_holds(world):
    recipe = unresolvable_recipe(world)
    proc, doc = world.run_json([recipe])
    ok(proc)
    extra = steps_by_id(doc)["extra"]
    assert extra["result"] == "failed (optional)"
    # No solution is no solution: one attempt, not three with backoff.
    assert extra["attempts"] == 1, extra
    assert "not retried: the requirements have no solution" in proc.stderr
    assert world.journal()["steps"]["extra"]["permanent"] is True

    # A re-run: the step is skipped with its reason; nothing asks the index, no log dir, no
    # history entry.
    entries, logs = history(world.venv), log_dirs(world.venv)
    world.index.reset()
    start = time.monotonic()
    proc, doc = world.run_json([recipe])
    elapsed = time.monotonic() - start
    ok(proc)
    extra = steps_by_id(doc)["extra"]
    assert extra["result"] == "skipped"
    assert extra["reason"].startswith("optional step failed on ")
    assert "demo-core>=99" in extra["reason"], extra["reason"]  # uv's own cause line
    assert extra["reason"].endswith("; `--retry-optional` or a changed step retries it")
    assert all(s["result"] == "skipped" for s in doc["steps"]), doc["steps"]
    assert world.index.stats() == {}
    assert history(world.venv) == entries and log_dirs(world.venv) == logs
    assert doc["history"] == {"before": None, "after": None}
    assert elapsed < R.NOOP_SECONDS

    # `plan` says exactly that.
    proc = ok(world.run(["plan", recipe]))
    block = proc.stdout.split("] extra (install) optional")[1].split("\n[")[0]
    assert "would skip: optional step failed on " in block
    assert "would re-verify" not in proc.stdout

    # --retry-optional asks again (and fails again, once).
    proc, doc = world.run_json([recipe, "--retry-optional"])
    ok(proc)
    assert steps_by_id(doc)["extra"]["result"] == "failed (optional)"
    assert world.index.stats() != {}


def test_a_changed_optional_step_is_tried_again(world):
    recipe = unresolvable_recipe(world)
    ok(world.run([recipe]))
    # The recipe's step changes (a pin that exists): its key changes, so it runs, and passes.
    recipe.write_text(recipe.read_text().replace('"demo-core>=99"', '"demo-utils==1.0.0"'))
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["extra"]["result"] == "ran"


def test_a_transient_failure_is_retried_and_an_optional_one_is_tried_again_next_run(world):
    recipe = unresolvable_recipe(world)
    recipe.write_text(recipe.read_text().replace('"demo-core>=99"', '"demo-utils==1.0.0"'))
    ok(world.run([recipe, "--only", "venv", "core"]))
    # Every request for demo-utils' page answers 503: transient, so each attempt is made.
    world.index.set_faults([{"match": "demo-utils", "kind": "status", "status": 503}])
    proc, doc = world.run_json([recipe], env={"UV_HTTP_RETRIES": "0"})
    ok(proc)
    extra = steps_by_id(doc)["extra"]
    assert extra["result"] == "failed (optional)" and extra["attempts"] == 3, extra
    assert "retrying in" in proc.stderr
    assert world.journal()["steps"]["extra"].get("permanent") is None
    # The index is back: the next run tries the step again (it was not a lasting failure).
    world.index.clear_faults()
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["extra"]["result"] == "ran"


def test_a_missing_project_directory_is_found_by_plan_and_never_retried(world):
    missing = world.root / "no-such-project"
    steps = [R.venv(), R.sync("deps", "{env.PROJECT_DIR}", args=["--inexact"])]
    recipe = R.write_recipe(world.root, steps=steps, network={"attempts": 3})
    line, col = R.line_of(recipe, '"{env.PROJECT_DIR}"')
    for command in (["plan", recipe], [recipe]):
        proc = world.run(command, env={"PROJECT_DIR": str(missing)})
        assert proc.returncode == 2, proc.stderr
        assert f"{recipe}:{line}:" in proc.stderr
        assert f"step 'deps': project {missing} does not exist" in proc.stderr
        assert 'the recipe says project = "{env.PROJECT_DIR}"' in proc.stderr
    assert not world.venv.exists()  # nothing ran

    # An optional sync step: the plan notes it, the run fails it once (not retried) and skips it
    # from then on.
    steps = [R.venv(), R.sync("deps", "{env.PROJECT_DIR}", args=["--inexact"], optional=True)]
    recipe = R.write_recipe(world.root, steps=steps, network={"attempts": 3})
    env = {"PROJECT_DIR": str(missing)}
    proc = ok(world.run(["plan", recipe], env=env))
    assert f"project {missing} does not exist: this optional step will fail and be skipped" in proc.stdout
    proc, doc = world.run_json([recipe], env=env)
    ok(proc)
    deps = steps_by_id(doc)["deps"]
    assert deps["result"] == "failed (optional)" and deps["attempts"] == 1, deps
    proc, doc = world.run_json([recipe], env=env)
    assert steps_by_id(doc)["deps"]["result"] == "skipped"
    assert "the project directory" in steps_by_id(doc)["deps"]["reason"]


def device_recipe(world):
    steps = [R.venv(),
             R.install("core", ["demo-core==1.0.0"], index_url=world.index.url("main")),
             R.run("arch", ["{venv.python}", "-c", "pass"],
                   env={"TORCH_CUDA_ARCH_LIST": "{device.torch_arch_list}"})]
    return R.write_recipe(world.root, steps=steps)


def test_device_facts_are_asked_only_for_selected_steps(world):
    """No GPU here and no --arch: a step using {device.*} cannot be planned; a run that leaves
    it out needs no arch (issue 20: `--skip te-torch apex`, `--only torch` demanded one)."""
    recipe = device_recipe(world)
    proc = world.run([recipe])
    assert proc.returncode != 0 and "--arch" in proc.stderr, proc.stderr  # the step needs one
    assert not world.venv.exists()
    for selection in (["--skip", "arch"], ["--only", "venv", "core"]):
        proc, doc = world.run_json([recipe, *selection])
        ok(proc)
        assert steps_by_id(doc)["arch"]["result"] == "not selected"
        assert "cuda archs" not in proc.stderr
    proc = ok(world.run(["plan", recipe, "--skip", "arch"]))
    assert "] arch (run)\n  not selected\n" in proc.stdout
    assert "cuda archs" not in proc.stdout
    # The history records no device: nothing stood for one.
    import json
    (after,) = [p for p in (world.venv / ".bootstrap/history").glob("*.json")][-1:]
    assert json.loads(after.read_text()).get("device", {}) == {}
    # Selected, with --arch: planned as before.
    ok(world.run([recipe, "--arch", "9.0"]))


def test_plan_finds_a_python_on_path_that_does_not_run(world, tmp_path):
    """`python = "3.11"` with a pyenv shim for a version the shell has not selected first on
    PATH: uv stops at it when creating the venv. `plan` (and `run`, before anything runs) says so."""
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "python3.11"
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.11: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core"],
                                                                   index_url=world.index.url("main"))])
    line, _ = R.line_of(recipe, 'python = "3.11"')
    env = {"PATH": f"{shims}{os.pathsep}{world.env['PATH']}"}
    for command in (["plan", recipe], [recipe]):
        proc = world.run(command, env=env)
        assert proc.returncode == 2, proc.stderr
        assert f"{recipe}:{line}:" in proc.stderr
        assert f"python3.11 on PATH is {shim}, which does not run" in proc.stderr
        assert "pyenv: python3.11: command not found" in proc.stderr
        assert "set [venv] python to an interpreter's path" in proc.stderr
    assert not world.venv.exists()
    ok(world.run(["plan", recipe]))  # without the shim: fine


def test_in_a_sealed_image_an_optional_failure_reads_as_during_the_image_build(world):
    """An image's build fails an optional step at its SOURCE_DATE_EPOCH (0 by default): after
    `seal`, the skip reason said "failed on 1970-01-01" (seen in the reference image, issue 42);
    it now says "during the image build", as `history` does."""
    recipe = unresolvable_recipe(world)
    image_build = {"SOURCE_DATE_EPOCH": "0"}
    ok(world.run([recipe], env=image_build))
    ok(world.run(["seal", "--venv", world.venv], env=image_build))
    proc, doc = world.run_json([recipe])
    ok(proc)
    reason = steps_by_id(doc)["extra"]["reason"]
    assert reason.startswith("optional step failed during the image build: "), reason
    assert "1970" not in reason
