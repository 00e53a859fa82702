"""A build cache shared between users (issue 41, item 8): an entry another user could have
written is installed only when a trusted key signed it. The attack as the issue tells it: in a
group-shared cache (setgid directory, umask 002) a group member replaced a cached wheel and the
sha256 beside it; the next user installed it and its planted .pth ran as uid 0. The tests make a
throwaway user and group (root only), run bootstrap and the attacker as that user with setpriv,
and remove both afterwards."""

from __future__ import annotations

import base64
import grp
import hashlib
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
import zipfile
from pathlib import Path

import pytest

import recipes as R
from recipes import steps_by_id
from test_build import build_step, builds, bw  # noqa: F401 (bw: the fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("useradd") is None
                                or shutil.which("setpriv") is None,
                                reason="needs root, useradd and setpriv to act as a second user")

PYTHON = "/usr/bin/python3.11"  # one interpreter both users can run: the same build key


class Shared:
    """A directory both users reach: the shared BOOTSTRAP_HOME, the source, the recipe."""

    def __init__(self, bw, users, group, top: Path):
        self.bw, self.users, self.group, self.top = bw, users, group, top
        self.user = users[0]
        self.home = top / "home"
        self.marker = top / "pwned"  # the planted .pth writes the uid it ran as here
        self.tree = top / "fastext"
        shutil.copytree(bw.tree, self.tree)
        for d in [self.tree, *self.tree.rglob("*")]:
            d.chmod(0o755 if d.is_dir() else 0o644)
        bw.build_log = top / "builds.log"
        bw.build_log.touch()
        bw.build_log.chmod(0o666)
        bw.home = self.home
        for user in users:
            (top / user.pw_name).mkdir()
            os.chown(top / user.pw_name, user.pw_uid, group.gr_gid)
        self.user_dir = top / self.user.pw_name

    def recipe(self, flavor: str) -> Path:
        step = build_step(self.bw, {"path": str(self.tree)}, env={"FASTEXT_FLAVOR": flavor})
        path = R.write_recipe(self.top, filename=f"{flavor}.toml", python=PYTHON, steps=[R.venv(), step])
        path.chmod(0o644)
        return path

    def env(self, extra: dict | None = None, user=None) -> dict:
        env = self.bw.full_env({"BOOTSTRAP_HOME": str(self.home), "PATH": f"{self.bw.uv.parent}:/usr/bin:/bin",
                                **(extra or {})})
        if user:
            mine = self.top / user.pw_name
            env.update({"HOME": str(mine), "UV_CACHE_DIR": str(mine / "uv-cache"), "USER": user.pw_name})
        return env

    def as_user(self, argv: list, umask: str, user=None) -> list:
        user = user or self.user
        return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={self.group.gr_gid}", "--init-groups", "--",
                "sh", "-c", f'umask {umask}; exec "$0" "$@"', *map(str, argv)]

    def bootstrap(self, args: list, umask: str, user=None, extra: dict | None = None):
        """Run bootstrap as root, or as `user` (True: the first throwaway user)."""
        user = self.user if user is True else user
        argv = [str(self.bw.bootstrap), *map(str, args)]
        cmd = self.as_user(argv, umask, user) if user else ["sh", "-c", f'umask {umask}; exec "$0" "$@"', *argv]
        return subprocess.run(cmd, env=self.env(extra, user), cwd=self.top, capture_output=True, text=True,
                              timeout=300, stdin=subprocess.DEVNULL)

    def run(self, recipe: Path, venv: Path, umask: str, user=None, extra: dict | None = None) -> dict:
        proc = self.bootstrap([recipe, "--venv", venv, "--json"], umask, user, extra)
        assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        import json
        return steps_by_id(json.loads(proc.stdout))["fastext"]

    def entries(self) -> list[Path]:
        root = self.home / "builds"
        return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))

    def keygen(self, user, umask: str = "002") -> str:
        proc = self.bootstrap(["cache", "keygen", "--name", "site-builder"], umask, user)
        assert proc.returncode == 0, proc.stderr
        return next(line for line in proc.stdout.splitlines() if line.startswith("site-builder:"))

    def tamper(self, entry: Path):
        """As the other user: replace the wheel with one carrying a .pth, and its sha256."""
        script = r'''
import base64, hashlib, os, sys, zipfile
entry, marker = sys.argv[1], sys.argv[2]
fields = dict(l.split(" = ", 1) for l in open(os.path.join(entry, "entry.txt")).read().splitlines())
wheel = os.path.join(entry, fields["wheel"])
pth = "import os; open(%r, 'w').write(str(os.getuid()))\n" % marker
tmp = wheel + ".evil"
with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w") as dst:
    for item in src.infolist():
        data = src.read(item)
        if item.filename.endswith("RECORD"):
            digest = base64.urlsafe_b64encode(hashlib.sha256(pth.encode()).digest()).rstrip(b"=").decode()
            data += ("zz_evil.pth,sha256=%s,%d\n" % (digest, len(pth))).encode()
        dst.writestr(item, data)
    dst.writestr("zz_evil.pth", pth)
os.replace(tmp, wheel)
fields["sha256"] = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
open(os.path.join(entry, "entry.txt.new"), "w").write("".join("%s = %s\n" % kv for kv in fields.items()))
os.replace(os.path.join(entry, "entry.txt.new"), os.path.join(entry, "entry.txt"))
'''
        proc = subprocess.run(self.as_user([PYTHON, "-c", script, entry, self.marker], "002"), capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert os.stat(entry / "entry.txt").st_uid == self.user.pw_uid

    def evil_installed(self, venv: Path) -> bool:
        return any(venv.glob("lib/python*/site-packages/zz_evil.pth"))


@pytest.fixture
def shared(bw):
    """Two throwaway users in a throwaway group, and a top directory all can reach."""
    tag = uuid.uuid4().hex[:8]
    group_name = f"bst{tag}g"
    names = [f"bst{tag}a", f"bst{tag}b"]
    subprocess.run(["groupadd", group_name], check=True)
    top = Path(tempfile.mkdtemp(prefix="bs-trust-", dir="/tmp"))
    top.chmod(0o755)
    try:
        for name in names:
            subprocess.run(["useradd", "-M", "-N", "-g", group_name, "-s", "/usr/sbin/nologin", name], check=True)
        yield Shared(bw, [pwd.getpwnam(n) for n in names], grp.getgrnam(group_name), top)
    finally:
        shutil.rmtree(top, ignore_errors=True)
        for name in names:
            subprocess.run(["userdel", name], check=False, capture_output=True)
        subprocess.run(["groupdel", group_name], check=False, capture_output=True)


def group_home(s: Shared):
    """The setup a shared cache needs: a setgid, group-writable home of the users' group."""
    s.home.mkdir()
    os.chown(s.home, 0, s.group.gr_gid)
    s.home.chmod(0o2775)


def test_a_group_member_replaced_wheel_is_not_installed(shared):
    s = shared
    group_home(s)
    recipe = s.recipe("a")
    step = s.run(recipe, s.top / "v1", "002")
    assert step["reason"].startswith("built in") and builds(s.bw) == 1
    [entry] = s.entries()
    # The lock and the entry are the group's to use (umask 002 and a setgid directory).
    lock = s.home / "builds" / (entry.name + ".lock")
    assert os.stat(lock).st_mode & 0o060 == 0o060 and os.stat(lock).st_gid == s.group.gr_gid

    s.tamper(entry)
    # Before: doctor said 0 errors and nothing of the cache; plan --explain promised a hit.
    doctor = s.bootstrap(["doctor", "--venv", s.top / "v1"], "002")
    assert (f"build cache entry {entry}: another user could have written it: uid {s.user.pw_uid} "
            f"({s.user.pw_name}), through {entry}/") in doctor.stdout and "it is not signed" in doctor.stdout
    explain = s.bootstrap(["plan", recipe, "--venv", s.top / "v1", "--explain"], "002")
    assert "in the build cache, but another user could have written it" in explain.stdout, explain.stdout
    step = s.run(recipe, s.top / "v2", "002")
    # Before: "build cache hit", and the .pth ran as uid 0 at the verify import.
    assert not s.marker.exists(), f"the planted .pth ran as uid {s.marker.read_text()}"
    assert not s.evil_installed(s.top / "v2")
    assert step["reason"].startswith("built in"), step
    assert f"passed over the cached entry: another user could have written it: uid {s.user.pw_uid} " \
           f"({s.user.pw_name}), through {entry}/" in step["reason"], step["reason"]
    assert "it is not signed" in step["reason"]
    assert builds(s.bw) == 2


def test_signed_entries_installed_only_while_the_signature_holds(shared):
    s = shared
    group_home(s)
    recipe = s.recipe("b")
    pub = s.keygen(user=True)
    keydir = s.home / "keys" / s.user.pw_name
    assert (keydir / "ed25519.key").stat().st_mode & 0o777 == 0o600 and keydir.stat().st_mode & 0o777 == 0o700
    # The other group member builds; the entry is signed by their key.
    step = s.run(recipe, s.user_dir / "venv", "002", user=True)
    assert step["reason"].startswith("built in"), step
    [entry] = s.entries()
    assert (entry / "signature").read_text().startswith("ed25519 ")

    # A reader who trusts that key installs it without building.
    trust = {"BOOTSTRAP_TRUSTED_KEYS": pub}
    step = s.run(recipe, s.top / "v1", "002", extra=trust)
    assert step["reason"].startswith("build cache hit"), step
    assert builds(s.bw) == 1
    doctor = s.bootstrap(["doctor", "--venv", s.top / "v1"], "002", extra=trust)
    assert f"build cache entry {entry}: another user could have written it: uid {s.user.pw_uid}" in doctor.stdout
    assert "signed by trusted key 'site-builder'" in doctor.stdout

    # The wheel replaced behind the signature: doctor reports it, the run passes it over.
    s.tamper(entry)
    doctor = s.bootstrap(["doctor", "--venv", s.top / "v1"], "002", extra=trust)
    assert doctor.returncode == 3, doctor.stdout
    assert (f"build cache entry {entry}: another user could have written it: uid {s.user.pw_uid} "
            f"({s.user.pw_name}), through {entry}/") in doctor.stdout, doctor.stdout
    assert "its signature does not match: its files are not the ones key 'site-builder' signed " \
           "(entry.txt changed, fastext-" in doctor.stdout, doctor.stdout
    step = s.run(recipe, s.top / "v2", "002", extra=trust)
    assert not s.marker.exists() and not s.evil_installed(s.top / "v2")
    assert step["reason"].startswith("built in") and "its signature does not match" in step["reason"], step
    assert builds(s.bw) == 2


def test_a_second_user_reads_a_cache_written_with_umask_022(shared):
    s = shared
    writer, reader = s.users
    s.home.mkdir()
    os.chown(s.home, writer.pw_uid, s.group.gr_gid)  # the writer's own cache, mode 0755
    recipe = s.recipe("c")
    pub = s.keygen(writer, "022")
    step = s.run(recipe, s.top / writer.pw_name / "venv", "022", user=writer)
    assert step["reason"].startswith("built in") and builds(s.bw) == 1
    [entry] = s.entries()
    (s.home / "builds" / (entry.name + ".lock")).touch()  # as a build's lock leaves it

    # Before: "Permission denied" on builds/<key>.lock. Now the reader, not trusting the
    # writer's key, builds in its venv and says whose entry it passed over and why.
    venv = s.top / reader.pw_name / "venv"
    step = s.run(recipe, venv, "022", user=reader)
    assert step["reason"].startswith("built in"), step
    assert f"not cached: {s.home / 'builds'} is not writable for you); passed over the cached entry: another user " \
           f"could have written it: uid {writer.pw_uid} ({writer.pw_name}), through {entry}" in step["reason"], step
    assert "signed by key" in step["reason"] and "which you do not trust" in step["reason"]
    assert builds(s.bw) == 2
    # Trusting the writer's key, another venv of the reader installs the writer's entry.
    step = s.run(recipe, s.top / reader.pw_name / "venv2", "022", user=reader, extra={"BOOTSTRAP_TRUSTED_KEYS": pub})
    assert step["reason"].startswith("build cache hit"), step
    assert builds(s.bw) == 2


def test_a_lock_file_another_member_left_read_only_does_not_stop_a_build(shared):
    s = shared
    writer, reader = s.users
    group_home(s)
    recipe = s.recipe("d")
    step = s.run(recipe, s.top / writer.pw_name / "venv", "022", user=writer)
    assert step["reason"].startswith("built in")
    [entry] = s.entries()
    # The writer's build was killed before it published (its lock stays), and its lock file is
    # 0644 as an older bootstrap made it with umask 022. Before: "cannot open lock file
    # .../<key>.lock: Permission denied" for every other member.
    shutil.rmtree(entry)
    lock = s.home / "builds" / (entry.name + ".lock")
    lock.chmod(0o644)
    assert lock.stat().st_uid == writer.pw_uid
    step = s.run(recipe, s.top / reader.pw_name / "venv", "022", user=reader)
    assert step["reason"].startswith("built in"), step
    assert builds(s.bw) == 2
    [entry] = s.entries()
    assert (entry / "entry.txt").stat().st_uid == reader.pw_uid
