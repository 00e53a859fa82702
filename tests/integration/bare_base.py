"""The bare base image the image and wheel tests start from: Debian minbase with python3,
python3-venv and ca-certificates only (the variant debian:bookworm-slim is made from), made by
mmdebstrap once and kept under build/image-test/ keyed by suite and packages. Nothing is ever
added to it for bootstrap's sake."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BASE_SUITE = "bookworm"
BARE_PACKAGES = ["python3", "python3-venv", "ca-certificates"]
CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"  # root's sbin may not be on PATH


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nargv={proc.args}\nstdout:\n{proc.stdout[-6000:]}\nstderr:\n{proc.stderr[-6000:]}"
    return proc


def base_tarball(packages: list[str]) -> Path:
    """The mmdebstrap base as a tarball, made once (under a lock) and kept under build/."""
    key = hashlib.sha256(json.dumps([BASE_SUITE, "minbase", packages]).encode()).hexdigest()[:16]
    cache = REPO / "build" / "image-test"
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / f"base-{BASE_SUITE}-{key}.tar"
    with open(cache / "base.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not tarball.exists():
            part = tarball.with_suffix(f".part-{os.getpid()}.tar")
            proc = subprocess.run(["mmdebstrap", "--variant=minbase", "--include=" + ",".join(packages),
                                   BASE_SUITE, str(part)], capture_output=True, text=True, timeout=900)
            if proc.returncode != 0:
                part.unlink(missing_ok=True)
                pytest.fail(f"mmdebstrap failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
            part.rename(tarball)
    return tarball


def bare_root(dest: Path) -> Path:
    """The bare base unpacked into `dest` (for chroot, as root)."""
    dest.mkdir(parents=True, exist_ok=True)
    ok(subprocess.run(["tar", "-xf", str(base_tarball(BARE_PACKAGES)), "-C", str(dest)], capture_output=True,
                      text=True))
    return dest
