"""History kept by `run` (before/after snapshots), `bootstrap lock`, and `run --locked`."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import recipes as R
from recipes import steps_by_id


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def history(world) -> list[str]:
    d = world.venv / ".bootstrap" / "history"
    return sorted(p.name for p in d.glob("*.json")) if d.exists() else []


def test_run_keeps_before_and_after_snapshots_only_when_something_changes(world):
    recipe = R.write_recipe(world.root, steps=R.pipeline(world.index))
    proc, doc = world.run_json([recipe])
    ok(proc)
    # A fresh venv has no "before"; the after-snapshot lists what the run added.
    assert history(world) == ["0001-after.json"]
    assert doc["history"] == {"before": None, "after": 1}
    assert doc["changes"] == "8 added"
    after = json.loads((world.venv / ".bootstrap/history/0001-after.json").read_text())
    assert after["run"]["phase"] == "after" and after["run"]["ok"] is True
    torch = after["packages"]["demo-torch"]
    assert torch["version"] == "2.11.0+cu130"
    assert torch["origin"]["step"] == "torch"
    assert torch["origin"]["index_urls"] == [world.index.url("main"), world.index.url("cu130")]

    # A no-op run writes no history.
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert history(world) == ["0001-after.json"]
    assert doc["history"] == {"before": None, "after": None}

    # Undo the cublas upgrade behind bootstrap's back: the next run restores it, and the
    # summary shows the before -> after change.
    world.uv_pip("install", "--index-url", world.index.url("main"), "nvidia-cublas==13.1.0.3")
    proc = world.run([recipe])
    ok(proc)
    assert history(world) == ["0001-after.json", "0002-before.json", "0003-after.json"]
    assert "changes: 1 upgraded (history #2 -> #3)" in proc.stderr
    assert "^ nvidia-cublas 13.1.0.3 -> 13.4.1.1" in proc.stderr


def wheel_sha256(wheelhouse: Path, name: str) -> str:
    (path,) = list(wheelhouse.glob(f"*/{name}"))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_lock_then_locked_run_installs_exactly_the_lock(world, wheelhouse):
    recipe = R.write_recipe(world.root, steps=R.pipeline(world.index))
    ok(world.run([recipe]))
    lockfile = world.root / "pipeline.lock.json"
    proc = ok(world.run(["lock", recipe, "-o", lockfile]))
    assert f"locked 8 packages of itest into {lockfile}" in proc.stderr
    lock = json.loads(lockfile.read_text())
    torch = lock["packages"]["demo-torch"]
    assert torch["wheel"] == "demo_torch-2.11.0+cu130-py3-none-any.whl"
    assert torch["sha256"] == wheel_sha256(wheelhouse, torch["wheel"])
    assert lock["packages"]["nvidia-cublas"]["origin"]["step"] == "cublas"

    # A fresh venv from the lock: every install step pins with hashes and no resolution.
    fresh = world.root / "fresh"
    proc, doc = world.run_json([recipe, "--venv", fresh, "--lockfile", lockfile])
    ok(proc)
    pins = (fresh / ".bootstrap/locked/torch.txt").read_text()
    assert pins == f"demo-torch==2.11.0+cu130 --hash=sha256:{torch['sha256']}\n"
    assert world.version_of("nvidia-cublas", fresh) == "13.4.1.1"
    assert world.version_of("demo-torch", fresh) == "2.11.0+cu130"

    # Drift: a package the lock does not know makes a locked run fail, naming it.
    world.uv_pip("install", "--index-url", world.index.url("main"), "demo-utils", venv=fresh)
    proc, doc = world.run_json([recipe, "--venv", fresh, "--lockfile", lockfile])
    assert proc.returncode == 1
    assert doc["error"]["message"] == "the venv differs from the lockfile in 2 package(s)"
    assert "demo-utils 1.0.0 is installed but not locked" in doc["error"]["detail"]


def test_lock_of_a_recipe_with_device_values_probes_no_device(world):
    """`lock` runs nothing, so it asks no GPU: a recipe whose build or run steps use {device.*}
    locks on a machine without one (this one, an image build) with or without --arch (found by
    realworld.sh; issue 20: the arch was demanded where nothing needed it)."""
    steps = [R.venv(), R.install("core", ["demo-core==2.0.0"], index_url=world.index.url("main")),
             R.run("arch", ["{venv.python}", "-c", "pass"], env={"TORCH_CUDA_ARCH_LIST": "{device.torch_arch_list}"})]
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe, "--arch", "9.0"]))
    lockfile = world.root / "arch.lock.json"
    ok(world.run(["lock", recipe, "-o", lockfile]))
    assert json.loads(lockfile.read_text())["packages"]["demo-core"]["version"] == "2.0.0"
    ok(world.run(["lock", recipe, "-o", lockfile, "--arch", "9.0"]))
    assert json.loads(lockfile.read_text())["packages"]["demo-core"]["version"] == "2.0.0"
    proc = world.run(["lock", recipe, "--arch", "9.0", "--no-device"])
    assert proc.returncode == 2 and "excludes" in proc.stderr, proc.stderr


def test_locked_run_refuses_a_changed_recipe_and_a_step_the_lock_does_not_cover(world):
    steps = R.pipeline(world.index)
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe]))
    lockfile = world.root / "l.json"
    ok(world.run(["lock", recipe, "-o", lockfile]))
    recipe.write_text(recipe.read_text() + "\n# edited\n")  # a comment: the lock stands
    ok(world.run(["plan", recipe, "--lockfile", lockfile]))
    recipe.write_text(recipe.read_text() + '\n[[step]]\nid = "extra"\nkind = "run"\nargv = ["true"]\n')
    proc = world.run([recipe, "--lockfile", lockfile])
    assert proc.returncode == 2
    assert (f"error: the recipe {recipe} changed since its lockfile {lockfile} was written: step 'extra': added"
            in proc.stderr)

    # A run that failed locks what passed; the failed step is recorded as not covered, and a
    # locked run refuses it (test_fresh_lock.py has the partial bring-up).
    failing = R.write_recipe(world.root, "failing.toml", venv_path="v2",
                             steps=[R.venv(), R.run("boom", ["false"])])
    assert world.run([failing]).returncode == 1
    proc = ok(world.run(["lock", failing, "-o", world.root / "f.json"]))
    assert "not covered: step 'boom': failed on " in proc.stderr
    assert json.loads((world.root / "f.json").read_text())["steps"]["boom"]["covered"] is False
    proc = world.run([failing, "--lockfile", world.root / "f.json", "--venv", world.root / "v3"])
    assert proc.returncode == 2, proc.stderr
    assert f"--locked: the lockfile {world.root / 'f.json'} does not cover step boom" in proc.stderr
    assert not (world.root / "v3").exists()

    # No venv yet: nothing to lock.
    never = R.write_recipe(world.root, "never.toml", venv_path="v4", steps=[R.venv(), R.run("boom", ["false"])])
    proc = world.run(["lock", never, "-o", world.root / "n.json"])
    assert proc.returncode == 2 and "run the recipe first" in proc.stderr, proc.stderr
    assert not (world.root / "n.json").exists()


def test_rollback_on_failure_restores_the_before_snapshot(world):
    steps = R.pipeline(world.index)
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe]))
    before = {n: world.version_of(n) for n in ("demo-core", "nvidia-cublas")}
    assert before == {"demo-core": None, "nvidia-cublas": "13.4.1.1"}
    failing = R.write_recipe(world.root, "failing.toml", steps=steps + [
        R.install("core", ["demo-core==2.0.0"], index_url=world.index.url("main")),
        R.run("boom", ["sh", "-c", "echo 'ImportError: undefined symbol: "
                       "cublasLtGroupedMatrixLayoutInit_internal, version libcublasLt.so.13'; exit 1"]),
    ])
    proc, doc = world.run_json([failing, "--rollback-on-failure"])
    assert proc.returncode == 1
    assert doc["rolled_back"] is True
    assert doc["error"]["message"].startswith("step 'boom' (run) failed")
    assert world.version_of("demo-core") is None  # what the failed run added is gone again
    assert world.version_of("nvidia-cublas") == "13.4.1.1"
    assert "rolled back: the venv is as it was before this run" in proc.stderr
    # The failing step's log matched the knowledge base: explanation and fix under the tail.
    assert "known fault" in proc.stderr and "cublas" in proc.stderr.lower()
    names = sorted(p.name for p in (world.venv / ".bootstrap/history").glob("*.json"))
    assert names[-3:] == ["0002-before.json", "0003-after.json", "0004-rollback.json"]


def test_committed_demo_lockfile_installs_the_demo(world):
    """lockfiles/demo.lock.json belongs to recipes/demo.toml (same digest), and its
    hashes pin the fixture wheels, which are byte-for-byte reproducible on any machine."""
    repo = Path(__file__).resolve().parents[2]
    base = world.index.url("main").rsplit("/main/simple", 1)[0]
    env = {"BOOTSTRAP_DEMO_INDEX": base, "BOOTSTRAP_DEMO_DIR": str(world.root / "demo")}
    proc, doc = world.run_json([repo / "recipes/demo.toml", "--locked", "--venv", world.venv], env=env)
    ok(proc)
    lock = json.loads((repo / "lockfiles/demo.lock.json").read_text())
    for name, pkg in lock["packages"].items():
        assert world.version_of(name) == pkg["version"], name
