"""Issue 41 (hardening, round three), the lock items: a pylock wheel `path` that injects
requirement lines (item 3), the memory `lock` and a locked run spend on huge inputs (item 5),
and an index's sha256 copied into a lockfile unchecked (item 7)."""

from __future__ import annotations

import hashlib
import os
import json
import shutil
import subprocess

import recipes as R
from test_pylock import freeze, ok


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def injecting_pylock(world) -> tuple:
    """A pylock that lists only demo-core, by a `path` whose last component is demo-core's
    wheel and whose newlines add demo-utils and an --extra-index-url to the requirements file
    (the line the old code wrote: PATH --hash=sha256:CORE)."""
    main = world.index.root / "main"
    core, utils = main / "demo_core-1.0.0-py3-none-any.whl", main / "demo_utils-1.0.0-py3-none-any.whl"
    wheel = world.root / "w" / core.name
    wheel.parent.mkdir()
    shutil.copy(core, wheel)
    evil = world.index.url("main")
    path = (f"{wheel} --hash=sha256:{sha256(core)}\ndemo-utils==1.0.0 --hash=sha256:{sha256(utils)}\n"
            f"--extra-index-url {evil}\n#/{core.name}")
    pylock = world.root / "pylock.toml"
    pylock.write_text('lock-version = "1.0"\ncreated-by = "attacker"\n\n[[packages]]\nname = "demo-core"\n'
                      f'version = "1.0.0"\nwheels = [{{ path = {json.dumps(path)}, '
                      f'hashes = {{ sha256 = "{sha256(core)}" }} }}]\n')
    return pylock, wheel


def test_a_pylock_path_with_newlines_is_refused_at_its_line_not_written_as_requirements(world):
    pylock, _ = injecting_pylock(world)
    # The step's index has no demo-utils: only the injected --extra-index-url does.
    recipe = R.write_recipe(world.root, steps=[R.venv(), {"id": "pinned", "kind": "install", "pylock": "pylock.toml",
                                                          "index_url": world.index.url("cu130")}])
    proc = world.run([recipe])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{pylock}:7:20: package demo-core: 'path' holds a control character (U+000A at byte" in proc.stderr
    assert "refused, an installer would read more than a path in it (write it on one line" in proc.stderr
    assert not list(world.root.glob("venv/lib/python*/site-packages/demo_utils*"))
    assert not (world.venv / ".bootstrap" / "pylock" / "pinned.txt").exists()


def test_a_locked_run_from_a_pylock_path_with_newlines_is_refused(world):
    pylock, _ = injecting_pylock(world)
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core"],
                                                                    index_url=world.index.url("cu130"))])
    fresh = world.root / "fresh"
    proc = world.run([recipe, "--venv", fresh, "--lockfile", pylock])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{pylock}:7:20: package demo-core: 'path' holds a control character" in proc.stderr
    assert not (fresh / "lib").exists()


def test_a_json_lockfile_whose_sha256_injects_lines_is_refused(world):
    main = world.index.url("main")
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=main)])
    ok(world.run([recipe]))
    lockfile = world.root / "lock.json"
    ok(world.run(["lock", recipe, "-o", lockfile]))
    lock = json.loads(lockfile.read_text())
    lock["packages"]["demo-core"]["sha256"] += f"\ndemo-utils==1.0.0\n--extra-index-url {main}"
    lockfile.write_text(json.dumps(lock))
    fresh = world.root / "fresh"
    proc = world.run([recipe, "--venv", fresh, "--lockfile", lockfile])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (f"{lockfile}: not a valid lockfile: packages.demo-core.sha256: not 64 lower-case hex digits"
            in proc.stderr)


def test_a_pylock_wheel_under_a_path_with_spaces_and_hashes_installs(world):
    main = world.index.root / "main"
    core = main / "demo_core-1.0.0-py3-none-any.whl"
    odd = world.root / "a b#c;d'q"
    odd.mkdir()
    shutil.copy(core, odd / core.name)
    (world.root / "pylock.toml").write_text(
        'lock-version = "1.0"\ncreated-by = "hand"\n\n[[packages]]\nname = "demo-core"\nversion = "1.0.0"\n'
        f'wheels = [{{ path = {json.dumps(str(odd / core.name))}, hashes = {{ sha256 = "{sha256(core)}" }} }}]\n')
    recipe = R.write_recipe(world.root, steps=[R.venv(), {"id": "pinned", "kind": "install",
                                                          "pylock": "pylock.toml"}])
    ok(world.run([recipe]))
    assert world.version_of("demo-core") == "1.0.0"
    text = (world.venv / ".bootstrap" / "pylock" / "pinned.txt").read_text()
    assert text.startswith("demo-core @ file://") and "a%20b%23c%3Bd%27q" in text


# --------------------------------------------------------------------------- item 7

def replace(path, data: bytes):
    """New bytes under the same name, by rename (the index rescans a directory it sees change)."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_lock_refuses_an_index_hash_that_is_not_the_wheel_uv_installed(world, index_factory, wheelhouse, tmp_path):
    root = tmp_path / "index-root"
    shutil.copytree(wheelhouse, root)
    idx = index_factory(root=root)
    main = idx.url("main")
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=main)])
    home = {"BOOTSTRAP_HOME": str(tmp_path / "home")}  # an artifact store of this test's own
    ok(world.run([recipe], env=home))
    wheel = root / "main" / "demo_core-1.0.0-py3-none-any.whl"
    original = wheel.read_bytes()
    installed = sha256(wheel)

    # The index now lists other bytes under that name: its sha256 is not what was installed.
    replace(wheel, original + b"\0replaced")
    lockfile = world.root / "l.json"
    proc = world.run(["lock", recipe, "-o", lockfile], env=home)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (f"demo-core 1.0.0: {main}/demo-core/ lists demo_core-1.0.0-py3-none-any.whl with sha256 "
            f"{sha256(wheel)}, but uv hashed the demo_core-1.0.0-py3-none-any.whl it downloaded and installed to "
            f"{installed} ({world.uv_cache}/wheels-v") in proc.stderr
    assert "Lock from the index the wheel came from" in proc.stderr
    assert not lockfile.exists()

    # The same bytes again: checked against uv's record, and the lock says so (JSON and PEP 751).
    replace(wheel, original)
    ok(world.run(["lock", recipe, "-o", lockfile, "--format", "both"], env=home))
    core = json.loads(lockfile.read_text())["packages"]["demo-core"]
    assert (core["sha256"], core["hash_source"]) == (installed, "uv-cache")
    (pylock,) = list(world.root.glob("pylock*.toml"))
    assert 'hash-source = "uv-cache"' in pylock.read_text()
    proc = subprocess.run([str(world.uv), "pip", "install", "--dry-run", "--python", str(world.venv / "bin/python"),
                           "-r", str(pylock)], capture_output=True, text=True, env=world.full_env())
    assert proc.returncode == 0, proc.stderr  # uv still reads it

    # Nothing at hand (uv's cache cleared): only the index vouches, and the lock says that.
    shutil.rmtree(world.uv_cache)
    ok(world.run(["lock", recipe, "-o", lockfile], env=home))
    assert json.loads(lockfile.read_text())["packages"]["demo-core"]["hash_source"] == "index"


# --------------------------------------------------------------------------- item 5

def test_a_lockfile_larger_than_any_real_one_is_refused_with_its_size_and_the_limit(world):
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core==1.0.0"],
                                                                    index_url=world.index.url("main"))])
    big = world.root / "big.json"
    big.write_text('{"schema": 2, "packages": {}, "pad": "' + "x" * (9 << 20) + '"}')
    proc = world.run([recipe, "--lockfile", big])
    assert proc.returncode == 2, proc.stderr
    assert f"{big} is 9.0 MiB: larger than any lockfile bootstrap reads (at most 8 MiB)" in proc.stderr
    assert "name the lockfile `bootstrap lock` wrote" in proc.stderr
    assert not world.venv.exists()
    # A pylock step's lock too.
    (world.root / "pylock.toml").write_text('lock-version = "1.0"\n#' + "x" * (9 << 20) + "\n")
    recipe = R.write_recipe(world.root, steps=[R.venv(), {"id": "pinned", "kind": "install", "pylock": "pylock.toml"}])
    proc = world.run([recipe])
    assert proc.returncode == 2, proc.stderr
    assert "pylock.toml is 9.0 MiB: larger than any lockfile bootstrap reads (at most 8 MiB)" in proc.stderr
