"""Step keys hold what decides a step's result and nothing else (bootstrap-step-v4).

A settled venv stays a no-op under what a shell or a Slurm job sets (CUDA_VISIBLE_DEVICES,
NCCL_*, SLURM_*, proxies, caches, concurrency, XDG dirs, SOURCE_DATE_EPOCH, an unrelated
installer's settings); an installer setting that changes what it installs counts for the steps
that run that installer; a variable the recipe names in `[env] key` counts for every step;
`plan --explain` and `run -v` name the input that changed; uv is known by its version, so a
`touch` changes nothing; a venv settled under bootstrap-step-v3 is re-keyed without re-running."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import recipes as R
from recipes import steps_by_id

# What a login shell or a Slurm job sets around a run; none of it decides what is installed.
AMBIENT = {
    "CUDA_VISIBLE_DEVICES": "1",
    "NCCL_DEBUG": "INFO",
    "NCCL_SOCKET_IFNAME": "ib0",
    "https_proxy": "http://127.0.0.1:9",
    "LD_LIBRARY_PATH": "/opt/nowhere/lib",
    "UV_CONCURRENT_DOWNLOADS": "4",
    "SOURCE_DATE_EPOCH": "1",
    "PIP_FIND_LINKS": "/opt/nowhere/wheels",  # the recipe installs with uv
    "SLURM_JOB_ID": "4242",
    "SLURM_PROCID": "3",
    "SLURM_NODEID": "3",
    "TERM": "dumb",
    "LANG": "C.UTF-8",
}


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def would(world, recipe, env=None, *extra) -> dict:
    proc = ok(world.run(["plan", recipe, "--json", *extra], env=env))
    return {s["id"]: s["would"] for s in json.loads(proc.stdout)["steps"]}


def results(doc) -> dict:
    return {s["id"]: s["result"] for s in doc["steps"]}


def history(world) -> list[str]:
    return sorted(p.name for p in (world.venv / ".bootstrap" / "history").glob("*.json"))


def settled(world, header: str = "") -> Path:
    recipe = R.write_recipe(world.root, steps=R.pipeline(world.index), header=header)
    ok(world.run([recipe]))
    return recipe


def test_a_settled_venv_stays_a_no_op_under_a_slurm_jobs_environment(world, tmp_path):
    recipe = settled(world)
    entries = history(world)
    env = {**AMBIENT, "UV_CACHE_DIR": str(tmp_path / "other-uv-cache"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    for name, value in env.items():  # each alone, as the issue found them
        plan = would(world, recipe, {name: value})
        assert {w["action"] for w in plan.values()} == {"skip"}, (name, plan)
    plan = would(world, recipe, env)
    assert {w["action"] for w in plan.values()} == {"skip"}, plan
    proc, doc = world.run_json([recipe], env=env)
    ok(proc)
    assert set(results(doc).values()) == {"skipped"}, doc["steps"]
    proc, doc = world.run_json([recipe])  # and back in the login shell
    ok(proc)
    assert set(results(doc).values()) == {"skipped"}, doc["steps"]
    assert history(world) == entries


def test_an_installer_setting_counts_only_for_the_steps_that_run_that_installer(world):
    recipe = settled(world)
    plan = would(world, recipe, {"UV_INDEX_STRATEGY": "unsafe-best-match"})
    # Its key changed; torch's requirements already hold, so uv is not even asked there. The
    # upgrade and the reinstall always ask uv.
    assert plan["torch"] == {"action": "skip", "reason": "requirements already satisfied"}, plan
    for step in ("cublas", "transformers"):
        assert plan[step]["action"] == "run", (step, plan[step])
        assert plan[step]["reason"] == "step changed: env UV_INDEX_STRATEGY: unset → unsafe-best-match"
    assert plan["helpers"] == {"action": "skip", "reason": "up to date"}, plan
    assert plan["check"] == {"action": "verify", "reason": "an earlier step ran: re-verifying"}, plan
    assert plan["venv"]["action"] == "skip", plan  # an existing venv is kept
    # pip's settings are pip's: a uv recipe does not read them.
    plan = would(world, recipe, {"PIP_INDEX_URL": "http://127.0.0.1:9/simple"})
    assert {w["action"] for w in plan.values()} == {"skip"}, plan


def test_a_variable_the_recipe_names_counts_and_the_change_is_explained(world):
    out = world.root / "algo.txt"
    steps = [*R.pipeline(world.index)[:2],
             R.run("algo", ["sh", "-c", f"printenv NCCL_ALGO > {out} || echo none > {out}"])]
    recipe = R.write_recipe(world.root, steps=steps, header='[env]\nkey = ["NCCL_ALGO"]\n')
    ok(world.run([recipe]))
    assert out.read_text() == "none\n"
    plan = would(world, recipe, {"NCCL_ALGO": "Tree"})
    assert plan["venv"]["reason"].endswith("kept") and plan["torch"]["reason"] == "requirements already satisfied"
    assert plan["algo"]["reason"] == "step changed: env NCCL_ALGO: unset → Tree"
    assert plan["algo"]["changes"] == ["env NCCL_ALGO: unset → Tree"]
    explain = ok(world.run(["plan", recipe, "--explain"], env={"NCCL_ALGO": "Tree"})).stdout
    assert "    changed: env NCCL_ALGO: unset → Tree\n" in explain, explain
    verbose = ok(world.run([recipe, "-v", "--only", "algo"], env={"NCCL_ALGO": "Tree"}))
    assert "step algo changed: env NCCL_ALGO: unset → Tree" in verbose.stderr, verbose.stderr
    assert out.read_text() == "Tree\n"  # the step sees what it is keyed on


def test_a_changed_package_list_is_explained_input_by_input(world):
    url = world.index.url()
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=url)])
    ok(world.run([recipe]))
    R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core==1.1.0", "click"], index_url=url)])
    plan = would(world, recipe)
    assert plan["core"]["changes"] == ["argv: +demo-core==1.1.0, +click, -demo-core==1.0.0"], plan["core"]


def test_touching_uv_changes_nothing_its_version_is_its_identity(world, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    uv = bin_dir / "uv"
    shutil.copy2(world.uv, uv)
    env = {"PATH": f"{bin_dir}{os.pathsep}{world.env['PATH']}"}
    recipe = R.write_recipe(world.root, steps=R.pipeline(world.index))
    ok(world.run([recipe], env=env))
    os.utime(uv)  # touch
    plan = would(world, recipe, env)
    assert {w["action"] for w in plan.values()} == {"skip"}, plan
    proc, doc = world.run_json([recipe], env=env)
    ok(proc)
    assert set(results(doc).values()) == {"skipped"}, doc["steps"]
    version = subprocess.run([uv, "--version"], capture_output=True, text=True).stdout.strip()
    installer = [i for i in world.journal()["steps"]["torch"]["inputs"] if i[0] == "installer"]
    assert installer == [["installer", version]], installer


def test_a_venv_settled_under_the_v3_scheme_is_re_keyed_without_re_running(world):
    recipe = settled(world)
    journal_file = world.venv / ".bootstrap" / "journal.json"
    v4 = {sid: e["key"] for sid, e in world.journal()["steps"].items()}
    # What a v3 bootstrap left: its keys (run -vv logs them) and no recorded inputs.
    debug = ok(world.run([recipe, "-vv"])).stderr
    v3 = dict(re.findall(r"step (\S+) \(\w+\): \w+: [^;]*; key \w+ \(bootstrap-step-v3: (\w+)\)", debug))
    assert set(v3) == set(v4) and all(v3[s] != v4[s] for s in v4), (v3, v4)
    doc = json.loads(journal_file.read_text())
    for sid, entry in doc["steps"].items():
        entry["key"] = v3[sid]
        entry.pop("inputs", None)
    journal_file.write_text(json.dumps(doc))
    entries = history(world)
    plan = would(world, recipe)
    assert {w["action"] for w in plan.values()} == {"skip"}, plan
    proc, doc = world.run_json([recipe, "-vv"])
    ok(proc)
    assert set(results(doc).values()) == {"skipped"}, doc["steps"]
    assert "re-keyed" in proc.stderr
    after = world.journal()["steps"]
    assert {sid: e["key"] for sid, e in after.items()} == v4
    assert all(e["inputs"] for e in after.values())
    assert history(world) == entries
    # Re-keyed once: the next run writes nothing.
    before = journal_file.stat().st_mtime_ns
    ok(world.run([recipe]))
    assert journal_file.stat().st_mtime_ns == before
