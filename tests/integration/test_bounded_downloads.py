"""Bounded downloads of a build step's archive source: a trickling server fails the step within
its `timeout` (the download gets what is left of the step's time) or, without one, fails the
low-speed floor; an endless body stops at `[network] max_download`; a huge Retry-After is capped
and said; a stale `.part` never blocks the next run; and a dead run's temporaries are removed by
the next run that takes the same lock. The faults come from testworld/index_server.py
(`trickle`, `endless`, `status` with headers). BOOTSTRAP_LOW_SPEED_TIME (seconds) is a test-only
knob that shortens the 60 s low-speed window."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import recipes as R
from recipes import steps_by_id


@pytest.fixture
def bw(world, sources):
    """The world plus a private BOOTSTRAP_HOME and a copy of the fastext source tree."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    world.home = world.root / "home"
    world.env["BOOTSTRAP_HOME"] = str(world.home)
    world.tree = world.root / "fastext"
    shutil.copytree(sources["tree"], world.tree)
    return world


@pytest.fixture
def archive(index_factory, sources, tmp_path):
    """The source tarball served by its own index server: (server, url, file name)."""
    root = tmp_path / "idx"
    (root / "src").mkdir(parents=True)
    shutil.copy(sources["tarball"], root / "src")
    name = Path(sources["tarball"]).name
    srv = index_factory(root=root)
    return srv, f"{srv.base_url}/src/files/{name}", name


def build_step(source: dict, **extra) -> dict:
    return {"id": "fastext", "kind": "build", "source": source,
            "verify": [{"import": "fastext", "attr": "answer"}], **extra}


def part_file(bw, sources, name) -> Path:
    return bw.home / "sources" / "downloads" / sources["sha256"] / f"{name}.part"


def timed_run(bw, recipe, env=None, extra=()):
    start = time.monotonic()
    proc, doc = bw.run_json([recipe, *extra], env=env)
    return proc, doc, time.monotonic() - start


def fastext_failure(proc, doc) -> dict:
    assert proc.returncode == 1, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    step = steps_by_id(doc)["fastext"]
    assert step.get("error"), step
    return step


def test_index_server_trickles_and_streams_without_end(archive):
    srv, url, name = archive
    srv.set_faults([{"match": name, "kind": "trickle", "rate": 20, "times": 1},
                    {"match": name, "kind": "endless", "times": 1}])
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    start = time.monotonic()
    with opener.open(url, timeout=10) as resp:
        assert resp.headers["Content-Length"] == str(Path(srv.root / "src" / name).stat().st_size)
        got = resp.read(10)
    assert len(got) == 10 and 0.3 < time.monotonic() - start < 10  # ~20 B/s: ~0.5 s
    with opener.open(url, timeout=10) as resp:
        assert resp.headers["Content-Length"] is None
        assert resp.read(3 << 20) == bytes(3 << 20)  # more than the whole file, and still going


def test_trickle_fails_within_the_step_timeout_and_the_next_run_resumes(bw, archive, sources):
    srv, url, name = archive
    srv.set_faults([{"match": name, "kind": "trickle", "rate": 50}])
    recipe = R.write_recipe(bw.root, network={"retries": 3},
                            steps=[R.venv(), build_step({"url": url, "sha256": sources["sha256"]},
                                                        timeout=4)])
    proc, doc, took = timed_run(bw, recipe)
    step = fastext_failure(proc, doc)
    message = step["error"]["message"]
    assert message.startswith(f"step 'fastext': the download of {url} did not finish within the "
                              "step's timeout of 4 s, after 1 attempt: the deadline passed ("), message
    # Ends at the step's 4 s timeout: not 4 s per attempt (16 s), nor the whole file at 50 B/s.
    assert 3.5 < step["seconds"] < 12, step
    print(f"trickle at 50 B/s with timeout = 4: the step failed after {step['seconds']:.1f} s "
          f"(the whole run {took:.1f} s)")
    part = part_file(bw, sources, name)
    kept = part.stat().st_size
    assert 0 < kept < Path(sources["tarball"]).stat().st_size
    assert f"{kept} B kept in {part} to resume" in message

    srv.clear_faults()
    proc, doc, _ = timed_run(bw, recipe)
    assert proc.returncode == 0, proc.stderr
    log = Path(steps_by_id(doc)["fastext"]["log"]).read_text()
    assert f"resumed at {kept}" in log
    assert not part.exists()


def test_low_speed_floor_fails_a_trickle_retryably_without_a_step_timeout(bw, archive, sources):
    srv, url, name = archive
    srv.set_faults([{"match": name, "kind": "trickle", "rate": 50}])
    recipe = R.write_recipe(bw.root, network={"retries": 1},
                            steps=[R.venv(), build_step({"url": url, "sha256": sources["sha256"]})])
    proc, doc, took = timed_run(bw, recipe, env={"BOOTSTRAP_LOW_SPEED_TIME": "1"})
    step = fastext_failure(proc, doc)
    message = step["error"]["message"]
    assert message.startswith(f"step 'fastext': download of {url} failed after 2 attempts: slower "
                              "than 1 KiB/s for 1 s ("), message
    assert srv.stats()[f"/src/files/{name}"] == 2
    assert step["seconds"] < 30, step  # ~2.5 s; the whole file at 50 B/s takes minutes
    print(f"trickle at 50 B/s, low-speed window 1 s, 2 attempts: failed after {step['seconds']:.1f} s")
    log = Path(step["log"]).read_text()
    assert "download attempt 1 failed (slower than 1 KiB/s for 1 s" in log


def test_endless_body_stops_at_max_download_and_leaves_no_part(bw, archive, sources):
    srv, url, name = archive
    srv.set_faults([{"match": name, "kind": "endless"}])
    recipe = R.write_recipe(bw.root, network={"retries": 3, "max_download": "256KiB"},
                            steps=[R.venv(), build_step({"url": url, "sha256": sources["sha256"]},
                                                        timeout=60)])
    proc, doc, _ = timed_run(bw, recipe)
    step = fastext_failure(proc, doc)
    assert step["error"]["message"] == (
        f"step 'fastext': download of {url} refused: no size was declared and more than the "
        "limit of 256 KiB arrived; the partial file was removed ([network] max_download is "
        "256 KiB)")
    assert srv.stats()[f"/src/files/{name}"] == 1  # never retried
    assert step["seconds"] < 40, step  # ~1 s; the endless body would run into the 60 s timeout
    assert not part_file(bw, sources, name).exists()

    srv.clear_faults()
    proc, _, _ = timed_run(bw, recipe)
    assert proc.returncode == 0, proc.stderr


def test_huge_retry_after_is_capped_and_said(bw, archive, sources):
    srv, url, name = archive
    srv.set_faults([{"match": name, "kind": "status", "status": 503,
                     "headers": {"Retry-After": "99999"}}])
    recipe = R.write_recipe(bw.root, network={"retries": 3},
                            steps=[R.venv(), build_step({"url": url, "sha256": sources["sha256"]},
                                                        timeout=20)])
    proc, doc, _ = timed_run(bw, recipe)
    step = fastext_failure(proc, doc)
    message = step["error"]["message"]
    assert message == (
        f"step 'fastext': the download of {url} did not finish within the step's timeout of 20 s, "
        "after 1 attempt: HTTP status 503, and the wait of 300 s before another attempt would end "
        "past the deadline (the server's Retry-After of 99999 s was capped at 300 s)"), message
    assert step["seconds"] < 12, step  # at once (~0.3 s), not sleeping into the 20 s timeout
    assert not part_file(bw, sources, name).exists()  # nothing arrived: no empty .part either


def test_stale_part_larger_than_max_download_does_not_block(bw, archive, sources):
    srv, url, name = archive
    part = part_file(bw, sources, name)
    part.parent.mkdir(parents=True)
    part.write_bytes(b"\xff" * (2 << 20))  # what an endless body left before the limit existed
    recipe = R.write_recipe(bw.root, network={"max_download": "1MiB"},
                            steps=[R.venv(), build_step({"url": url, "sha256": sources["sha256"]})])
    proc, doc, _ = timed_run(bw, recipe)
    assert proc.returncode == 0, proc.stderr
    log = Path(steps_by_id(doc)["fastext"]["log"]).read_text()
    assert "discarded 2 MiB of a stale partial download" in log
    assert srv.stats()[f"/src/files/{name}"] == 1
    assert not part.exists()


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_leftovers_of_dead_runs_are_removed_by_the_next_run_that_takes_the_lock(bw):
    recipe = R.write_recipe(bw.root, steps=[R.venv(), build_step({"path": str(bw.tree)})])
    proc, _, _ = timed_run(bw, recipe)
    assert proc.returncode == 0, proc.stderr
    builds = bw.home / "builds"
    [entry] = [p for p in builds.iterdir() if p.is_dir() and not p.name.startswith(".")]
    key = entry.name
    shutil.rmtree(entry)  # the next run builds this key again, under its lock

    dead, live = dead_pid(), subprocess.Popen(["sleep", "60"])
    try:
        dead_ones = [builds / f".src-{key}-{dead}", builds / f".tmp-{key}-{dead}",
                     builds / f"..src-{key}-{dead}.tmp-{dead}",
                     bw.venv / ".bootstrap" / f"journal.json.tmp-{dead}-Ab12Cd"]
        live_ones = [builds / f".src-{key}-{live.pid}",
                     bw.venv / ".bootstrap" / f"journal.json.tmp-{live.pid}-Ab12Cd"]
        for p in dead_ones + live_ones:
            if p.name.startswith("journal"):
                p.write_text("{")
            else:
                (p / "fastext").mkdir(parents=True)
                (p / "fastext" / "setup.py").write_text("")
        proc, doc, _ = timed_run(bw, recipe, extra=["--force"])
        assert proc.returncode == 0, proc.stderr
        for p in dead_ones:
            assert not p.exists(), p
        for p in live_ones:
            assert p.exists(), p
        log = Path(steps_by_id(doc)["fastext"]["log"]).read_text()
        assert f"removed {builds / f'.src-{key}-{dead}'}, left by a builder that died" in log
    finally:
        live.kill()
        live.wait()


def test_git_fetch_gets_what_is_left_of_the_step_timeout(bw, sources, tmp_path):
    if not sources.get("repo"):
        pytest.skip("git missing")
    real_git = shutil.which("git")
    fake = tmp_path / "fake-git"
    fake.mkdir()
    # A git whose fetches hang (a stalled server); everything else is the real git.
    (fake / "git").write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = fetch ] && exec sleep 60; done\n'
        f'exec {real_git} "$@"\n')
    (fake / "git").chmod(0o755)
    bw.env["PATH"] = f"{fake}:{bw.env['PATH']}"
    rev = sources["commits"][0]
    recipe = R.write_recipe(bw.root, network={"retries": 3},
                            steps=[R.venv(), build_step({"git": sources["repo_url"], "rev": rev},
                                                        timeout=3)])
    # A checkout a killed run left half-made: removed once this run holds the checkout's lock.
    git_dir = bw.home / "sources" / "git"
    checkout = f"{hashlib.sha256(sources['repo_url'].encode()).hexdigest()[:16]}-{rev[:16]}"
    dead = git_dir / f".tmp-{checkout}-{dead_pid()}"
    (dead / ".git").mkdir(parents=True)
    proc, doc, _ = timed_run(bw, recipe)
    step = fastext_failure(proc, doc)
    assert not dead.exists()
    assert f"removed {dead}, left by a fetch that died" in Path(step["log"]).read_text()
    assert step["error"]["message"] == (
        f"step 'fastext': the git fetch of {rev} from {sources['repo_url']} did not finish "
        "within the step's timeout of 3 s"), step["error"]
    # One deadline for all fetches (~3 s), not 3 s per git child (2 fetches x 4 attempts).
    assert step["seconds"] < 10, step
    print(f"hanging git fetch with timeout = 3, retries = 3: failed after {step['seconds']:.1f} s")
    assert not any(p.name.startswith(".tmp") for p in git_dir.iterdir())
