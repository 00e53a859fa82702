"""What a user sees while and after a step runs (the live line on a terminal, heartbeats on
plain stderr, -v streaming, the installer's own cause in a failed install's headline) and the
`version` of an import verify clause."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import recipes as R
from recipes import steps_by_id

NONEXISTENT_CAUSE = ("Because demo-nonexistent was not found in the package registry and you require "
                     "demo-nonexistent, we can conclude that your requirements are unsatisfiable.")


def wait_for(path: Path, timeout: float = 30) -> str:
    """A shell loop that waits (up to `timeout` s) for `path` to exist."""
    return f"n=0; while [ ! -e {shlex.quote(str(path))} ] && [ $n -lt {int(timeout * 10)} ]; do sleep 0.1; n=$((n+1)); done"


# --------------------------------------------------------------------------- live line (tmux)

class Tmux:
    """A private tmux server with one pane of a fixed size running a command."""

    def __init__(self, root: Path, command: list[str], env: dict, width: int, height: int = 30):
        self.socket = str(root / "tmux.sock")
        script = root / "in-tmux.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items()
                          if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k))
        script.write_text(f"#!/bin/sh\n{exports}export TERM=xterm\ncd {shlex.quote(str(root))}\n"
                          f"{shlex.join(command)}\necho \"exit=$?\"\nsleep 600\n")
        script.chmod(0o755)
        subprocess.run(["tmux", "-S", self.socket, "-f", os.devnull, "new-session", "-d", "-x", str(width),
                        "-y", str(height), str(script)], check=True, timeout=30)

    def screen(self) -> list[str]:
        out = subprocess.run(["tmux", "-S", self.socket, "capture-pane", "-p"], capture_output=True,
                             text=True, timeout=30)
        return out.stdout.splitlines()

    def wait_line(self, pattern: str, timeout: float = 30) -> str:
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.screen():
                if rx.search(line):
                    return line
            time.sleep(0.1)
        raise AssertionError(f"no line matching {pattern!r} on screen:\n" + "\n".join(self.screen()))

    def kill(self):
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=30)


def test_live_line_shows_step_elapsed_and_output_tail(world):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install tmux)")
    go = world.root / "go"
    long_line = "Downloading demo-torch (800.1MiB) from " + "x" * 100
    recipe = R.write_recipe(world.root, steps=[
        R.venv(),
        R.run("slow", ["sh", "-c", f"echo first; echo '{long_line}'; echo; {wait_for(go)}"])])
    width = 60
    tmux = Tmux(world.root, world.cmd(["run", recipe]), world.full_env(), width)
    try:
        # The step, its kind, its time and the last line with text, cut to the width (less one).
        # (Any elapsed time: a loaded 2-core CI may take a while to get here.)
        line = tmux.wait_line(r"^\[2/2\] slow  run  \d+:\d\d  Downloading", timeout=120)
        assert re.fullmatch(r"\[2/2\] slow  run  0:\d\d  Downloading demo-torch \(800\.1MiB\) f…", line), line
        assert len(line) == width - 1
        # The clock moves while the step prints nothing.
        seconds = int(re.search(r"0:(\d\d)", line).group(1))
        tmux.wait_line(rf"^\[2/2\] slow  run  0:(?!{seconds:02d})\d\d  Downloading", timeout=60)
        go.touch()
        tmux.wait_line(r"^exit=0$")
        screen = "\n".join(tmux.screen())
        assert re.search(r"^\[2/2\] slow  run  ran: first run \(\d", screen, re.M), screen
        assert "0:0" not in screen  # the live line was cleared, not left behind
        assert "Downloading" not in screen  # without -v the output stays in the step log
    finally:
        tmux.kill()


# --------------------------------------------------------------------------- plain stderr

def test_plain_stderr_gets_heartbeats_during_a_long_step(world):
    recipe = R.write_recipe(world.root, steps=[
        R.venv(),
        R.run("quiet", ["sh", "-c", "sleep 2.2"]),
        R.run("slow", ["sh", "-c", "echo 'Downloading part 1'; printf 'Building wheel'; sleep 3.4"])])
    proc = world.run([recipe], env={"BOOTSTRAP_HEARTBEAT": "1"})
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert re.search(r"^  \[2/3\] quiet: [12]\.\d\ds, no output yet$", err, re.M), err
    beats = re.findall(r"^  \[3/3\] slow: (\d\.\d\d)s, 33 B of output \(1 lines\), last: Building wheel$", err, re.M)
    assert 2 <= len(beats) <= 3, err  # about once a second, not every tick (4 a second)
    assert all(float(b) >= 1 for b in beats)
    # The heartbeat comes while the step runs: before its result line.
    assert err.index("  [3/3] slow: ") < err.index("[3/3] slow  run  ran")


def test_heartbeats_are_rate_limited_by_default(world):
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.run("slow", ["sh", "-c", "echo x; sleep 2"])])
    proc = world.run([recipe])
    assert proc.returncode == 0, proc.stderr
    assert "  [2/2] slow: " not in proc.stderr, proc.stderr  # the default is 20 s


def test_verbose_streams_step_output_and_quiet_keeps_it_in_the_log(world):
    script = "for i in 1 2 3; do echo \"line $i\"; sleep 0.2; done; printf 'tail without newline'"
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.run("talk", ["sh", "-c", script])])
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    assert "line 1" not in proc.stderr
    log = Path(steps_by_id(doc)["talk"]["log"]).read_text()
    assert "line 1\nline 2\nline 3\ntail without newline" in log

    for flag in (["-v"], ["--verbose"], ["-vv"]):
        proc = world.run([recipe, "--force", *flag])
        assert proc.returncode == 0, proc.stderr
        stderr = proc.stderr
        if flag == ["-vv"]:
            # The debug log comes too, each record on lines of its own: never inside a line of
            # the step's output (the unfinished last line is ended before a log line).
            log_lines = re.findall(r"^bootstrap \[[0-9:.]+\] debug: .*$", stderr, re.M)
            assert any(re.search(r"pid \d+ started: \S*sh -c ", l) for l in log_lines), stderr
            assert any(re.search(r"pid \d+ \(sh\): exit code 0 after", l) for l in log_lines), stderr
            stderr = "".join(l for l in stderr.splitlines(True) if not l.startswith("bootstrap ["))
        else:
            assert "debug:" not in stderr
        # In order, as it arrived, between the step's start and result lines; the unfinished
        # last line is ended before the result line.
        assert re.search(r"^\[2/2\] talk  run \.\.\.\nline 1\nline 2\nline 3\ntail without newline\n"
                         r"\[2/2\] talk  run  ran: forced", stderr, re.M), proc.stderr


def test_demo_takes_verbose(run_bootstrap):
    proc = run_bootstrap(["demo", "--help"])
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"-v,\s*--verbose", proc.stdout), proc.stdout


# --------------------------------------------------------------------------- failed installs

def assert_failed_install(proc, doc, headline: str, log_needle: str):
    assert proc.returncode == 1, proc.stderr
    assert f"error: {headline}\n" in proc.stderr, proc.stderr
    assert doc["error"]["message"] == headline
    # The detail still has the argv, the log tail and the log's path.
    detail = proc.stderr.split(f"error: {headline}\n", 1)[1]
    assert re.match(r"command: \S+.* install .*demo-nonexistent\ncwd: ", detail), detail
    tail = detail.split("--- last lines of the log ---\n", 1)[1]
    assert log_needle in tail
    assert re.search(r"^log: \S+/02-missing\.log$", detail, re.M), detail


def test_failed_uv_install_is_headed_by_uv_cause(world):
    recipe = R.write_recipe(world.root, steps=[
        R.venv(), R.install("missing", ["demo-nonexistent"], index_url=world.index.url())])
    proc, doc = world.run_json([recipe])
    assert_failed_install(proc, doc, f"step 'missing' (install) failed: {NONEXISTENT_CAUSE} (uv exit code 1)",
                          "not found in the package registry")


def test_failed_pip_install_is_headed_by_pip_error(world):
    world.env["PIP_CACHE_DIR"] = str(world.root.parent / "pip-cache")
    recipe = R.write_recipe(world.root, installer="pip", steps=[
        R.venv(), R.install("missing", ["demo-nonexistent"], index_url=world.index.url())])
    proc, doc = world.run_json([recipe])
    assert_failed_install(
        proc, doc,
        "step 'missing' (install) failed: Could not find a version that satisfies the requirement "
        "demo-nonexistent (from versions: none) (python exit code 1)",
        "ERROR: No matching distribution found for demo-nonexistent")


def test_retry_message_carries_the_cause_of_each_attempt(world):
    recipe = R.write_recipe(world.root, network={"timeout": 5, "retries": 0, "attempts": 2}, steps=[
        R.venv(), R.install("missing", ["demo-nonexistent"], index_url=world.index.url())])
    proc = world.run([recipe])
    assert proc.returncode == 1
    # A project the index does not have stays missing: one attempt, and the message says why.
    assert re.search(r"^step 'missing': attempt 1/2 failed \(step 'missing' \(install\) failed: "
                     + re.escape(NONEXISTENT_CAUSE) + r" \(uv exit code 1\)\); not retried: the requirements "
                     r"have no solution$", proc.stderr, re.M), proc.stderr
    # A server error may pass: retried, the cause of each attempt in its line.
    recipe = R.write_recipe(world.root, network={"timeout": 5, "retries": 0, "attempts": 2}, steps=[
        R.venv(), R.install("core", ["demo-core"], index_url=world.index.url())])
    world.index.set_faults([{"match": "demo-core", "kind": "status", "status": 503}])
    proc = world.run([recipe], env={"UV_HTTP_RETRIES": "0"})
    assert proc.returncode == 1
    assert re.search(r"^step 'core': attempt 1/2 failed \(step 'core' \(install\) failed: Failed to fetch: \S+: "
                     r"HTTP status server error \(503 Service Unavailable\).* \(uv exit code 2\)\); retrying in ",
                     proc.stderr, re.M), proc.stderr


# --------------------------------------------------------------------------- verify version

def torch_recipe(world, version: str, **kw):
    return R.write_recipe(world.root, steps=[
        R.venv(),
        R.install("torch", ["demo-torch==2.10.0"], index_url=world.index.url("main"),
                  verify=[{"import": "demo_torch", "version": version}]), *kw.get("more", [])])


def test_verify_version_passes_and_fails_naming_the_distribution(world):
    recipe = torch_recipe(world, ">=2.10, <3")
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    log = Path(steps_by_id(doc)["torch"]["log"]).read_text()
    assert "verify: import demo_torch version <3,>=2.10 ok (demo-torch 2.10.0)\n" in log

    # A new specifier is a new step key: the step runs again, and now fails.
    recipe = torch_recipe(world, ">=2.11")
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 1, proc.stderr
    message = "step 'torch': verify failed: demo_torch 2.10.0 does not satisfy >=2.11 (distribution demo-torch)"
    assert doc["error"]["message"] == message
    assert f"error: {message}\n" in proc.stderr
    assert steps_by_id(doc)["torch"]["result"] == "failed"


def test_verify_version_of_a_module_in_a_check_step(world):
    recipe = torch_recipe(world, ">=2", more=[R.check("check", [
        {"import": "demo_torch", "version": "==2.10.*"},
        {"import": "json", "version": ">=1"}])])
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 1, proc.stderr
    assert doc["error"]["message"] == ("step 'check': verify failed: json: no installed distribution provides "
                                       "this module, so its version cannot be checked against >=1")


def test_invalid_version_specifier_is_a_recipe_error_at_its_place(world):
    recipe = torch_recipe(world, ">=2.x")
    line, col = R.line_of(recipe, '">=2.x"')
    proc = world.run([recipe])
    assert proc.returncode == 2, proc.stderr
    assert (f"error: {recipe}:{line}:{col + 0}: invalid version specifier '>=2.x' in verify clause "
            f"'import demo_torch': '2.x' is not a valid version\n") in proc.stderr
    assert not world.venv.exists()  # found before anything ran

    recipe.write_text(recipe.read_text().replace('version = ">=2.x"', 'version = ""'))
    proc = world.run([recipe])
    assert proc.returncode == 2
    assert f"{recipe}:{line}:" in proc.stderr and "must be a version specifier such as '>=2.1', not empty" in proc.stderr
