"""An install step with `pylock` (issue 25): a pylock.toml the real uv compiled against the
fixture index installs as a recipe step into an empty venv path, exactly its pins, hash-checked;
a second run is a no-op, a changed lock re-runs the step, a bad lock fails at plan time."""

from __future__ import annotations

import json
import subprocess
import tomllib

import recipes as R
from test_pylock import freeze, ok, uv


def compile_pylock(world, requirements: str, name: str = "pylock.toml"):
    (world.root / "req.in").write_text(requirements)
    uv(world, "pip", "compile", "req.in", "-o", name, "--index-url", world.index.url("main"),
       "--python-version", "3.11")
    return world.root / name


def pinned(pylock: str, **extra) -> dict:
    return {"id": "pinned", "kind": "install", "pylock": pylock, **extra}


def locked_versions(pylock) -> list[str]:
    doc = tomllib.loads(pylock.read_text())
    return sorted(f"{p['name']}=={p['version']}" for p in doc["packages"])


def results(run: dict) -> dict:
    return {s["id"]: s["result"] for s in run["steps"]}


def test_a_pylock_uv_compiled_installs_as_a_step_exactly_and_a_second_run_is_a_no_op(world):
    pylock = compile_pylock(world, "demo-utils==1.0.0\ndemo-requests\n")
    assert tomllib.loads(pylock.read_text())["created-by"] == "uv"
    main = world.index.url("main")
    recipe = R.write_recipe(world.root, steps=[R.venv(), pinned("pylock.toml", index_url=main,
                                                                 verify=[R.imp("demo_utils")])])
    assert not world.venv.exists()

    proc, run = world.run_json([recipe])
    ok(proc)
    assert results(run) == {"venv": "ran", "pinned": "ran"}
    assert freeze(world, world.venv) == locked_versions(pylock)
    assert len(freeze(world, world.venv)) == 3
    # What ran: the pins with --no-deps from the step's index, each hash checked.
    requirements = (world.venv / ".bootstrap" / "pylock" / "pinned.txt").read_text()
    assert "demo-utils==1.0.0 --hash=sha256:" in requirements
    plan = json.loads(ok(world.run(["plan", recipe, "--json"])).stdout)
    step = next(s for s in plan["steps"] if s["id"] == "pinned")
    assert "--no-deps" in step["argv"] and "--require-hashes" in step["argv"]
    assert step["pylock"]["path"] == str(pylock)

    # A second run changes nothing and asks no index.
    asked = world.index.count(r"/simple/")
    proc, run = world.run_json([recipe])
    ok(proc)
    assert results(run) == {"venv": "skipped", "pinned": "skipped"}
    assert world.index.count(r"/simple/") == asked

    # A changed lock (another version of one pin) re-runs the step, which installs it.
    compile_pylock(world, "demo-utils==1.0.0\ndemo-requests\ndemo-core==1.1.0\n")
    proc, run = world.run_json([recipe])
    ok(proc)
    assert results(run)["pinned"] == "ran"
    assert "demo-core==1.1.0" in freeze(world, world.venv)
    assert freeze(world, world.venv) == locked_versions(pylock)


def test_a_pylock_package_whose_marker_does_not_hold_is_left_out(world):
    pylock = compile_pylock(world, "demo-core==1.0.0\n")
    with pylock.open("a") as f:
        f.write('\n[[packages]]\nname = "demo-torch"\nversion = "2.10.0"\nmarker = "sys_platform == \'win32\'"\n'
                'wheels = [{ url = "http://h/demo_torch-2.10.0-py3-none-any.whl", hashes = { sha256 = "'
                + "a" * 64 + '" } }]\n')
    recipe = R.write_recipe(world.root, steps=[R.venv(), pinned("pylock.toml", index_url=world.index.url("main"))])
    proc, run = world.run_json([recipe])
    ok(proc)
    assert results(run) == {"venv": "ran", "pinned": "ran"}
    assert freeze(world, world.venv) == ["demo-core==1.0.0"]
    proc, run = world.run_json([recipe])
    ok(proc)
    assert results(run)["pinned"] == "skipped"


def test_a_bad_pylock_or_a_step_with_packages_too_fails_at_plan_time_with_its_line(world):
    bad = world.root / "pylock.toml"
    bad.write_text('lock-version = "1.0"\ncreated-by = "x"\n\n[[packages]]\nname = "demo-core"\n'
                   'version = "1.0.0"\nwheels = [{ url = "http://h/demo_core-1.0.0-py3-none-any.whl", '
                   'hashes = { sha256 = "nothex" } }]\n')
    recipe = R.write_recipe(world.root, steps=[R.venv(), pinned("pylock.toml", index_url=world.index.url("main"))])
    proc = world.run([recipe])
    assert proc.returncode == 2, proc.stderr
    assert f"error: step 'pinned': not a valid pylock.toml: {bad}:7:" in proc.stderr
    assert "hashes.sha256 is not 64 hex digits" in proc.stderr
    assert not world.venv.exists()  # refused before anything ran

    # A source tree is not a wheel: refused, naming the package.
    bad.write_text('lock-version = "1.0"\ncreated-by = "x"\n\n[[packages]]\nname = "mine"\n'
                   'directory = { path = "src/mine", editable = true }\n')
    proc = world.run([recipe])
    assert proc.returncode == 2, proc.stderr
    assert f"error: step 'pinned': {bad}:4:1: package mine is a source tree" in proc.stderr

    recipe = R.write_recipe(world.root, steps=[R.venv(), pinned("pylock.toml", packages=["demo-core"])])
    line, col = R.line_of(recipe, "pylock =")
    proc = world.run([recipe])
    assert proc.returncode == 2, proc.stderr
    assert f"{recipe}:{line}:{col + len('pylock = ')}: step 'pinned' takes 'packages' or 'pylock', not both" \
        in proc.stderr
    assert not world.venv.exists()
