"""`bootstrap run` / `plan` end to end: the real binary, real uv, real venvs, the fixture index."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import recipes as R
from recipes import NOOP_SECONDS, ok, steps_by_id, write


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
