"""The debug log (spdlog): a run that changes something writes
`<venv>/.bootstrap/logs/<run-id>/bootstrap.log` (plan decisions, keys, children's argv and
environment, exit statuses, timings; secrets redacted); a no-op run writes none; `-vv` and
BOOTSTRAP_LOG put it on stderr."""

from __future__ import annotations

import re

import recipes as R

TOKEN = "hf_L0gT0kenZz"
PASSWORD = "L0gPa55wordQq"


def ok(proc):
    assert proc.returncode == 0, proc.stderr
    return proc


def run_logs(world):
    return sorted((world.venv / ".bootstrap" / "logs").glob("*/bootstrap.log"))


def test_a_run_writes_its_debug_log_and_a_no_op_run_writes_none(world):
    world.env["MY_TOKEN"] = TOKEN
    url = world.index.url().replace("http://", f"http://deploy:{PASSWORD}@")
    recipe = R.write_recipe(world.root, steps=[
        R.venv(), R.install("core", ["demo-core"], index_url=url, verify=[R.imp("demo_core")])],
        env={"set": {"HF_TOKEN": "{env.MY_TOKEN}"}})
    ok(world.run([recipe]))
    (log,) = run_logs(world)
    text = log.read_text()
    # Plan decisions with keys, the children with their argv, their exit and timings.
    assert re.search(r"step core \(install\): run: .*; key [0-9a-f]{16,}", text), text
    assert re.search(r"pid \d+ started: \S*uv pip install .*demo-core", text), text
    assert re.search(r"pid \d+ \(uv\): exit code 0 after \d+\.\d{3} s", text), text
    assert re.search(r"step core: done in \d+\.\d{3} s", text), text
    assert "HF_TOKEN=***" in text
    assert f"deploy:***@" in text
    assert TOKEN not in text and PASSWORD not in text

    # Nothing changes: no snapshot, no step log, no debug log.
    ok(world.run([recipe]))
    assert run_logs(world) == [log]


def test_vv_and_bootstrap_log_put_the_log_on_stderr(world):
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.install("core", ["demo-core"],
                                                                     index_url=world.index.url())])
    proc = ok(world.run([recipe, "-vv"]))
    assert re.search(r"bootstrap \[[0-9:.]+\] debug: step core \(install\): run: ", proc.stderr), proc.stderr
    proc = ok(world.run([recipe]))
    assert "debug:" not in proc.stderr
    proc = ok(world.run([recipe], env={"BOOTSTRAP_LOG": "debug"}))
    assert "debug: step core (install): skip: " in proc.stderr, proc.stderr
    proc = ok(world.run([recipe], env={"BOOTSTRAP_LOG": "chatty"}))
    assert ("warning: BOOTSTRAP_LOG=chatty is not a log level (trace, debug, info, warn, error, "
            "off); using warn") in proc.stderr
