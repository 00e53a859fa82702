"""`bootstrap run` / `plan` end to end: the real binary, real uv, real venvs, the fixture index."""

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
from recipes import NOOP_SECONDS, steps_by_id


def write(world, steps, **kw) -> Path:
    return R.write_recipe(world.root, steps=steps, **kw)


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


# --------------------------------------------------------------------------- full run / no-op

def test_full_run_then_noop_second_run(world):
    recipe = write(world, R.pipeline(world.index))
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert doc["schema"] == 1 and doc["recipe"] == "itest" and doc["ok"] is True
    assert doc["venv"] == str(world.venv)
    assert "error" not in doc
    assert [s["id"] for s in doc["steps"]] == R.PIPELINE_IDS
    for s in doc["steps"]:
        assert s["result"] == "ran", s
        assert s["reason"] == "first run", s
        assert s["attempts"] == 1, s
    run_id = doc["run_id"]
    assert re.fullmatch(r"\d{8}T\d{6}Z-\d+", run_id)

    # Plain status lines on stderr (not a TTY), then the summary table.
    err = proc.stderr
    assert "[2/6] torch  install ...\n" in err
    assert re.search(r"^\[2/6\] torch  install  ran: first run \(\d", err, re.M), err
    assert re.search(r"^\[6/6\] check  check  ran: first run \(", err, re.M)
    assert re.search(r"^step\s+kind\s+result\s+time$", err, re.M)
    assert f"done in " in err and f"(venv {world.venv})" in err

    # What the steps did to the venv.
    for dist, version in R.PIPELINE_VERSIONS.items():
        assert world.version_of(dist) == version, dist
    r = world.python("import demo_torch, nvidia_cublas; print(demo_torch.CUDA, nvidia_cublas.HAS_GROUPED_GEMM)")
    assert r.stdout.split() == ["13.0", "True"]
    stamps = list(world.venv.glob("helpers*.stamp"))
    assert len(stamps) == 1 and stamps[0].read_text() == "built\n"
    assert stamps[0].name.startswith("helpers.cpython-311")

    # Journal and per-step logs.
    journal = world.journal()
    assert journal["schema"] == 1 and journal["recipe"] == "itest"
    assert set(journal["steps"]) == set(R.PIPELINE_IDS)
    for sid, entry in journal["steps"].items():
        assert entry["status"] == "ok", sid
        assert entry["run_id"] == run_id
        assert len(entry["key"]) >= 32
    assert "demo-torch" in journal["steps"]["torch"]["dists"]
    # The upgrade moved nvidia-cublas to the step that changed it last.
    assert "nvidia-cublas" in journal["steps"]["cublas"]["dists"]
    assert "nvidia-cublas" not in journal["steps"]["torch"]["dists"]
    assert journal["steps"]["cublas"]["dists"]["nvidia-cublas"]["version"] == "13.4.1.1"
    logdir = world.venv / ".bootstrap" / "logs" / run_id
    for i, sid in enumerate(R.PIPELINE_IDS, start=1):
        log = logdir / f"{i:02}-{sid}.log"
        assert doc["steps"][i - 1]["log"] == str(log)
        assert log.is_file(), log
    torch_log = (logdir / "02-torch.log").read_text()
    assert torch_log.startswith("$ ") and " pip install " in torch_log
    assert "demo-torch==2.11.0+cu130" in torch_log
    assert "verify: import demo_torch" in torch_log

    # Second run: everything is up to date; nothing is asked of the index. Typically ~0.05 s;
    # the bound is generous for a loaded CI machine (bench/noop.sh measures it properly).
    world.index.reset()
    journal_before = (world.venv / ".bootstrap" / "journal.json").read_bytes()
    t0 = time.monotonic()
    proc2 = world.run([recipe])
    wall = time.monotonic() - t0
    ok(proc2)
    print(f"\nno-op re-run of the pipeline: {wall:.3f} s")
    assert wall < NOOP_SECONDS, f"second run took {wall:.2f}s"
    for i, sid in enumerate(R.PIPELINE_IDS, start=1):
        kind = {"venv": "venv", "helpers": "run", "check": "check"}.get(sid, "install")
        assert re.search(rf"^\[{i}/6\] {sid}  {kind}  skipped: up to date \(", proc2.stderr, re.M), proc2.stderr
    assert world.index.stats() == {}
    # A no-op writes no journal and no new log directory.
    assert (world.venv / ".bootstrap" / "journal.json").read_bytes() == journal_before
    assert [p.name for p in (world.venv / ".bootstrap" / "logs").iterdir()] == [run_id]


def test_second_run_json_reports_skips(world):
    recipe = write(world, [R.venv(), R.install("core", ["demo-core==1.1.0"], index_url=world.index.url())])
    ok(world.run([recipe]))
    proc, doc = world.run_json([recipe])
    ok(proc)
    steps = steps_by_id(doc)
    assert steps["venv"]["result"] == "skipped" and steps["venv"]["reason"] == "up to date"
    assert steps["core"]["result"] == "skipped" and steps["core"]["reason"] == "up to date"
    assert steps["core"]["attempts"] == 0
    assert steps["core"]["log"] == ""


# --------------------------------------------------------------------------- upgrade / reinstall

def test_upgrade_and_reinstall_steps(world):
    url = world.index.url()
    recipe = write(world, [
        R.venv(),
        R.install("pin", ["demo-core==1.0.0"], index_url=url),
        R.install("plain", ["demo-core"], index_url=url),
        R.install("upgrade", ["demo-core"], index_url=url, upgrade=True),
        R.install("reinstall", ["demo-core==2.0.0"], index_url=url, reinstall=True,
                  verify=[R.imp("demo_core", "NEW_API")]),
    ])
    proc, doc = world.run_json([recipe])
    ok(proc)
    steps = steps_by_id(doc)
    assert steps["pin"]["result"] == "ran"
    # Without upgrade, an installed demo-core satisfies "demo-core": nothing runs.
    assert steps["plain"]["result"] == "skipped"
    assert steps["plain"]["reason"] == "requirements already satisfied"
    # upgrade goes to the newest final release (not 2.1.0rc1).
    assert steps["upgrade"]["result"] == "ran"
    upgrade_log = Path(steps["upgrade"]["log"]).read_text()
    assert "--upgrade-package demo-core" in upgrade_log.splitlines()[0]
    assert "- demo-core==1.0.0" in upgrade_log and "+ demo-core==2.0.0" in upgrade_log
    # reinstall runs although 2.0.0 is already there.
    assert steps["reinstall"]["result"] == "ran"
    reinstall_log = Path(steps["reinstall"]["log"]).read_text()
    assert "--reinstall" in reinstall_log.splitlines()[0]
    assert "~ demo-core==2.0.0" in reinstall_log
    assert world.version_of("demo-core") == "2.0.0"

    journal = world.journal()["steps"]
    # demo-core belongs to the step that changed it last.
    assert list(journal["reinstall"]["dists"]) == ["demo-core"]
    assert "demo-core" not in journal["pin"]["dists"]
    assert "demo-core" not in journal["upgrade"]["dists"]

    proc2, doc2 = world.run_json([recipe])
    ok(proc2)
    assert {s["id"]: s["reason"] for s in doc2["steps"]} == {
        "venv": "up to date", "pin": "up to date", "plain": "up to date",
        "upgrade": "up to date", "reinstall": "up to date"}


# --------------------------------------------------------------------------- skip logic

def test_requirements_already_satisfied_without_journal(world):
    url = world.index.url()
    recipe = write(world, [R.venv(), R.install("utils", ["demo-utils>=1.0"], index_url=url),
                           R.install("core", ["demo-core>=2"], index_url=url)])
    ok(world.run([recipe]))
    (world.venv / ".bootstrap" / "journal.json").unlink()
    world.index.reset()
    proc, doc = world.run_json([recipe])
    ok(proc)
    steps = steps_by_id(doc)
    assert steps["venv"]["result"] == "skipped"
    assert steps["venv"]["reason"].startswith("venv exists (Python 3.11")
    assert steps["venv"]["reason"].endswith("): kept")
    for sid in ("utils", "core"):
        assert steps[sid]["result"] == "skipped", steps[sid]
        assert steps[sid]["reason"] == "requirements already satisfied"
    assert "[2/3] utils  install  skipped: requirements already satisfied (" in proc.stderr
    assert world.index.stats() == {}
    # The journal is written again: a third run is a plain no-op.
    proc3, doc3 = world.run_json([recipe])
    assert [s["reason"] for s in doc3["steps"]] == ["up to date"] * 3


def test_dist_changed_behind_our_back_reruns_owner(world):
    url = world.index.url()
    recipe = write(world, [R.venv(), R.install("core", ["demo-core>=2"], index_url=url),
                           R.install("click", ["click"], index_url=url)])
    ok(world.run([recipe]))
    assert world.version_of("demo-core") == "2.0.0"
    world.uv_pip("install", "--index-url", url, "demo-core==1.0.0")
    assert world.version_of("demo-core") == "1.0.0"

    proc, doc = world.run_json([recipe])
    ok(proc)
    steps = steps_by_id(doc)
    assert steps["venv"]["result"] == "skipped"
    assert steps["core"]["result"] == "ran", steps["core"]
    assert steps["core"]["reason"] == "demo-core is now 1.0.0 (was 2.0.0)"
    assert steps["click"]["result"] == "skipped" and steps["click"]["reason"] == "up to date"
    assert world.version_of("demo-core") == "2.0.0"


def test_removed_dist_reruns_owner(world):
    url = world.index.url()
    recipe = write(world, [R.venv(), R.install("core", ["demo-core==1.1.0"], index_url=url)])
    ok(world.run([recipe]))
    world.uv_pip("uninstall", "demo-core")
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["core"]["result"] == "ran"
    assert steps_by_id(doc)["core"]["reason"] == "demo-core is no longer installed"
    assert world.version_of("demo-core") == "1.1.0"


def test_changed_step_reruns_it_and_not_unrelated_later_steps(world):
    url = world.index.url()
    steps = [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=url),
             R.install("click", ["click"], index_url=url)]
    recipe = write(world, steps)
    ok(world.run([recipe]))
    steps[1]["packages"] = ["demo-core==1.1.0"]
    write(world, steps)
    proc, doc = world.run_json([recipe])
    ok(proc)
    res = {s["id"]: (s["result"], s["reason"]) for s in doc["steps"]}
    # Keys are not chained (bootstrap-step-v3): click's inputs did not change, and its own
    # requirements still hold, so it stays up to date.
    assert res == {"venv": ("skipped", "up to date"),
                   "core": ("ran", "step changed: argv: +demo-core==1.1.0, -demo-core==1.0.0"),
                   "click": ("skipped", "up to date")}
    assert world.version_of("demo-core") == "1.1.0"
    assert world.journal()["steps"]["click"]["key"] == json.loads(
        ok(world.run(["plan", recipe, "--json"])).stdout)["steps"][2]["key"]


# --------------------------------------------------------------------------- selection

def selection_recipe(world):
    url = world.index.url()
    return write(world, [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=url),
                         R.install("click", ["click==8.1.7"], index_url=url),
                         R.install("platformdirs", ["platformdirs"], index_url=url)])


def test_only_and_skip(world):
    recipe = selection_recipe(world)
    proc, doc = world.run_json([recipe, "--only", "venv", "click"])
    ok(proc)
    assert {s["id"]: s["result"] for s in doc["steps"]} == {
        "venv": "ran", "core": "not selected", "click": "ran", "platformdirs": "not selected"}
    assert world.version_of("click") == "8.1.7"
    assert world.version_of("demo-core") is None

    proc, doc = world.run_json([recipe, "--skip", "platformdirs"])
    ok(proc)
    assert {s["id"]: s["result"] for s in doc["steps"]} == {
        "venv": "skipped", "core": "ran", "click": "skipped", "platformdirs": "not selected"}
    assert world.version_of("demo-core") == "1.0.0"
    assert world.version_of("platformdirs") is None


def test_from_and_force(world):
    recipe = selection_recipe(world)
    ok(world.run([recipe]))
    proc, doc = world.run_json([recipe, "--from", "click"])
    ok(proc)
    assert {s["id"]: s["result"] for s in doc["steps"]} == {
        "venv": "not selected", "core": "not selected", "click": "skipped", "platformdirs": "skipped"}

    world.index.reset()
    proc, doc = world.run_json([recipe, "--from", "click", "--force"])
    ok(proc)
    assert {s["id"]: (s["result"], s["reason"]) for s in doc["steps"]} == {
        "venv": ("not selected", "not selected"), "core": ("not selected", "not selected"),
        "click": ("ran", "forced"), "platformdirs": ("ran", "forced")}
    click = steps_by_id(doc)["click"]
    assert click["attempts"] == 1
    assert Path(click["log"]).read_text().startswith("$ ")
    assert world.index.count(r"^/main/simple/demo-core/$") == 0


def test_unknown_only_id_is_usage_error(world):
    recipe = selection_recipe(world)
    proc = world.run([recipe, "--only", "venv", "clik"])
    assert proc.returncode == 2, proc.stderr
    assert "error: --only clik: the recipe has no step 'clik' (did you mean 'click'?)" in proc.stderr
    assert "steps: venv, core, click, platformdirs" in proc.stderr
    assert not world.venv.exists()

    proc, doc = world.run_json([recipe, "--from", "cor"])
    assert proc.returncode == 2
    assert doc["ok"] is False and doc["error"]["exit_code"] == 2
    assert doc["error"]["message"] == "--from cor: the recipe has no step 'cor' (did you mean 'core'?)"


# --------------------------------------------------------------------------- plan

def test_plan_changes_nothing_and_prints_argv_env_key(world):
    recipe = write(world, [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url()),
                           R.run("hello", ["echo", "{venv.path}"], env={"GREETING": "hi"})],
                   network={"timeout": 7, "retries": 2})
    before = sorted(p.name for p in world.root.iterdir())
    proc = world.run(["plan", recipe])
    ok(proc)
    assert sorted(p.name for p in world.root.iterdir()) == before
    assert not world.venv.exists()
    assert world.index.stats() == {}
    out = proc.stdout
    assert f"recipe: itest ({recipe})" in out
    assert f"venv: {world.venv} (does not exist yet)" in out
    assert re.search(r"^installer: uv \(/\S+/uv\)$", out, re.M), out
    assert "[1/3] venv (venv)" in out and "[2/3] core (install)" in out
    assert re.search(rf"^  argv: \S+/uv venv --no-project --allow-existing --python 3\.11 {re.escape(str(world.venv))}$",
                     out, re.M), out
    assert re.search(rf"^  argv: \S+/uv pip install --python {re.escape(str(world.venv))}/bin/python "
                     rf"--index-url {re.escape(world.index.url())} demo-core==1\.0\.0$", out, re.M), out
    assert "  env set: UV_HTTP_TIMEOUT=7\n" in out
    assert "  env set: UV_HTTP_RETRIES=2\n" in out
    assert "  env set: GREETING=hi\n" in out
    assert re.search(rf"^  argv: /\S*/echo {re.escape(str(world.venv))}$", out, re.M), out
    keys = re.findall(r"^  key: (\S+)$", out, re.M)
    assert len(keys) == 3 and len(set(keys)) == 3
    assert all(re.fullmatch(r"[0-9a-f]{16,}", k) for k in keys), keys

    # Same plan twice: same keys; --explain shows the key's inputs.
    proc2 = world.run(["plan", recipe, "--explain"])
    ok(proc2)
    assert re.findall(r"^  key: (\S+)$", proc2.stdout, re.M) == keys
    assert re.search(r"^    \| .*argv", proc2.stdout, re.M)
    assert not world.venv.exists()


def test_plan_json_and_keys_match_run(world):
    recipe = write(world, [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url())])
    proc = world.run(["plan", recipe, "--json"])
    ok(proc)
    plan = json.loads(proc.stdout)
    assert plan["schema"] == 1 and plan["recipe"] == "itest"
    assert plan["recipe_file"] == str(recipe)
    assert plan["venv"] == str(world.venv) and plan["venv_exists"] is False
    assert plan["installer"]["name"] == "uv"
    assert [s["id"] for s in plan["steps"]] == ["venv", "core"]
    core = plan["steps"][1]
    assert core["kind"] == "install"
    assert core["argv"][1:] == ["pip", "install", "--python", str(world.venv / "bin" / "python"),
                                "--index-url", world.index.url(), "demo-core==1.0.0"]
    assert core["env"]["set"]["UV_HTTP_TIMEOUT"] == "10"
    assert core["attempts"] == 1 and core["optional"] is False
    assert not world.venv.exists()

    ok(world.run([recipe]))
    journal = world.journal()["steps"]
    assert journal["venv"]["key"] == plan["steps"][0]["key"]
    assert journal["core"]["key"] == core["key"]
    plan2 = json.loads(ok(world.run(["plan", recipe, "--json"])).stdout)
    assert plan2["venv_exists"] is True and plan2["python"]["version"].startswith("3.11")
    assert plan2["steps"][1]["key"] == core["key"]


# --------------------------------------------------------------------------- verify / optional

def test_verify_import_failure_shows_real_exception(world):
    recipe = write(world, [R.venv(),
                           R.install("tf", ["transformers"], index_url=world.index.url(), no_deps=True,
                                     verify=[R.imp("transformers", "AutoTokenizer")]),
                           R.install("after", ["click"], index_url=world.index.url())])
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 1, proc.stderr
    assert world.version_of("transformers") == "4.57.1"
    assert world.version_of("regex") is None
    msg = ("step 'tf': verify failed: import transformers failed: "
           "ModuleNotFoundError: No module named 'regex'")
    assert f"error: {msg}" in proc.stderr
    assert doc["ok"] is False and doc["error"]["message"] == msg
    steps = steps_by_id(doc)
    assert steps["tf"]["result"] == "failed"
    assert steps["after"]["result"] == "not reached"
    # The detail has the traceback from the log.
    assert "Traceback (most recent call last)" in doc["error"]["detail"]
    assert "import regex" in doc["error"]["detail"]
    assert world.journal()["steps"]["tf"]["status"] == "failed"


def test_verify_missing_attr_and_root_cause(world):
    recipe = write(world, [R.venv(),
                           R.install("core", ["demo-core==1.0.0"], index_url=world.index.url(),
                                     verify=[R.imp("demo_core", "NEW_API")])])
    proc = world.run([recipe])
    assert proc.returncode == 1
    assert re.search(r"error: step 'core': verify failed: module demo_core \(\S+/demo_core/__init__\.py\) "
                     r"has no attribute 'NEW_API'", proc.stderr), proc.stderr


def test_optional_failing_step_lets_run_go_on(world):
    url = world.index.url()
    recipe = write(world, [R.venv(),
                           R.install("broken", ["broken-import"], index_url=url, optional=True,
                                     verify=[R.imp("broken_import")]),
                           R.install("core", ["demo-core==1.0.0"], index_url=url)])
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert doc["ok"] is True and "error" not in doc
    steps = steps_by_id(doc)
    assert steps["broken"]["result"] == "failed (optional)"
    assert "RuntimeError: broken on purpose" in steps["broken"]["error"]["message"]
    assert steps["core"]["result"] == "ran"
    assert world.version_of("demo-core") == "1.0.0"
    assert re.search(r"^\[2/3\] broken  install  failed \(optional\)", proc.stderr, re.M)
    # It is retried on the next run (it never succeeded); the rest is up to date.
    proc2, doc2 = world.run_json([recipe])
    ok(proc2)
    steps2 = steps_by_id(doc2)
    assert steps2["broken"]["result"] == "failed (optional)"
    assert steps2["core"]["result"] == "skipped"


# --------------------------------------------------------------------------- placeholders

def test_env_placeholder_unset_without_default(world):
    recipe = write(world, [R.venv(), R.install("core", ["demo-core"], index_url="{env.BS_ITEST_INDEX}/main/simple")])
    line, col = R.line_of(recipe, '"{env.BS_ITEST_INDEX}')
    proc = world.run([recipe], env={"BS_ITEST_INDEX": None})
    assert proc.returncode == 2, proc.stderr
    assert (f"error: {recipe}:{line}:{col}: environment variable BS_ITEST_INDEX is not set (used as "
            f"{{env.BS_ITEST_INDEX}}); set it, or give a default: {{env.BS_ITEST_INDEX:-VALUE}}\n") in proc.stderr
    assert not world.venv.exists()

    # Set, it works; a default works too.
    proc = world.run([recipe], env={"BS_ITEST_INDEX": world.index.base_url})
    ok(proc)
    assert world.version_of("demo-core") == "2.0.0"


def test_env_placeholder_default_and_vars(world):
    recipe = write(world, [R.venv(), R.install("core", ["demo-core=={vars.ver}"], index_url="{vars.index}/main/simple")],
                   vars={"index": f"{{env.BS_ITEST_UNSET:-{world.index.base_url}}}", "ver": "1.1.0"},
                   venv_path="{env.BS_ITEST_UNSET2:-envs}/v")
    proc = world.run([recipe], env={"BS_ITEST_UNSET": None, "BS_ITEST_UNSET2": None})
    ok(proc)
    venv = world.root / "envs" / "v"
    assert world.version_of("demo-core", venv=venv) == "1.1.0"


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
    project = world.root / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "itest-proj"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
        'dependencies = ["demo-core<2"]\n\n'
        f'[[tool.uv.index]]\nname = "fixture"\nurl = "{world.index.url()}"\ndefault = true\n')
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
