"""Issue 41, items 4-6: what children print reaches the user's terminal and the step logs as
text, in time and memory linear in it, with the secrets they were given masked.

4. A child's escapes (OSC 52 writes the clipboard, OSC 0 the title, CSI 2J clears the screen;
   C1 controls as UTF-8 and as bytes) reach neither `-v`'s stream, a failed step's last lines,
   nor the step log (a file someone `cat`s); children lead a session of their own, so they
   cannot open /dev/tty, and Ctrl-C still stops them.
5. An unterminated "ESC ]", a line that never ends and a huge failing log cost time linear in
   the output and bounded memory.
6. A secret split by an escape, or a secret that ends the output while a longer one could
   still follow, is masked.

A fake installer (a `uv` that prints the hostile bytes for `uv pip install`) runs them on the
pseudo-terminal; a run step on the pipe.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

import recipes as R
from recipes import steps_by_id

HOSTILE = (b"visible-1 \x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned-title\x1b\\\x1b[2J\x1b[H"
           b"visible-2 \xc2\x9b2J\x9b31m\x1bP1$r0m\x1b\\visible-3\n"
           b"error: hostile \x1b]0;title\x07installer \xc2\x9d0;t\xc2\x9cfailed\n")
# What must show of it, once made text.
SHOWN = ["visible-1 visible-2 visible-3", "error: hostile installer failed"]

EMITTER = """
import os, sys
out = sys.stdout.buffer
if os.environ.get("SHOW_TTY"):
    out.write(b"on-a-tty\\n" if os.isatty(1) else b"on-a-pipe\\n")
out.write(bytes.fromhex(sys.argv[1]))
size = int(sys.argv[2]) if len(sys.argv) > 2 else 0
if size:
    # An "ESC ]" never ended, then a line that never ends, then lines.
    out.write(b"\\x1b]0;")
    block = b"x" * (1 << 20)
    for _ in range(size >> 20):
        out.write(block)
    out.write(b"\\n")
    line = b"a line of a long log " + b"." * 42 + b"\\n"
    for _ in range((size >> 6)):
        out.write(line)
out.flush()
sys.exit(3)
"""


# Runs argv[3:] with stdout and stderr to the files argv[1] and argv[2]; prints its exit code and
# the peak memory (KiB) of it and its children.
MEASURE = """
import resource, subprocess, sys
with open(sys.argv[1], "wb") as out, open(sys.argv[2], "wb") as err:
    code = subprocess.run(sys.argv[3:], stdin=subprocess.DEVNULL, stdout=out, stderr=err).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def assert_text(data: bytes, what: str) -> str:
    """`data` decodes as UTF-8 and holds no control a terminal acts on (ESC, BEL, C1...)."""
    text = data.decode("utf-8")  # a raw 0x9b is not UTF-8: it fails here
    bad = [hex(ord(c)) for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
    assert not bad, f"{what} holds controls {sorted(set(bad))}: {text[-2000:]!r}"
    return text


def emitter(world) -> Path:
    path = world.root / "emit.py"
    path.write_text(EMITTER)
    return path


def run_bytes(world, args, env=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(world.cmd(args), env=world.full_env(env), cwd=world.root, timeout=timeout,
                          stdin=subprocess.DEVNULL, capture_output=True)


def fake_uv(world, payload: bytes, size: int = 0) -> dict:
    """PATH with a `uv` first that runs the emitter for `uv pip install`, the real uv otherwise."""
    bin_dir = world.root / "fake-bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "uv"
    script.write_text(f"#!/bin/sh\n"
                      f"if [ \"$1\" = pip ] && [ \"$2\" = install ]; then\n"
                      f"  SHOW_TTY=1 exec {sys.executable} {emitter(world)} {payload.hex()} {size}\n"
                      f"fi\n"
                      f"exec {world.uv} \"$@\"\n")
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{world.env['PATH']}"}


def hostile_run_step(world, payload: bytes = HOSTILE, size: int = 0, **extra) -> Path:
    step = R.run("hostile", [sys.executable, str(emitter(world)), payload.hex(), str(size)], **extra)
    return R.write_recipe(world.root, "hostile.toml", steps=[R.venv(), step])


def hostile_install_step(world) -> Path:
    return R.write_recipe(world.root, "hostile.toml",
                          steps=[R.venv(), R.install("hostile", ["demo-core"], index_url=world.index.url())])


def check_run(world, proc, step: str = "hostile") -> tuple[str, str]:
    assert proc.returncode == 1, proc.stderr.decode(errors="replace")
    shown = assert_text(proc.stderr, "bootstrap's stderr")
    doc = json.loads(proc.stdout)
    log = assert_text(Path(steps_by_id(doc)[step]["log"]).read_bytes(), "the step log")
    for text in SHOWN:
        assert text in log, log
        # Once streamed by -v, once in the failed step's last lines.
        assert shown.count(text) == 2, shown
    return shown, log


def test_a_run_steps_escapes_reach_neither_the_terminal_nor_its_log(world):
    """On the pipe: -v's stream, the failure's last lines and the log are text."""
    check_run(world, run_bytes(world, [hostile_run_step(world), "-v", "--json"]))


def test_an_installers_escapes_on_the_terminal_reach_neither_the_terminal_nor_its_log(world):
    """On the pseudo-terminal: the fake installer's bytes go through the transcript."""
    env = fake_uv(world, HOSTILE)
    proc = run_bytes(world, [hostile_install_step(world), "-v", "--json"], env=env)
    shown, log = check_run(world, proc)
    if "on-a-pipe" in log:
        pytest.skip("no pseudo-terminal here (no /dev/ptmx)")
    assert "on-a-tty" in log
    # The installer's own cause line heads the error, as text.
    assert "step 'hostile' (install) failed: hostile installer failed" in shown, shown


def test_a_secret_split_by_an_escape_or_held_at_the_end_is_masked(world):
    """`sup\\e[0mersecret` is what the user reads as the secret; and an output ending with one
    secret while a longer one (that it begins) could still follow shows neither."""
    token, longer = "hf-secret-value-71", "hf-secret-value-71-and-more"
    payload = b"key sup\x1b[0mer " + b"hf-secret-\x1b[1mvalue-71\nlast " + token.encode()
    recipe = hostile_run_step(world, payload, env={"HF_TOKEN": "{env.HF_TOKEN}",
                                                   "API_TOKEN": "{env.API_TOKEN}"})
    proc = run_bytes(world, [recipe, "-v", "--json"], env={"HF_TOKEN": token, "API_TOKEN": longer})
    assert proc.returncode == 1
    shown = assert_text(proc.stderr, "bootstrap's stderr")
    log = assert_text(Path(steps_by_id(json.loads(proc.stdout))["hostile"]["log"]).read_bytes(), "log")
    for text in (shown, log):
        assert "key super ***\nlast ***" in text, text
        assert token not in text and "hf-secret-value" not in text, text


def run_on_a_terminal(world, args, on_output, timeout=60) -> tuple[int, bytes]:
    """bootstrap with a pseudo-terminal as its controlling terminal (its stdin, stdout and
    stderr), as in a user's shell. `on_output(all_so_far, master_fd)` sees what it printed."""
    pid, master = pty.fork()
    if pid == 0:  # the child: a session leader whose controlling terminal is the pty
        os.chdir(world.root)
        os.execve(str(world.bootstrap), world.cmd(args), world.full_env())
    seen = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every holder of the terminal is gone
                    break
                if not chunk:
                    break
                seen += chunk
                on_output(seen, master)
    finally:
        if time.monotonic() >= deadline:
            os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
        os.close(master)
    return os.waitstatus_to_exitcode(status), seen


def test_a_child_cannot_write_to_the_users_terminal_past_its_log(world):
    """A child leads a session of its own: it has no controlling terminal, so /dev/tty does
    not open, and what it writes there never reaches the user's screen."""
    step = R.run("tty", ["sh", "-c", "echo tty-write-leak > /dev/tty; echo open-status=$?"])
    recipe = R.write_recipe(world.root, "tty.toml", steps=[R.venv(), step])
    code, seen = run_on_a_terminal(world, [recipe], lambda seen, fd: None)
    assert code == 0, seen
    assert b"tty-write-leak" not in seen, seen
    log = (world.venv / ".bootstrap" / "logs").rglob("*-tty.log")
    assert any("open-status=2" in p.read_text() for p in log)


def test_ctrl_c_on_the_users_terminal_still_stops_the_step(world):
    """The terminal's ^C reaches bootstrap (the foreground group); it forwards SIGTERM to the
    child's group, its session of its own notwithstanding, and exits 130."""
    step = R.run("sleepy", ["sh", "-c", "echo step-started $$; exec sleep 60"])
    recipe = R.write_recipe(world.root, "sleepy.toml", steps=[R.venv(), step])
    sent = []

    def interrupt(seen, master):
        if not sent and re.search(rb"step-started \d+\r?\n", seen):
            os.write(master, b"\x03")  # the line discipline turns it into SIGINT
            sent.append(time.monotonic())

    code, seen = run_on_a_terminal(world, [recipe, "-v"], interrupt)
    assert sent, seen
    assert code == 130, seen
    assert time.monotonic() - sent[0] < 20, seen
    pid = int(re.search(rb"step-started (\d+)", seen).group(1))
    stat = Path(f"/proc/{pid}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] in "ZX"


def step_seconds(world, recipe, env=None, size=0) -> float:
    """The step's own time (no start-up of bootstrap in it), the best of three runs."""
    best = None
    for _ in range(3):
        proc = run_bytes(world, [recipe, "-v", "--json"], env=env)
        assert proc.returncode == 1, proc.stderr[-2000:]
        seconds = steps_by_id(json.loads(proc.stdout))["hostile"]["seconds"]
        best = seconds if best is None else min(best, seconds)
    return best


@pytest.mark.parametrize("where", ["pipe", "terminal"])
def test_output_handling_is_linear_in_the_output(world, where):
    """An unterminated "ESC ]", then a 3 MB (then 30 MB) line without a newline, then as much in
    lines, streamed by -v: 10x the output takes at most ~12x the time (the issue's measures:
    20 MiB after "ESC ]" on the pty took 44 s, a 60 MB line on -v 10.5 s)."""
    times = {}
    for size in (3 << 20, 30 << 20):
        env = None
        if where == "terminal":
            env = fake_uv(world, b"start\n", size)
            recipe = hostile_install_step(world)
        else:
            recipe = hostile_run_step(world, b"start\n", size)
        times[size] = step_seconds(world, recipe, env, size)
    ratio = times[30 << 20] / max(times[3 << 20], 0.05)
    print(f"{where}: {times}, ratio {ratio:.1f}")
    assert ratio <= 12, times


def test_memory_stays_bounded_whatever_the_output(world):
    """A failing step that prints 40 MB on one line after an unterminated "ESC ]", then 40 MB
    of lines, streamed by -v: bootstrap's peak memory stays in the tens of MB (it read the
    whole log to show 40 lines: 300 MB of log took 639 MB)."""
    # The venv first: uv's own memory (creating it) is not what is measured.
    assert run_bytes(world, [hostile_run_step(world, b"start\n", 0)]).returncode == 1
    recipe = hostile_run_step(world, b"start\n", 40 << 20)
    out, err = world.root / "stdout", world.root / "stderr"
    # Started from a small Python of its own: a child's peak counts the memory of the process it
    # was forked from (until its exec), and this test's process holds other tests' output.
    measured = subprocess.run([sys.executable, "-c", MEASURE, out, err, *world.cmd([recipe, "-v", "--json"])],
                              env=world.full_env(), cwd=world.root, capture_output=True, text=True, timeout=300)
    code, peak_kb = map(int, measured.stdout.split())
    assert code == 1, err.read_bytes()[-2000:]
    # The largest of bootstrap and its children (the emitter, a small Python).
    peak_mb = peak_kb / 1024
    print(f"peak RSS {peak_mb:.0f} MB for {(out.stat().st_size + err.stat().st_size) >> 20} MB printed")
    assert peak_mb < 80, peak_mb
    log = Path(steps_by_id(json.loads(out.read_bytes()))["hostile"]["log"])
    assert log.stat().st_size > 79 << 20  # all of it was kept: the line after the "ESC ]" too
