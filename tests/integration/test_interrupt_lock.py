"""SIGINT mid-step then a resume; two concurrent runs on one venv."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

import recipes as R
from recipes import steps_by_id


def wait_for(path: Path, proc, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"bootstrap exited ({proc.returncode}) before {path} appeared:\n{err}")
        if time.monotonic() > deadline:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"{path} did not appear within {timeout}s:\n{err}")
        time.sleep(0.05)


def pid_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def slow_step(world, started: Path, pidfile: Path, seconds: float) -> dict:
    """A run step that records its pid and that it started, then sleeps `seconds` the first
    time (when `started` does not exist yet) and not at all afterwards."""
    code = (f"import os, pathlib, time; s = pathlib.Path({str(started)!r}); first = not s.exists(); "
            f"pathlib.Path({str(pidfile)!r}).write_text(str(os.getpid())); s.write_text('x'); "
            f"time.sleep({seconds} if first else 0)")
    return R.run("slow", ["{venv.python}", "-c", code])


def test_sigint_mid_step_then_resume(world):
    started, pidfile = world.root / "started", world.root / "child.pid"
    after = world.root / "after.txt"
    recipe = R.write_recipe(world.root, steps=[
        R.venv(),
        R.install("core", ["demo-core==1.0.0"], index_url=world.index.url()),
        slow_step(world, started, pidfile, 60),
        R.run("after", ["touch", str(after)]),
    ])
    proc = world.popen([recipe, "--json"])
    wait_for(started, proc)
    child = int(pidfile.read_text())
    assert pid_alive(child)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert time.monotonic() - t0 < 30  # ~0.2 s; the step would sleep 60 s
    doc = json.loads(out)
    assert doc["ok"] is False and doc["error"]["exit_code"] == 130
    res = {s["id"]: s["result"] for s in doc["steps"]}
    assert res == {"venv": "ran", "core": "ran", "slow": "interrupted", "after": "not reached"}
    assert "interrupted by SIGINT" in doc["error"]["message"]
    assert re.search(r"^\[3/4\] slow  run  interrupted \(", err, re.M), err  # not "interrupted: interrupted"
    assert "interrupted: interrupted" not in out + err
    # The step's process is gone, and nothing after it ran.
    deadline = time.monotonic() + 5
    while pid_alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(child)
    assert not after.exists()
    journal = world.journal()["steps"]
    assert journal["slow"]["status"] == "interrupted"
    assert journal["core"]["status"] == "ok"
    # The lock was released with the process.
    assert (world.venv / ".bootstrap" / "lock").exists()

    # Resume: what finished is skipped, the interrupted step runs again, then the rest.
    world.index.reset()
    proc2, doc2 = world.run_json([recipe])
    assert proc2.returncode == 0, proc2.stderr
    res2 = {s["id"]: (s["result"], s["reason"]) for s in doc2["steps"]}
    assert res2["venv"] == ("skipped", "up to date")
    assert res2["core"] == ("skipped", "up to date")
    assert res2["slow"] == ("ran", "resuming: last run interrupted")
    assert res2["after"] == ("ran", "first run")
    assert after.exists()
    assert world.index.stats() == {}


def test_sigint_during_install_is_interrupted(world):
    world.index.set_faults([{"match": r"\.whl$", "kind": "hang", "seconds": 60}])
    recipe = R.write_recipe(world.root, steps=[
        R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url())],
        network={"timeout": 30, "retries": 0})
    proc = world.popen([recipe])
    deadline = time.monotonic() + 60
    while world.index.count(r"\.whl$") == 0:
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert re.search(r"^\[2/2\] core  install  interrupted", err, re.M), err
    assert world.journal()["steps"]["core"]["status"] == "interrupted"


def test_concurrent_runs_lock_timeout_names_holder(world):
    started, pidfile = world.root / "started", world.root / "child.pid"
    recipe = R.write_recipe(world.root, steps=[R.venv(), slow_step(world, started, pidfile, 6)])
    first = world.popen([recipe])
    try:
        wait_for(started, first)
        t0 = time.monotonic()
        second = world.run([recipe, "--lock-timeout", "1", "--json"])
        waited = time.monotonic() - t0
        assert second.returncode == 1, second.stderr
        assert 1.0 <= waited < 5, waited
        assert f"waiting for the venv lock held by pid {first.pid} (up to 1s)" in second.stderr
        msg = (f"the venv {world.venv} is locked by another bootstrap run (pid {first.pid}); "
               f"gave up after 1s (--lock-timeout)")
        assert f"error: {msg}\n" in second.stderr
        assert f"lock file: {world.venv}/.bootstrap/lock" in second.stderr
        doc = json.loads(second.stdout)
        assert doc["ok"] is False and doc["error"]["message"] == msg and doc["error"]["exit_code"] == 1
        assert first.poll() is None  # the holder was not disturbed

        # A waiter can be interrupted while it waits.
        third = world.popen([recipe, "--lock-timeout", "60"])
        time.sleep(0.8)
        third.send_signal(signal.SIGINT)
        _, err3 = third.communicate(timeout=10)
        assert third.returncode == 130, err3
        assert f"waiting for the venv lock held by pid {first.pid} (up to 60s)" in err3
        assert "error: interrupted while waiting for the venv lock" in err3
        assert first.poll() is None
    finally:
        out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    # The loser wrote nothing: the journal is the winner's.
    assert world.journal()["steps"]["slow"]["status"] == "ok"


def test_concurrent_run_waits_then_proceeds(world):
    started, pidfile = world.root / "started", world.root / "child.pid"
    recipe = R.write_recipe(world.root, steps=[R.venv(), slow_step(world, started, pidfile, 2)])
    first = world.popen([recipe])
    try:
        wait_for(started, first)
        second = world.run([recipe, "--lock-timeout", "60", "--json"])
    finally:
        first.communicate(timeout=60)
    assert first.returncode == 0
    assert second.returncode == 0, second.stderr
    assert f"waiting for the venv lock held by pid {first.pid}" in second.stderr
    doc = json.loads(second.stdout)
    # It re-read the journal after getting the lock: the winner's work is up to date.
    assert {s["id"]: s["reason"] for s in doc["steps"]} == {"venv": "up to date", "slow": "up to date"}


def test_sigint_during_retry_backoff(world):
    """The wait between whole-step attempts is interruptible."""
    log_glob = "logs/*/01-flaky.log"
    recipe = R.write_recipe(world.root, steps=[R.run("flaky", ["false"], attempts=3)],
                            venv_path="venv")
    proc = world.popen([recipe, "--json"], env={"BOOTSTRAP_BACKOFF_BASE": "30"})
    deadline = time.monotonic() + 30
    state = world.venv / ".bootstrap"
    while not any("$ " in p.read_text() for p in state.glob(log_glob)):
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)  # now in the 30 s backoff
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=40)
    assert time.monotonic() - t0 < 15  # ~0.1 s; the backoff would last 30 s
    assert proc.returncode == 130, err
    assert "step 'flaky': attempt 1/3 failed (step 'flaky' (run) failed: false exit code 1); retrying in 30s" in err
    doc = json.loads(out)
    flaky = steps_by_id(doc)["flaky"]
    assert flaky["result"] == "interrupted" and flaky["attempts"] == 1
    assert doc["error"]["message"] == "step 'flaky' interrupted"
    assert world.journal()["steps"]["flaky"]["status"] == "interrupted"
