"""The pip backend (`installer = "pip"`) on the same recipe as the uv runs."""

from __future__ import annotations

import re
import time

import recipes as R
from recipes import NOOP_SECONDS, steps_by_id


def pip_world(world):
    world.env["PIP_CACHE_DIR"] = str(world.root.parent / "pip-cache")
    return world


def test_pip_backend_full_run_then_noop(world):
    pip_world(world)
    recipe = R.write_recipe(world.root, steps=R.pipeline(world.index), installer="pip",
                            network={"timeout": 10, "retries": 1, "attempts": 1})
    plan = world.run(["plan", recipe])
    assert plan.returncode == 0, plan.stderr
    assert re.search(r"^installer: pip \(/\S*python3(\.11)?\)$", plan.stdout, re.M), plan.stdout
    assert re.search(rf"^  argv: \S*python3(\.11)? -m venv {re.escape(str(world.venv))}$", plan.stdout, re.M)
    assert re.search(rf"^  argv: {re.escape(str(world.venv))}/bin/python -m pip install --timeout 10 --retries 1 "
                     rf"--index-url {re.escape(world.index.url('main'))} --extra-index-url "
                     rf"{re.escape(world.index.url('cu130'))} demo-torch==2\.11\.0\+cu130$", plan.stdout, re.M), plan.stdout
    assert "  env set: PIP_DISABLE_PIP_VERSION_CHECK=1\n" in plan.stdout
    assert not world.venv.exists()

    proc, doc = world.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    assert [s["result"] for s in doc["steps"]] == ["ran"] * 6
    for dist, version in R.PIPELINE_VERSIONS.items():
        assert world.version_of(dist) == version, dist
    steps = steps_by_id(doc)
    from pathlib import Path
    cublas_log = Path(steps["cublas"]["log"]).read_text()
    assert " -m pip install " in cublas_log and "--upgrade" in cublas_log
    assert "Successfully installed nvidia-cublas-13.4.1.1" in cublas_log
    tf_log = Path(steps["transformers"]["log"]).read_text()
    assert "--force-reinstall" in tf_log
    assert "nvidia-cublas" in world.journal()["steps"]["cublas"]["dists"]

    world.index.reset()
    t0 = time.monotonic()
    proc2, doc2 = world.run_json([recipe])
    wall = time.monotonic() - t0
    assert proc2.returncode == 0, proc2.stderr
    print(f"\nno-op re-run with pip: {wall:.3f} s")
    assert wall < NOOP_SECONDS, f"second run took {wall:.2f}s"
    assert [s["reason"] for s in doc2["steps"]] == ["up to date"] * 6
    assert world.index.stats() == {}


def test_pip_backend_skip_logic(world):
    pip_world(world)
    url = world.index.url()
    recipe = R.write_recipe(world.root, installer="pip", steps=[
        R.venv(), R.install("core", ["demo-core>=2"], index_url=url),
        R.install("utils", ["demo-utils"], index_url=url)])
    proc = world.run([recipe])
    assert proc.returncode == 0, proc.stderr
    assert world.version_of("demo-core") == "2.0.0" and world.version_of("demo-utils") == "1.0.0"

    # Journal gone, packages there: satisfied.
    (world.venv / ".bootstrap" / "journal.json").unlink()
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    steps = steps_by_id(doc)
    assert steps["core"]["reason"] == "requirements already satisfied"
    assert steps["utils"]["reason"] == "requirements already satisfied"

    # Changed behind bootstrap's back (with pip itself): the owning step runs again.
    r = world.python("import subprocess, sys; sys.exit(subprocess.call([sys.executable, '-m', 'pip', 'install', "
                     f"'-q', '--index-url', {url!r}, 'demo-core==1.0.0']))")
    assert r.returncode == 0, r.stderr
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    steps = steps_by_id(doc)
    assert steps["core"]["result"] == "ran"
    assert steps["utils"]["result"] == "skipped"
    assert world.version_of("demo-core") == "2.0.0"


def test_no_build_isolation_package_is_refused_with_pip_naming_its_line(world):
    """uv's per-package switch has no pip equivalent: a pip recipe naming one is an error at the
    key's line, before anything runs, instead of a setting that silently does nothing."""
    pip_world(world)
    recipe = R.write_recipe(world.root, installer="pip", steps=[
        R.venv(), R.install("core", ["demo-core"], index_url=world.index.url(),
                            no_build_isolation_package=["demo-core"])])
    proc = world.run(["plan", recipe])
    assert proc.returncode == 2, proc.stderr
    line = next(i for i, text in enumerate(recipe.read_text().splitlines(), 1) if "no_build_isolation_package" in text)
    assert f"{recipe.name}:{line}:" in proc.stderr or f"{recipe}:{line}:" in proc.stderr, proc.stderr
    assert "'no_build_isolation_package' needs the uv installer" in proc.stderr
    assert not world.venv.exists()
