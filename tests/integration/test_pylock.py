"""PEP 751 pylock.toml both ways, with the real uv as the other side (issue 25): uv installs
bootstrap's pylock into a fresh venv and gets the venv bootstrap locked; a pylock uv wrote
drives `bootstrap run --locked` into an empty venv path."""

from __future__ import annotations

import shutil
import subprocess
import tomllib

import recipes as R


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def uv(world, *args) -> subprocess.CompletedProcess:
    return ok(subprocess.run([str(world.uv), *[str(a) for a in args]], capture_output=True, text=True,
                             env=world.full_env(), cwd=world.root, timeout=120))


def freeze(world, venv) -> list[str]:
    return sorted(uv(world, "pip", "freeze", "--python", venv / "bin" / "python").stdout.splitlines())


def uv_sync_into_fresh_venv(world, pylock, name="uv-synced"):
    venv = world.root / name
    uv(world, "venv", "--python", "3.11", venv)
    uv(world, "pip", "sync", "--python", venv / "bin" / "python", pylock)
    return venv


def test_uv_installs_bootstraps_pylock_as_the_venv_it_locked(world, tmp_path):
    """Index packages (a dependency reinstalled by a later step) and a wheel uv took from
    find-links (kept in the artifact store: the pylock names it by path)."""
    home = {"BOOTSTRAP_HOME": tmp_path / "home"}
    (world.root / "links").mkdir()
    torch = world.index.root / "cu130" / "demo_torch-2.11.0+cu130-py3-none-any.whl"
    shutil.copy(torch, world.root / "links" / torch.name)
    main = world.index.url("main")
    steps = [R.venv(),
             R.install("utils", ["demo-utils==1.0.0"], index_url=main, verify=[R.imp("demo_utils")]),
             R.install("core", ["demo-core"], index_url=main, reinstall=True),
             R.install("torch", ["demo-torch==2.11.0+cu130"], find_links=["links"], index_url=main)]
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe], env=home))
    proc = ok(world.run(["lock", recipe, "--format", "both"], env=home))
    pylock = world.root / "lockfiles" / "pylock.itest.toml"
    assert f"into {world.root / 'lockfiles' / 'itest.lock.json'} and {pylock}" in proc.stderr

    doc = tomllib.loads(pylock.read_text())
    assert doc["lock-version"] == "1.0" and doc["created-by"] == "bootstrap"
    assert doc["requires-python"] == "==3.11.*"
    packages = {p["name"]: p for p in doc["packages"]}
    assert set(packages) == {"demo-core", "demo-utils", "demo-torch", "nvidia-cublas"}
    utils = packages["demo-utils"]
    assert utils["index"] == main
    assert utils["wheels"][0]["url"].startswith(world.index.url("main").rsplit("/simple", 1)[0])
    assert packages["demo-torch"]["wheels"][0]["path"].startswith(str(tmp_path / "home" / "artifacts"))
    assert doc["tool"]["bootstrap"]["steps"]["utils"]["packages"] == ["demo-core", "demo-utils"]

    synced = uv_sync_into_fresh_venv(world, pylock)
    assert freeze(world, synced) == freeze(world, world.venv)
    assert len(freeze(world, synced)) == 4

    # Bootstrap reads its own pylock back: a locked run into an empty path.
    fresh = world.root / "fresh"
    proc, run = world.run_json([recipe, "--venv", fresh, "--lockfile", pylock], env=home)
    ok(proc)
    assert {s["id"]: s["result"] for s in run["steps"]}["utils"] == "ran"
    assert {p.split("==")[0].split(" @ ")[0] for p in freeze(world, fresh)} == \
        {p.split("==")[0] for p in freeze(world, world.venv)}


def test_a_pylock_uv_compiled_drives_a_locked_run_into_an_empty_path(world):
    main = world.index.url("main")
    (world.root / "req.in").write_text("demo-utils==1.0.0\ndemo-requests\n")
    uv(world, "pip", "compile", "req.in", "-o", "pylock.toml", "--index-url", main, "--python-version", "3.11")
    pylock = world.root / "pylock.toml"
    assert tomllib.loads(pylock.read_text())["created-by"] == "uv"

    # Every package goes to the first install step; the recipe's other steps still run.
    steps = [R.venv(),
             R.install("web", ["demo-utils==1.0.0", "demo-requests"], index_url=main,
                       verify=[R.imp("demo_utils")]),
             R.install("core", ["demo-core>=2"], index_url=main),
             R.run("hello", ["python", "-c", "import demo_core"])]
    recipe = R.write_recipe(world.root, steps=steps)
    fresh = world.root / "fresh"
    proc, run = world.run_json([recipe, "--venv", fresh, "--lockfile", pylock])
    ok(proc)
    assert {s["id"]: s["result"] for s in run["steps"]} == {
        "venv": "ran", "web": "ran", "core": "skipped", "hello": "ran"}
    assert world.index.count(r"/simple/demo-") > 0  # asked the step's index, hash-checked
    synced = uv_sync_into_fresh_venv(world, pylock)
    assert freeze(world, fresh) == freeze(world, synced)
    assert len(freeze(world, fresh)) == 3

    # A recipe the pylock does not satisfy is refused before anything runs.
    steps[2] = R.install("core", ["demo-core>=3"], index_url=main)
    recipe = R.write_recipe(world.root, steps=steps)
    other = world.root / "other"
    proc = world.run([recipe, "--venv", other, "--lockfile", pylock])
    assert proc.returncode == 2, proc.stderr
    assert f"--locked: {pylock} (written by uv) does not fit the recipe" in proc.stderr
    assert "step 'core' asks for demo-core>=3; it locks demo-core 2.0.0" in proc.stderr
    assert not other.exists()


def test_a_bad_pylock_is_refused_at_its_line_and_only_a_pylock_is_the_default(world):
    main = world.index.url("main")
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=main)])
    bad = world.root / "pylock.toml"
    bad.write_text('lock-version = "1.0"\ncreated-by = "x"\n\n[[packages]]\nname = "demo-core"\n'
                   'version = "1.0.0"\nwheels = [{ url = "http://h/demo_core-1.0.0-py3-none-any.whl", '
                   'hashes = { sha256 = "nothex" } }]\n')
    proc = world.run([recipe, "--venv", world.root / "v", "--lockfile", bad])
    assert proc.returncode == 2, proc.stderr
    assert (f"error: not a valid pylock.toml: {bad}:7:") in proc.stderr
    assert "hashes.sha256 is not 64 hex digits" in proc.stderr

    # `lock --format pylock` alone: `run --locked` finds it where the JSON one would be.
    ok(world.run([recipe]))
    ok(world.run(["lock", recipe, "--format", "pylock"]))
    assert not (world.root / "lockfiles" / "itest.lock.json").exists()
    proc, run = world.run_json([recipe, "--venv", world.root / "fresh", "--locked"])
    ok(proc)
    assert freeze(world, world.root / "fresh") == ["demo-core==1.0.0"]
