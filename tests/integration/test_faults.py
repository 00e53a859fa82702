"""Failure handling: a flaky index, network and step timeouts, whole-step retries, failing steps."""

from __future__ import annotations

import re
import time
from pathlib import Path

import recipes as R
from recipes import steps_by_id


def write(world, steps, **kw) -> Path:
    return R.write_recipe(world.root, steps=steps, **kw)


def test_flaky_index_survived_through_retries_and_timeouts(world):
    page = r"^/main/simple/demo-core/$"
    world.index.set_faults([
        {"match": page, "kind": "status", "status": 503, "times": 2},
        {"match": page, "kind": "delay", "seconds": 1.5, "times": 1},
    ])
    recipe = write(world, [R.venv(), R.install("core", ["demo-core==1.1.0"], index_url=world.index.url())],
                   network={"timeout": 5, "retries": 3, "attempts": 2})
    t0 = time.monotonic()
    proc, doc = world.run_json([recipe])
    wall = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    core = steps_by_id(doc)["core"]
    assert core["result"] == "ran"
    assert core["attempts"] == 1  # uv's own retries (UV_HTTP_RETRIES from [network]) were enough
    assert core["reason"] == "first run"
    assert world.version_of("demo-core") == "1.1.0"
    # Two 503s and one slow answer: three requests for the page, every fault used up.
    assert [r["applied"] for r in world.index.faults()] == [2, 1]
    assert world.index.stats()[page.strip("^$")] == 3
    assert wall >= 1.5
    assert wall < 60


def test_whole_step_attempts_with_backoff(world):
    page = r"^/main/simple/click/$"
    world.index.set_faults([{"match": page, "kind": "status", "status": 503, "times": 2}])
    recipe = write(world, [R.venv(), R.install("click", ["click"], index_url=world.index.url())],
                   network={"timeout": 5, "retries": 0, "attempts": 3})
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    click = steps_by_id(doc)["click"]
    assert click["result"] == "ran"
    assert click["attempts"] == 3
    assert click["reason"] == "succeeded on attempt 3/3"
    # Each attempt's failure is headed by uv's own cause line.
    assert re.search(r"^step 'click': attempt 1/3 failed \(step 'click' \(install\) failed: Failed to fetch: \S+: "
                     r"HTTP status server error \(503 Service Unavailable\).* \(uv exit code \d+\)\); "
                     r"retrying in 0\.10s$", proc.stderr, re.M), proc.stderr
    assert re.search(r"^step 'click': attempt 2/3 failed \(.*\); retrying in 0\.20s$", proc.stderr, re.M)
    assert world.index.stats()["/main/simple/click/"] == 3
    # Every attempt is in the one step log.
    log = Path(click["log"]).read_text()
    assert log.count("$ ") == 3
    assert "503" in log


def test_network_timeout_then_retry(world):
    wheel = r"^/main/files/demo_core-1\.0\.0-py3-none-any\.whl$"
    world.index.set_faults([{"match": wheel, "kind": "hang", "times": 1, "seconds": 60}])
    recipe = write(world, [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url())],
                   network={"timeout": 2, "retries": 2, "attempts": 2})
    t0 = time.monotonic()
    proc, doc = world.run_json([recipe])
    wall = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    assert world.version_of("demo-core") == "1.0.0"
    assert world.index.faults()[0]["applied"] == 1
    assert world.index.count(wheel) >= 2
    assert 2 <= wall < 30, wall


def test_step_timeout_kills_install(world):
    world.index.set_faults([{"match": r"\.whl$", "kind": "hang", "seconds": 60}])
    recipe = write(world, [R.venv(),
                           R.install("core", ["demo-core==1.0.0"], index_url=world.index.url(), timeout=2)],
                   network={"timeout": 30, "retries": 0, "attempts": 1})
    t0 = time.monotonic()
    proc, doc = world.run_json([recipe])
    wall = time.monotonic() - t0
    assert proc.returncode == 1, proc.stderr
    assert wall < 15, wall
    msg = "step 'core' (install) failed: uv timed out after 2s (killed)"
    assert f"error: {msg}\n" in proc.stderr
    assert doc["error"]["message"] == msg and doc["error"]["exit_code"] == 1
    core = steps_by_id(doc)["core"]
    assert core["result"] == "failed"
    assert world.journal()["steps"]["core"]["status"] == "failed"
    assert world.version_of("demo-core") is None


def test_run_step_timeout_kills_process_group(world):
    pidfile = world.root / "grandchild.pid"
    recipe = write(world, [R.run("slow", ["sh", "-c", f"sleep 30 & echo $! > {pidfile}; wait"], timeout=1)])
    t0 = time.monotonic()
    proc = world.run([recipe])
    wall = time.monotonic() - t0
    assert proc.returncode == 1, proc.stderr
    assert wall < 20  # ~2 s; the step's sleep would last 30 s
    assert "error: step 'slow' (run) failed: sh timed out after 1s (killed)" in proc.stderr
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
    assert not alive, "the step's grandchild survived the timeout"


def test_failing_step_shows_log_tail(world):
    script = "import sys\nfor i in range(1, 61): print('line-%d' % i)\nsys.stdout.flush()\nprint('boom', file=sys.stderr)\nsys.exit(3)"
    recipe = write(world, [R.venv(), R.run("fail", ["{venv.python}", "-c", script]),
                           R.run("after", ["true"])])
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 1
    err = proc.stderr
    assert "error: step 'fail' (run) failed: python exit code 3\n" in err
    assert f"command: {world.venv}/bin/python -c " in err
    assert "cwd: /\n" in err
    assert "--- last lines of the log ---" in err
    tail = err.split("--- last lines of the log ---\n", 1)[1]
    assert "line-60\n" in tail and "boom\n" in tail
    assert "line-22\n" in tail
    assert "line-21\n" not in tail  # only the last 40 lines (the 40th is "boom")
    m = re.search(r"^log: (\S+)$", err, re.M)
    assert m, err
    log = Path(m.group(1))
    assert log == world.venv / ".bootstrap" / "logs" / doc["run_id"] / "02-fail.log"
    text = log.read_text()
    assert "line-1\n" in text and "line-60\n" in text and "boom" in text
    steps = steps_by_id(doc)
    assert steps["fail"]["result"] == "failed" and steps["after"]["result"] == "not reached"
    assert re.search(r"^fail\s+run\s+failed\s", err, re.M)
    assert re.search(r"^after\s+run\s+not reached\s", err, re.M)
    assert "failed in " in err


def test_failing_install_shows_resolver_error(world):
    recipe = write(world, [R.venv(), R.install("missing", ["demo-nonexistent"], index_url=world.index.url())])
    proc = world.run([recipe])
    assert proc.returncode == 1
    assert re.search(r"^error: step 'missing' \(install\) failed: Because demo-nonexistent was not found in the "
                     r"package registry .* \(uv exit code \d+\)$", proc.stderr, re.M), proc.stderr
    tail = proc.stderr.split("--- last lines of the log ---\n", 1)[1]
    assert "demo-nonexistent" in tail
    assert "not found in the package registry" in tail or "No solution found" in tail
    assert re.search(r"^log: .*/03-missing\.log$|^log: .*/02-missing\.log$", proc.stderr, re.M)
