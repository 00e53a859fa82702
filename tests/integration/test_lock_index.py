"""`bootstrap lock` finds each installed wheel on its index by name, version and tag set."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import recipes as R


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def test_lock_tries_each_index_and_explains_a_wheel_it_cannot_find(world, wheelhouse):
    # cu130 has no demo-core page (404); uv took it from main, and lock finds it there.
    steps = [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url("cu130"),
                                 extra_index_urls=[world.index.url("main")])]
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe]))
    lockfile = world.root / "l.json"
    ok(world.run(["lock", recipe, "-o", lockfile]))
    core = json.loads(lockfile.read_text())["packages"]["demo-core"]
    assert core["wheel"] == "demo_core-1.0.0-py3-none-any.whl"
    (path,) = list(wheelhouse.glob("*/demo_core-1.0.0-py3-none-any.whl"))
    assert core["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()

    # A wheel whose tags no file on the index has: the error says why, index by index.
    (dist_info,) = list(world.venv.glob("lib/python*/site-packages/demo_core-1.0.0.dist-info"))
    wheel = dist_info / "WHEEL"
    wheel.write_text(wheel.read_text().replace("Tag: py3-none-any", "Tag: py2-none-any"))
    (dist_info / "RECORD").touch()  # the snapshot cache keys on RECORD's stat
    proc = world.run(["lock", recipe, "-o", world.root / "l2.json"])
    assert proc.returncode == 1, proc.stderr
    assert "cannot lock itest: no wheel hash for 1 package(s)" in proc.stderr
    cu130 = world.index.url("cu130") + "/demo-core/"
    main = world.index.url("main") + "/demo-core/"
    assert f"demo-core 1.0.0: GET {cu130} failed" in proc.stderr
    assert (f"no wheel of demo-core 1.0.0 with tags {{py2-none-any}} on {main}; closest wheels of 1.0.0 "
            "there: demo_core-1.0.0-py3-none-any.whl") in proc.stderr
    assert not (world.root / "l2.json").exists()
