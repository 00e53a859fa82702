"""State that is never half-written or misread: hostile dist-info files, history numbering past
nine digits, an install cut short (a dist-info holding only RECORD), the venv lock held by the
children of a killed run, and the venv path and directory a run accepts."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import recipes as R


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def site_packages(venv: Path) -> Path:
    (site,) = list((venv / "lib").glob("python*/site-packages"))
    return site


def core_recipe(world, version: str) -> Path:
    return R.write_recipe(world.root, steps=[
        R.venv(), R.install("core", [f"demo-core=={version}"], index_url=world.index.url())])


def history_names(venv: Path) -> list[str]:
    return sorted(p.name for p in (venv / ".bootstrap" / "history").glob("*.json"))


# --------------------------------------------------------------------------- hostile dist-info

def test_hostile_dist_info_files_neither_hang_nor_exhaust_a_run(world):
    recipe = core_recipe(world, "1.0.0")
    ok(world.run([recipe]))
    site = site_packages(world.venv)

    def dist(name: str) -> Path:
        d = site / f"{name}-1.0.dist-info"
        d.mkdir()
        (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\n")
        (d / "RECORD").write_text(f"{name}/__init__.py,,\n")
        return d

    os.unlink(dist("fifometa") / "METADATA")
    os.mkfifo(site / "fifometa-1.0.dist-info" / "METADATA")  # no writer: open() would block
    os.unlink(dist("zerometa") / "METADATA")
    os.symlink("/dev/zero", site / "zerometa-1.0.dist-info" / "METADATA")  # endless, no newline
    os.unlink(dist("zerorecord") / "RECORD")
    os.symlink("/dev/zero", site / "zerorecord-1.0.dist-info" / "RECORD")
    os.unlink(dist("fiforecord") / "RECORD")
    os.mkfifo(site / "fiforecord-1.0.dist-info" / "RECORD")
    # A 50 MB header line (quadratic to search before: 10-70 s).
    (dist("longline") / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: longline\nSummary: " + "a" * 50_000_000 + "\nVersion: 1.0\n\n")

    t0 = time.monotonic()
    proc = world.run(["snapshot", "--venv", world.venv], timeout=60)
    ok(proc)
    assert time.monotonic() - t0 < 20
    packages = json.loads(proc.stdout)["packages"]
    assert packages["fifometa"]["broken"] == "METADATA is not a regular file (a FIFO)"
    assert packages["zerometa"]["broken"] == "METADATA is not a regular file (a character device)"
    assert packages["zerorecord"]["broken"] == "RECORD is not a regular file (a character device)"
    assert packages["fiforecord"]["broken"] == "RECORD is not a regular file (a FIFO)"
    assert "broken" not in packages["longline"] and packages["longline"]["version"] == "1.0"
    assert "broken" not in packages["demo-core"]

    # Doctor says what is wrong with each, and a run neither hangs nor dies on them.
    proc = world.run(["doctor", "--venv", world.venv], timeout=60)
    assert proc.returncode != 0
    assert ("broken install of fifometa 1.0: METADATA is not a regular file (a FIFO)"
            in proc.stdout + proc.stderr)


# --------------------------------------------------------------------------- history numbers

def test_history_numbers_past_nine_digits_never_overwrite_and_last_is_the_newest(world):
    ok(world.run([core_recipe(world, "1.0.0")]))
    hist = world.venv / ".bootstrap" / "history"
    assert history_names(world.venv) == ["0001-after.json"]
    # An entry numbered 999,999,999 (the same state as entry 1).
    shutil.copy(hist / "0001-after.json", hist / "999999999-after.json")

    ok(world.run([core_recipe(world, "1.1.0")]))
    ok(world.run([core_recipe(world, "2.0.0")]))
    names = history_names(world.venv)
    # Each run writes a before and an after entry (the recipe changed). Before the fix the lister
    # ignored 10-digit names, so all four were written as 1000000000 over each other.
    assert names == ["0001-after.json", "1000000000-before.json", "1000000001-after.json",
                     "1000000002-before.json", "1000000003-after.json", "999999999-after.json"], names
    versions = {n: json.loads((hist / n).read_text())["packages"]["demo-core"]["version"]
                for n in names}
    assert versions["1000000001-after.json"] == "1.1.0"
    assert versions["1000000003-after.json"] == "2.0.0"

    proc = world.run(["history", "--venv", world.venv, "--json"])
    ok(proc)
    assert [e["number"] for e in json.loads(proc.stdout)["entries"]][-1] == 1000000003

    world.uv_pip("install", "--index-url", world.index.url(), "demo-core==1.0.0")
    proc = world.run(["rollback", "--venv", world.venv, "--last", "--index-url", world.index.url()])
    ok(proc)
    # --last: the state before the newest run, its "before" entry 1000000002.
    assert "1000000002" in proc.stdout, proc.stdout
    assert world.version_of("demo-core") == "1.1.0"
    ok(world.run(["rollback", "--venv", world.venv, "--to", "1000000003", "--index-url", world.index.url()]))
    assert world.version_of("demo-core") == "2.0.0"


# --------------------------------------------------------------------------- the venv lock

def pid_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_killed_runs_orphan_keeps_the_venv_locked_until_it_exits(world):
    started, pidfile = world.root / "started", world.root / "child.pid"
    code = (f"import os, pathlib, time; p = pathlib.Path({str(started)!r}); first = not p.exists(); "
            f"pathlib.Path({str(pidfile)!r}).write_text(str(os.getpid())); p.write_text('x'); "
            f"time.sleep(8 if first else 0)")
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.run("slow", ["{venv.python}", "-c", code])])
    first = world.popen([recipe])
    deadline = time.monotonic() + 60
    while not started.exists():
        assert first.poll() is None, first.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child = int(pidfile.read_text())
    first.send_signal(signal.SIGKILL)  # bootstrap dies at once; its step's child runs on
    first.communicate(timeout=10)
    assert pid_alive(child)

    # Before: the lock died with bootstrap and this run started beside the orphan.
    second = world.run([recipe, "--lock-timeout", "1", "--json"])
    assert pid_alive(child), "the orphan must still run for this check to mean anything"
    assert second.returncode == 1, second.stderr
    assert f"waiting for the venv lock held by pid {child} (up to 1s)" in second.stderr
    msg = (f"the venv {world.venv} is locked by pid {child}, a child that bootstrap run pid "
           f"{first.pid} started and that outlived it (it inherited the lock); gave up after 1s "
           f"(--lock-timeout)")
    assert f"error: {msg}\n" in second.stderr, second.stderr
    assert json.loads(second.stdout)["error"]["message"] == msg

    # A run that may wait gets the venv once the orphan is gone, and finishes the step.
    third = world.run([recipe, "--lock-timeout", "60"])
    ok(third)
    assert not pid_alive(child)
    assert f"waiting for the venv lock held by pid {child}" in third.stderr


# --------------------------------------------------------------------------- an install cut short

def break_install(world, name: str) -> Path:
    """What uv leaves when the disk fills while it writes a dist-info: RECORD only."""
    (dist_info,) = list(site_packages(world.venv).glob(f"{name}-*.dist-info"))
    for f in dist_info.iterdir():
        if f.name != "RECORD":
            f.unlink()
    return dist_info


def test_run_and_doctor_on_a_dist_info_holding_only_record(world):
    recipe = R.write_recipe(world.root, steps=[
        R.venv(), R.install("tools", ["wandb"], index_url=world.index.url())])
    ok(world.run([recipe]))
    dist_info = break_install(world, "wandb")

    proc = world.run(["snapshot", "--venv", world.venv])
    ok(proc)
    assert json.loads(proc.stdout)["packages"]["wandb"]["broken"] == "METADATA missing"
    assert ("warning: broken install of wandb: METADATA missing (a run removes it, then its "
            "step installs it again; `bootstrap doctor` says more)") in proc.stderr

    proc = world.run(["doctor", "--venv", world.venv, "--recipe", recipe])
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "broken install of wandb 0.22.0: METADATA missing" in out, out
    assert f"bootstrap run {recipe} --venv {world.venv} removes it first" in out
    assert "step 'tools' then installs wandb again" in out

    # Before: uv failed ("Failed to read metadata for: wandb==0.22.0") on every later run.
    proc = world.run([recipe])
    ok(proc)
    assert ("removed the broken install of wandb 0.22.0 (METADATA missing): its dist-info "
            "wandb-0.22.0.dist-info and the") in proc.stderr
    assert (dist_info / "METADATA").is_file()
    assert world.version_of("wandb") == "0.22.0"
    assert world.python("import wandb").returncode == 0
    proc = world.run(["doctor", "--venv", world.venv, "--recipe", recipe])
    assert "broken install of" not in proc.stdout + proc.stderr


def test_rollback_reinstalls_a_broken_package_the_target_has(world):
    recipe = R.write_recipe(world.root, steps=[
        R.venv(), R.install("tools", ["wandb"], index_url=world.index.url())])
    ok(world.run([recipe]))
    break_install(world, "wandb")
    proc = world.run(["rollback", "--venv", world.venv, "--to", "1"])
    # Before: "nothing to do" (rc 0), or a verification failure, with the broken wandb still there.
    ok(proc)
    assert "wandb 0.22.0 (broken install: METADATA missing)" in proc.stdout, proc.stdout
    assert "removed the broken install of wandb 0.22.0" in proc.stdout + proc.stderr
    assert world.version_of("wandb") == "0.22.0"
    snap = json.loads(ok(world.run(["snapshot", "--venv", world.venv])).stdout)
    assert "broken" not in snap["packages"]["wandb"]


def test_rollback_removes_a_broken_package_the_target_lacks(world):
    ok(world.run([core_recipe(world, "1.0.0")]))  # history entry 1: no wandb
    world.uv_pip("install", "--index-url", world.index.url(), "--no-deps", "wandb")
    dist_info = break_install(world, "wandb")
    module = site_packages(world.venv) / "wandb"
    assert module.is_dir()

    dry = world.run(["rollback", "--venv", world.venv, "--to", "1", "--dry-run"])
    ok(dry)
    assert "- wandb 0.22.0 (remove)" in dry.stdout, dry.stdout
    assert dist_info.exists()

    proc = world.run(["rollback", "--venv", world.venv, "--to", "1"])
    # Before: "already matches 1" (rc 0) while the broken dist-info stayed.
    ok(proc)
    assert "already matches" not in proc.stdout
    assert not dist_info.exists()
    assert not module.exists()  # the files its RECORD listed
    assert (world.venv / "bin" / "wandb").exists()  # outside site-packages: left alone
    assert world.version_of("wandb") is None
    assert world.version_of("demo-core") == "1.0.0"


# --------------------------------------------------------------------------- the venv path and directory

def test_a_venv_path_with_a_control_character_is_refused(world):
    recipe = core_recipe(world, "1.0.0")
    bad = world.root / "a\nb"
    proc = world.run([recipe, "--venv", bad])
    assert proc.returncode == 2, proc.stderr
    assert (f"error: --venv: the venv path '{bad}' contains a control character (a newline at byte "
            f"{len(str(world.root)) + 2}); choose a path without one") in proc.stderr
    assert not bad.exists()  # before: created, and its facts cache broke every later run


def test_a_directory_that_is_not_a_venv_is_not_made_one_without_recreate(world):
    recipe = core_recipe(world, "1.0.0")
    (world.venv / "src").mkdir(parents=True)
    (world.venv / "src" / "train.py").write_text("print('mine')\n")
    proc = world.run([recipe])
    assert proc.returncode == 2, proc.stderr
    assert (f"{world.venv} exists and is not a venv (no pyvenv.cfg), but it is not empty: it holds src"
            in proc.stderr)
    assert "bootstrap never deletes a directory that is not a venv it made" in proc.stderr
    assert not (world.venv / "pyvenv.cfg").exists()  # before: silently made into a venv

    # Not even --recreate deletes someone's files (issue 23: it once emptied a home directory).
    proc = world.run([recipe, "--recreate"])
    assert proc.returncode == 2, proc.stderr
    assert (world.venv / "src" / "train.py").read_text() == "print('mine')\n"

    # A venv bootstrap was making (its state dir is there) may be replaced with --recreate.
    (world.venv / ".bootstrap").mkdir()
    proc = world.run([recipe])
    assert proc.returncode == 2 and "--recreate" in proc.stderr, proc.stderr
    ok(world.run([recipe, "--recreate"]))
    assert (world.venv / "pyvenv.cfg").is_file()
    assert not (world.venv / "src").exists()
    assert world.version_of("demo-core") == "1.0.0"


def test_inspect_on_a_truncated_library_is_an_error(world, tmp_path):
    whole = Path(world.bootstrap).read_bytes()
    cut = tmp_path / "libcut.so"
    cut.write_bytes(whole[: len(whole) // 2])
    proc = world.run(["inspect", cut])
    # Before: "no CUDA code (no .nv_fatbin section)" and exit 0.
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"error: {cut} is truncated or corrupt: " in proc.stderr
    assert f"(the file has {len(whole) // 2} bytes)" in proc.stderr
    ok(world.run(["inspect", world.bootstrap]))
