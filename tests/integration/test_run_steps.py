"""`bootstrap run` end to end, step by step: run steps' guards (creates, unless, cwd, env), venv
recreation, sync steps, check steps, relative paths, the embedded demo, history across runs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

import pytest

import recipes as R
from recipes import NOOP_SECONDS, ok, steps_by_id, write


# --------------------------------------------------------------------------- run steps

def counting_script(counter: Path, out: Path | None = None) -> str:
    code = f"import pathlib; c = pathlib.Path({str(counter)!r}); c.write_text(c.read_text() + 'x' if c.exists() else 'x')"
    if out is not None:
        code += f"; pathlib.Path({str(out)!r}).write_text('made')"
    return code


def test_run_step_creates_is_idempotent(world):
    counter = world.root / "counter"
    out = world.root / "out" / "made.txt"
    (world.root / "out").mkdir()
    recipe = write(world, [R.venv(),
                           R.run("make", ["{venv.python}", "-c", counting_script(counter, out)],
                                 creates="out/made.txt")])
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert counter.read_text() == "x" and out.read_text() == "made"
    # Forced, the step sees its output (relative to the recipe dir) and does not run the command.
    proc, doc = world.run_json([recipe, "--force", "--only", "make"])
    ok(proc)
    make = steps_by_id(doc)["make"]
    assert make["result"] == "skipped"  # as its log says: the command did not run
    assert make["reason"] == f"creates: {out} exists"
    assert f"skipped: {out} exists" in Path(make["log"]).read_text()
    assert counter.read_text() == "x"
    # Output removed: the command runs again.
    out.unlink()
    proc, doc = world.run_json([recipe, "--force", "--only", "make"])
    ok(proc)
    assert steps_by_id(doc)["make"]["reason"] == "forced"
    assert counter.read_text() == "xx" and out.exists()


def test_run_step_unless_is_idempotent(world):
    counter = world.root / "counter"
    marker = world.root / "marker"
    recipe = write(world, [R.venv(),
                           R.run("once", ["{venv.python}", "-c", counting_script(counter)],
                                 unless=["test", "-e", str(marker)])])
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert counter.read_text() == "x"
    marker.write_text("")
    proc, doc = world.run_json([recipe, "--force"])
    ok(proc)
    once = steps_by_id(doc)["once"]
    assert once["result"] == "skipped" and once["reason"] == "unless: command succeeded"
    assert counter.read_text() == "x"
    assert "# unless" in Path(once["log"]).read_text()


def test_run_step_cwd_and_env(world):
    (world.root / "sub").mkdir()
    script = ('pwd > where.txt; echo "$ITEST_A|${{BOOTSTRAP_ITEST_B-unset}}|${{BOOTSTRAP_ITEST_C-unset}}|'
              '${{ITEST_D-unset}}|$UV_CACHE_DIR" > env.txt')
    recipe = write(world, [R.run("show", ["sh", "-c", script], cwd="sub", env={"ITEST_A": "a-{host.cpus}"},
                                 env_unset=["BOOTSTRAP_ITEST_B"])])
    proc = world.run([recipe], env={"BOOTSTRAP_ITEST_B": "b", "BOOTSTRAP_ITEST_C": "c", "ITEST_D": "d"})
    ok(proc)
    assert (world.root / "sub" / "where.txt").read_text().strip() == str(world.root / "sub")
    # step env set; env_unset removes a pass-through variable; variables outside the
    # allowlist never reach a child; UV_* does.
    assert re.fullmatch(rf"a-\d+\|unset\|c\|unset\|{re.escape(str(world.uv_cache))}\n",
                        (world.root / "sub" / "env.txt").read_text())


def test_deleted_output_makes_its_step_run_again(world):
    """A run step's `creates` file and `file` verify clauses are part of its outcome: when one
    is gone, the step runs again (a stat each, no subprocess)."""
    recipe = write(world, R.pipeline(world.index))
    ok(world.run([recipe]))
    stamp = next(world.venv.glob("helpers*.stamp"))
    stamp.unlink()
    proc, doc = world.run_json([recipe])
    ok(proc)
    by = steps_by_id(doc)
    assert by["helpers"]["result"] == "ran"
    assert by["helpers"]["reason"] == f"{stamp} no longer exists"
    assert stamp.exists()
    # An earlier step ran, so the check (what it observes may have changed) verifies again.
    assert by["check"]["result"] == "verified"
    assert by["check"]["reason"] == "an earlier step ran: re-verifying"
    assert by["torch"]["reason"] == "up to date"


def test_verify_flag_rechecks_an_up_to_date_pipeline(world):
    """A plain re-run trusts the journal (dist-info RECORD digests unchanged); --verify re-runs
    the verify clauses of up-to-date steps and catches a broken import."""
    recipe = write(world, R.pipeline(world.index))
    ok(world.run([recipe]))
    init = next(world.venv.glob("lib/python3*/site-packages/demo_torch/__init__.py"))
    init.write_text("raise ImportError('damaged on purpose')\n")
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["torch"]["reason"] == "up to date"
    proc, doc = world.run_json([recipe, "--verify"])
    assert proc.returncode == 1
    assert "import demo_torch failed: ImportError: damaged on purpose" in doc["error"]["message"]
    assert steps_by_id(doc)["torch"]["result"] == "failed"


# --------------------------------------------------------------------------- venv python

def find_python312() -> str | None:
    candidates = [shutil.which("python3.12")] + sorted(
        str(p) for p in Path.home().glob(".pyenv/versions/3.12*/bin/python3.12"))
    for c in candidates:
        if not c:
            continue
        try:
            r = subprocess.run([c, "--version"], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0 and r.stdout.startswith("Python 3.12"):
            return c
    return None


def test_venv_with_other_python_needs_recreate(world):
    py312 = find_python312()
    if py312 is None:
        pytest.skip("no working python3.12 on this machine to make a venv with another Python")
    r = subprocess.run([str(world.uv), "venv", "-q", "--python", py312, str(world.venv)],
                       env=world.full_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    world.uv_pip("install", "--index-url", world.index.url(), "click")
    (world.venv / ".bootstrap").mkdir()
    (world.venv / ".bootstrap" / "keep.txt").write_text("kept")

    recipe = write(world, [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url())])
    line, col = R.line_of(recipe, "[[step]]")
    proc = world.run([recipe])
    assert proc.returncode == 2, proc.stderr
    assert re.search(rf"error: {re.escape(str(recipe))}:{line}:{col}: the venv {re.escape(str(world.venv))} "
                     r"has Python 3\.12\.\d+, but the recipe asks for 3\.11\n", proc.stderr), proc.stderr
    assert "re-run with --recreate to replace it" in proc.stderr
    assert world.version_of("click") == "8.1.7"  # untouched

    plan = world.run(["plan", recipe, "--recreate"])
    ok(plan)
    assert "note: venv has Python 3.12" in plan.stdout and "recreated with 3.11" in plan.stdout

    proc, doc = world.run_json([recipe, "--recreate"])
    ok(proc)
    assert steps_by_id(doc)["venv"]["result"] == "ran"
    r = world.python("import sys; print('%d.%d' % sys.version_info[:2])")
    assert r.stdout.strip() == "3.11"
    assert world.version_of("click") is None  # packages of the old venv are gone
    assert world.version_of("demo-core") == "1.0.0"
    assert (world.venv / ".bootstrap" / "keep.txt").read_text() == "kept"


# --------------------------------------------------------------------------- sync

def test_sync_step_with_local_project(world):
    project = R.uv_project(world)
    recipe = write(world, [R.venv(),
                           R.install("click", ["click"], index_url=world.index.url()),
                           # The tests' hermetic environment sets UV_NO_CONFIG=1, which would
                           # make uv ignore the project's own [[tool.uv.index]].
                           R.sync("sync", "proj", args=["--inexact"], env_unset=["UV_NO_CONFIG"])])
    plan = ok(world.run(["plan", recipe]))
    assert "warning:" not in plan.stdout
    proc, doc = world.run_json([recipe])
    if proc.returncode != 0 and "sync" in steps_by_id(doc) and steps_by_id(doc)["sync"]["result"] == "failed":
        log = Path(steps_by_id(doc)["sync"]["log"]).read_text()
        pytest.fail(f"uv sync failed offline:\n{log}")
    ok(proc)
    assert steps_by_id(doc)["sync"]["result"] == "ran"
    assert world.version_of("demo-core") == "1.1.0"
    assert world.version_of("click") == "8.1.7"  # --inexact kept it
    assert (project / "uv.lock").exists()
    proc2, doc2 = world.run_json([recipe])
    ok(proc2)
    assert steps_by_id(doc2)["sync"]["reason"] == "up to date"
    # Its packages' origin names the registry of uv.lock, so rollback can fetch them again
    # (the megatron-deps step's were "from an index that was not recorded", found by realworld.sh).
    newest = sorted((world.venv / ".bootstrap" / "history").glob("*.json"))[-1]
    origin = json.loads(newest.read_text())["packages"]["demo-core"]["origin"]
    assert origin["step"] == "sync" and origin["index_urls"] == [world.index.url()], origin


def test_locked_sync_with_torch_overridden_then_torch_from_its_own_step(world):
    """P8: Megatron's uv.lock overrides torch with `sys_platform == 'never'`, so `uv sync` never
    installs it; a later install step brings the cu130 torch, and neither a no-op re-run nor a
    forced --inexact re-sync of the locked project takes it away or swaps it for the lock's."""
    project = world.root / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "itest-p8"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
        'dependencies = ["demo-core<2", "demo-torch"]\n\n'
        "[tool.uv]\noverride-dependencies = [\"demo-torch; sys_platform == 'never'\"]\n\n"
        f'[[tool.uv.index]]\nname = "fixture"\nurl = "{world.index.url()}"\ndefault = true\n')
    # The lock, made by the real uv against the fixture index (the project's own index config
    # is read: the hermetic environment's UV_NO_CONFIG=1 is dropped for it).
    env = world.full_env()
    env.pop("UV_NO_CONFIG")
    lock = subprocess.run([str(world.uv), "lock", "--project", str(project)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert lock.returncode == 0, lock.stderr
    lock_text = (project / "uv.lock").read_text()
    locked = tomllib.loads(lock_text)
    assert locked["manifest"]["overrides"] == [
        {"name": "demo-torch", "marker": "sys_platform == 'never'"}]
    # The universal lock keeps PyPI's torch, reachable only where sys_platform == 'never'.
    root = next(p for p in locked["package"] if p["name"] == "itest-p8")
    assert {"name": "demo-torch", "marker": "sys_platform == 'never'"} in root["dependencies"]
    assert {p["name"]: p["version"] for p in locked["package"]}["demo-torch"] == "2.11.0"

    recipe = write(world, [
        R.venv(),
        R.sync("deps", "proj", args=["--locked", "--inexact"], env_unset=["UV_NO_CONFIG"]),
        R.install("torch", ["demo-torch==2.11.0+cu130"], index_url=world.index.url("main"),
                  extra_index_urls=[world.index.url("cu130")], verify=[R.imp("demo_torch")]),
    ])
    # The sync alone: the project's dependencies, and no torch (the pitfall).
    ok(world.run([recipe, "--only", "venv", "deps"]))
    assert world.version_of("demo-core") == "1.1.0"
    assert world.version_of("demo-torch") is None

    proc, doc = world.run_json([recipe])
    ok(proc)
    steps = steps_by_id(doc)
    assert steps["deps"]["result"] == "skipped" and steps["torch"]["result"] == "ran"
    assert world.version_of("demo-torch") == "2.11.0+cu130"
    assert world.version_of("demo-core") == "1.1.0"

    proc, doc = world.run_json([recipe])
    ok(proc)
    assert [s["result"] for s in doc["steps"]] == ["skipped"] * 3
    assert world.version_of("demo-torch") == "2.11.0+cu130"

    # A forced re-sync of the lock keeps the cu130 torch: the lock has no torch to install
    # over it, and --inexact removes nothing.
    proc, doc = world.run_json([recipe, "--force", "--only", "deps"])
    ok(proc)
    assert steps_by_id(doc)["deps"]["result"] == "ran"
    assert world.version_of("demo-torch") == "2.11.0+cu130"
    assert world.version_of("nvidia-cublas") == "13.1.0.3"
    assert (project / "uv.lock").read_text() == lock_text  # --locked: uv.lock is never rewritten
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["torch"]["result"] in ("skipped", "verified")
    assert world.version_of("demo-torch") == "2.11.0+cu130"


def test_sync_without_inexact_warns(world):
    (world.root / "proj").mkdir()
    recipe = write(world, [R.venv(), R.install("click", ["click"], index_url=world.index.url()),
                           R.sync("sync", "proj")])
    plan = ok(world.run(["plan", recipe]))
    assert ("warning: step 'sync': `uv sync` is exact and removes packages installed by earlier "
            "install steps; add \"--inexact\" to its args") in plan.stdout


# --------------------------------------------------------------------------- more

def test_later_step_reruns_when_earlier_step_undoes_its_work(world):
    """Ownership moves forward only: re-running torch re-pins nvidia-cublas to 13.1.0.3, so the
    cublas upgrade step no longer holds and runs again."""
    recipe = write(world, R.pipeline(world.index)[:3])
    ok(world.run([recipe]))
    assert world.version_of("nvidia-cublas") == "13.4.1.1"
    world.uv_pip("install", "--index-url", world.index.url(), "nvidia-cublas==13.1.0.3")
    proc, doc = world.run_json([recipe])
    ok(proc)
    steps = steps_by_id(doc)
    # torch's own work holds; its verify clause saw the venv change, so it ran again.
    assert steps["torch"]["result"] == "verified"
    assert steps["torch"]["reason"] == "the venv changed since it was verified"
    assert steps["cublas"]["result"] == "ran"
    assert steps["cublas"]["reason"] == "nvidia-cublas is now 13.1.0.3 (was 13.4.1.1)"
    assert world.version_of("nvidia-cublas") == "13.4.1.1"


def test_verify_flag_finds_a_broken_dependency_of_an_up_to_date_step(world):
    recipe = write(world, [R.venv(),
                           R.install("tf", ["transformers"], index_url=world.index.url(),
                                     verify=[R.imp("transformers", "AutoTokenizer")])])
    ok(world.run([recipe]))
    # Break regex without touching any RECORD: the journal still holds.
    r = world.python("import regex, pathlib; pathlib.Path(regex.__file__).write_text('raise ImportError(\"regex is broken\")')")
    assert r.returncode == 0, r.stderr
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["tf"]["reason"] == "up to date"
    proc, doc = world.run_json([recipe, "--verify"])
    assert proc.returncode == 1, proc.stderr
    tf = steps_by_id(doc)["tf"]
    assert tf["result"] == "failed"
    assert doc["error"]["message"] == ("step 'tf': verify failed: import transformers failed: "
                                       "ImportError: regex is broken")


def test_failed_step_resumes_with_reason(world):
    flag = world.root / "flag"
    recipe = write(world, [R.run("maybe", ["test", "-e", str(flag)]), R.run("next", ["true"])])
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 1
    assert doc["error"]["message"] == "step 'maybe' (run) failed: test exit code 1"
    flag.write_text("")
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert {s["id"]: s["reason"] for s in doc["steps"]} == {
        "maybe": "resuming: last run failed", "next": "first run"}


def test_relative_paths_are_relative_to_the_recipe(world, tmp_path):
    # The local-version torch is only on the cu130 index: here it comes from find_links.
    (world.root / "links").mkdir()
    src = world.index.root / "cu130" / "demo_torch-2.11.0+cu130-py3-none-any.whl"
    shutil.copy(src, world.root / "links" / src.name)
    recipe = write(world, [R.venv(), R.install("torch", ["demo-torch==2.11.0+cu130"], find_links=["links"],
                                               index_url=world.index.url("main"))],
                   venv_path="envs/here")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc, doc = world.run_json([Path("..") / "w" / "recipe.toml"], cwd=elsewhere)
    ok(proc)
    assert doc["venv"] == str(world.root / "envs" / "here")
    assert world.version_of("demo-torch", venv=world.root / "envs" / "here") == "2.11.0+cu130"
    assert world.index.count(r"^/cu130/") == 0
    assert not list(elsewhere.iterdir())

    # --venv is relative to the current directory.
    proc, doc = world.run_json([recipe, "--venv", "v2"], cwd=elsewhere)
    ok(proc)
    assert doc["venv"] == str(elsewhere / "v2")
    assert world.version_of("demo-torch", venv=elsewhere / "v2") == "2.11.0+cu130"


def test_plan_keys_known_once_the_venv_exists(world):
    recipe = write(world, R.pipeline(world.index))
    plan = json.loads(ok(world.run(["plan", recipe, "--json"])).stdout)
    keys = {s["id"]: s["key"] for s in plan["steps"]}
    assert all(keys[i] for i in ("venv", "torch", "cublas", "transformers"))
    # {python.ext_suffix} is known only once the venv exists (helpers' argv, the check's file
    # clause); keys are not chained, so no other key waits for it.
    assert keys["helpers"] is None and keys["check"] is None
    helpers = plan["steps"][4]
    assert helpers["complete"] is False
    assert "<python.ext_suffix: known after the venv exists>" in helpers["creates"]
    text = ok(world.run(["plan", recipe])).stdout
    assert text.count("  key: known once the venv exists\n") == 2

    ok(world.run([recipe]))
    plan2 = json.loads(ok(world.run(["plan", recipe, "--json"])).stdout)
    journal = world.journal()["steps"]
    for s in plan2["steps"]:
        assert s["key"] == journal[s["id"]]["key"], s["id"]
    assert plan2["steps"][4]["creates"].endswith(".stamp") and "<" not in plan2["steps"][4]["creates"]


def test_embedded_demo(world):
    demo_dir = world.root / "demo"
    env = {"BOOTSTRAP_DEMO_INDEX": world.index.base_url, "BOOTSTRAP_DEMO_DIR": str(demo_dir)}
    proc = world.run(["demo", "--json"], env=env)
    ok(proc)
    doc = json.loads(proc.stdout)
    assert doc["recipe"] == "demo" and doc["venv"] == str(demo_dir / "venv")
    assert [s["id"] for s in doc["steps"]] == R.PIPELINE_IDS
    assert all(s["result"] == "ran" for s in doc["steps"])
    assert world.version_of("demo-torch", venv=demo_dir / "venv") == "2.11.0+cu130"
    assert world.version_of("nvidia-cublas", venv=demo_dir / "venv") == "13.4.1.1"
    t0 = time.monotonic()
    proc2 = world.run(["demo", "--json"], env=env)
    wall = time.monotonic() - t0
    print(f"\nno-op re-run of the demo: {wall:.3f} s")
    assert wall < NOOP_SECONDS
    ok(proc2)
    assert [s["reason"] for s in json.loads(proc2.stdout)["steps"]] == ["up to date"] * 6


def test_check_step_missing_file(world):
    recipe = write(world, [R.check("check", [R.file("missing.txt")])])
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 1
    assert doc["error"]["message"] == f"step 'check': verify failed: {world.root / 'missing.txt'} does not exist"
    (world.root / "missing.txt").write_text("")
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["check"]["reason"] == "resuming: last run failed"


def test_optional_failure_then_required_failure_exits_1(world):
    recipe = write(world, [R.run("opt", ["false"], optional=True), R.run("req", ["false"]),
                           R.run("never", ["true"])])
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 1
    assert [s["result"] for s in doc["steps"]] == ["failed (optional)", "failed", "not reached"]
    assert doc["error"]["message"] == "step 'req' (run) failed: false exit code 1"


def core_version(world) -> str:
    """demo-core's version in the world's venv, from its dist-info's name."""
    (info,) = world.venv.glob("lib/python*/site-packages/demo_core-*.dist-info")
    return info.name[len("demo_core-"):-len(".dist-info")]


def history_numbers(world) -> list[str]:
    return sorted(p.name for p in (world.venv / ".bootstrap" / "history").glob("*.json"))


def test_a_run_that_changes_nothing_leaves_history_alone_and_rollback_last_undoes_the_newest_change(world):
    """History records changes: a run whose only work is a command (or one re-run by --force)
    writes no entry, so `rollback --last` still returns to the state before the upgrade."""
    index = world.index.url()
    first = write(world, [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=index)])
    ok(world.run([first]))
    upgraded = write(world, [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=index),
                             R.install("up", ["demo-core==2.0.0"], index_url=index, upgrade=True,
                                       allow_conflicts=["demo-core"])])
    ok(world.run([upgraded]))
    entries = history_numbers(world)
    assert core_version(world) == "2.0.0"
    marker = world.root / "ran.txt"
    with_command = write(world, [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=index),
                                 R.install("up", ["demo-core==2.0.0"], index_url=index, upgrade=True,
                                           allow_conflicts=["demo-core"]),
                                 R.run("touch", ["touch", str(marker)])])
    proc, doc = world.run_json([with_command])
    ok(proc)
    assert marker.exists() and steps_by_id(doc)["touch"]["result"] == "ran"
    assert doc["history"] == {"before": None, "after": None}
    ok(world.run([with_command, "--force", "--only", "touch"]))
    assert history_numbers(world) == entries  # neither run wrote an entry
    rolled = ok(world.run(["rollback", "--venv", world.venv, "--last", "--index-url", index]))
    assert "nothing to do" not in rolled.stdout
    assert core_version(world) == "1.0.0"


def test_a_no_op_run_writes_nothing_not_even_the_lock(world):
    """A settled venv is confirmed under a shared lock: no file under the venv changes (mtime
    and content), so an image layer holding a no-op run stays empty."""
    recipe = write(world, [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url()),
                           R.run("cmd", ["true"], creates=str(world.root / "made"))])
    (world.root / "made").write_text("")
    ok(world.run([recipe]))
    ok(world.run([recipe]))  # settles verify state and stamps, if anything was left to settle
    state = world.venv / ".bootstrap"

    def stamps():
        return {p: (p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
                for p in sorted(world.venv.rglob("*")) if not p.is_symlink()}

    before = stamps()
    time.sleep(0.02)
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert {s["result"] for s in doc["steps"]} == {"skipped"}
    assert stamps() == before
    assert (state / "lock").exists()
