"""A build cache ($BOOTSTRAP_HOME) shared by many runs at once, as on a shared filesystem for a
fleet of nodes: one build and N-1 hits, and a writer killed with SIGKILL (a node that died)
leaves nothing a later run trips over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time


import recipes as R
from recipes import steps_by_id
from test_build import build_info, build_step, builds, bw, cache_entries, leftovers  # noqa: F401 (bw: the fixture)


def test_eight_concurrent_runs_of_one_build_key_build_once(bw):
    recipe = R.write_recipe(bw.root, steps=[R.venv(), build_step(bw, {"path": str(bw.tree)},
                                                                  env={"FASTEXT_BUILD_SECONDS": "2"})])
    nodes = [f"n{i}" for i in range(1, 9)]
    procs = [bw.popen([recipe, "--venv", bw.root / n / "venv", "--json"]) for n in nodes]
    outs = [p.communicate(timeout=600) for p in procs]
    reasons = []
    for n, p, (out, err) in zip(nodes, procs, outs):
        assert p.returncode == 0, f"{n}: stdout:\n{out}\nstderr:\n{err}"
        reasons.append(steps_by_id(json.loads(out))["fastext"]["reason"])
    assert builds(bw) == 1, bw.build_log.read_text()
    assert sum(r.startswith("built in") for r in reasons) == 1, reasons
    assert sum(r.startswith("build cache hit") for r in reasons) == 7, reasons
    assert len(cache_entries(bw)) == 1 and leftovers(bw) == []
    for n in nodes:
        assert build_info(bw, bw.root / n / "venv")["name"] == "fastext"


def kill_session(proc: subprocess.Popen):
    """SIGKILL bootstrap and everything it started (a node that died), by session."""
    subprocess.run(["pkill", "-KILL", "-s", str(proc.pid)], check=False)
    try:
        os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate(timeout=30)


def test_a_writer_killed_mid_build_leaves_nothing_half_published(bw):
    recipe = R.write_recipe(bw.root, steps=[R.venv(), build_step(bw, {"path": str(bw.tree)},
                                                                  env={"FASTEXT_BUILD_SECONDS": "8"})])
    victim = bw.popen([recipe, "--venv", bw.root / "dead" / "venv"], start_new_session=True)
    deadline = time.time() + 120
    while builds(bw) < 1 and time.time() < deadline:  # the backend is compiling
        time.sleep(0.1)
    assert builds(bw) == 1, "the build never started"
    kill_session(victim)
    assert victim.returncode == -signal.SIGKILL
    assert cache_entries(bw) == []  # nothing published

    # The next writer (another node) is not blocked by the dead one's lock, cleans what it left
    # and builds; a third reuses that build.
    fast = R.write_recipe(bw.root, filename="fast.toml",
                          steps=[R.venv(), build_step(bw, {"path": str(bw.tree)}, env={"FASTEXT_BUILD_SECONDS": "8"})])
    proc, doc = bw.run_json([fast, "--venv", bw.root / "n2" / "venv"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert steps_by_id(doc)["fastext"]["reason"].startswith("built in")
    assert builds(bw) == 2
    assert len(cache_entries(bw)) == 1 and leftovers(bw) == []
    proc, doc = bw.run_json([fast, "--venv", bw.root / "n3" / "venv"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert steps_by_id(doc)["fastext"]["reason"].startswith("build cache hit")
    assert builds(bw) == 2
    assert build_info(bw, bw.root / "n3" / "venv")["name"] == "fastext"
