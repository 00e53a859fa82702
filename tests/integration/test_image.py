"""`bootstrap containerfile` in a real image build: a small Debian base made by mmdebstrap
(cached under build/image-test/, keyed by its inputs) imported into a private buildah store, then
`buildah bud --isolation chroot` (vfs storage, as root; RUN steps share the host's network, so
they reach the loopback fixture index). The recipe installs from the index and builds the test
world's `fastext` from a local directory, so a second build shows the cache mount at work.
`podman build` runs the same context on the same store.

Needs root, buildah and mmdebstrap (podman for its test) (scripts/setup.sh --test-tools installs them); skips
otherwise."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

import recipes as R

REPO = Path(__file__).resolve().parents[2]
BASE_SUITE = "bookworm"
BASE_PACKAGES = ["python3", "python3-venv", "python3-dev", "gcc", "libc6-dev", "ca-certificates"]


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nargv={proc.args}\nstdout:\n{proc.stdout[-6000:]}\nstderr:\n{proc.stderr[-6000:]}"
    return proc


@pytest.fixture(scope="module")
def image_tools():
    if os.geteuid() != 0:
        pytest.skip("image builds need root (buildah with chroot isolation and vfs storage)")
    for tool in ("buildah", "mmdebstrap"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (scripts/setup.sh --test-tools)")


def runtime_packages(binary: Path) -> list[str]:
    """The Debian packages holding the shared libraries `binary` loads (ldd, dpkg -S): the
    bootstrap binary copied into an image needs them there."""
    proc = ok(subprocess.run(["ldd", str(binary)], capture_output=True, text=True))
    libs = [line.split("=>")[1].split()[0] for line in proc.stdout.splitlines()
            if "=>" in line and "/" in line.split("=>")[1]]
    # dpkg knows some paths only as /lib/... (usrmerge): those are essential packages, in
    # every minbase anyway, so what it cannot place is left out.
    owners = subprocess.run(["dpkg", "-S", *[os.path.realpath(p) for p in libs]], capture_output=True, text=True)
    return sorted({line.split(":")[0] for line in owners.stdout.splitlines()})


RUNROOTS: list[Path] = []  # the stores' runroots, outside tmp_path (see Buildah)


@pytest.fixture(autouse=True)
def remove_stores(tmp_path):
    """A vfs store holds a full copy of every layer (some 2 GB per test): gone when the test is."""
    yield
    for d in tmp_path.iterdir():
        if d.name.startswith(("buildah", "tmp")):
            shutil.rmtree(d, ignore_errors=True)
    while RUNROOTS:
        shutil.rmtree(RUNROOTS.pop(), ignore_errors=True)


def base_tarball(packages: list[str]) -> Path:
    """The mmdebstrap base, made once and kept under build/ keyed by suite and packages."""
    key = hashlib.sha256(json.dumps([BASE_SUITE, "minbase", packages]).encode()).hexdigest()[:16]
    cache = REPO / "build" / "image-test"
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / f"base-{BASE_SUITE}-{key}.tar"
    with open(cache / "base.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not tarball.exists():
            part = tarball.with_suffix(f".part-{os.getpid()}.tar")
            proc = subprocess.run(["mmdebstrap", "--variant=minbase", "--include=" + ",".join(packages),
                                   BASE_SUITE, str(part)], capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                part.unlink(missing_ok=True)
                pytest.fail(f"mmdebstrap failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
            part.rename(tarball)
    return tarball


class Buildah:
    """buildah (and podman) with a private store and cache-mount directory (TMPDIR) under
    `root`; the runroot is a short directory of its own (podman refuses one over 50 characters)."""

    def __init__(self, root: Path, tmp: Path):
        self.root = root
        self.tmp = tmp
        self.runroot = Path(tempfile.mkdtemp(prefix="bs-run-", dir="/tmp"))
        RUNROOTS.append(self.runroot)
        tmp.mkdir(parents=True, exist_ok=True)
        self.env = {**os.environ, "STORAGE_DRIVER": "vfs", "TMPDIR": str(tmp), "BUILDAH_ISOLATION": "chroot"}
        for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            self.env.pop(var, None)

    def _tool(self, tool: list[str], args, timeout: float) -> subprocess.CompletedProcess:
        argv = [*tool, "--root", str(self.root / "storage"), "--runroot", str(self.runroot),
                "--storage-driver", "vfs", *[str(a) for a in args]]
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def __call__(self, *args, timeout: float = 600) -> subprocess.CompletedProcess:
        return self._tool(["buildah"], args, timeout)

    def podman(self, *args, timeout: float = 600) -> subprocess.CompletedProcess:
        """podman on the same store: what it builds, this buildah sees."""
        return self._tool(["podman", "--cgroup-manager", "cgroupfs", "--events-backend", "file"],
                          args, timeout)

    def import_base(self, tarball: Path, name: str):
        ctr = ok(self("from", "scratch")).stdout.strip()
        mnt = ok(self("mount", ctr)).stdout.strip()
        ok(subprocess.run(["tar", "-xf", str(tarball), "-C", mnt], capture_output=True, text=True))
        ok(self("umount", ctr))
        ok(self("commit", "--timestamp", "0", ctr, name))
        ok(self("rm", ctr))

    def bud(self, context: Path, tag: str, *extra) -> tuple[subprocess.CompletedProcess, float]:
        start = time.monotonic()
        proc = self("bud", "--isolation", "chroot", "--layers=false", *extra, "-t", tag,
                    "-f", context / "Containerfile", context)
        return proc, time.monotonic() - start

    def run_in(self, image: str, *argv) -> subprocess.CompletedProcess:
        ctr = ok(self("from", image)).stdout.strip()
        try:
            return self("run", "--isolation", "chroot", ctr, "--", *argv)
        finally:
            self("rm", ctr)

    def inspect(self, image: str) -> dict:
        return json.loads(ok(self("inspect", "--type", "image", image)).stdout)

    def labels(self, image: str) -> dict:
        return self.inspect(image)["OCIv1"]["config"]["Labels"]

    def diff_ids(self, image: str) -> list[str]:
        return self.inspect(image)["OCIv1"]["rootfs"]["diff_ids"]


def image_recipe(world, sources) -> Path:
    """Packages from the loopback index and fastext built from a directory beside the recipe."""
    # The fixture's build counter (a pid per build) goes to the cache mount: written into the
    # image it would make two builds differ.
    project, steps = R.torch_and_fastext(
        world, sources, env={"FASTEXT_BUILD_LOG": "/var/cache/bootstrap/fastext-builds.log"})
    steps += [R.check("check", [R.imp("demo_torch"), R.imp("fastext")])]
    return R.write_recipe(project, "image.toml", name="image-demo", steps=steps,
                          header="", venv_path="/tmp/unused-venv")


def image_context(world, sources, ctx: Path) -> Path:
    """The image recipe's build context written to `ctx` (--no-device, base localhost/bs-base);
    returns the recipe."""
    recipe = image_recipe(world, sources)
    ok(world.run(["containerfile", recipe, "--no-device", "--base", "localhost/bs-base", "-o", ctx,
                  "--uv", world.uv]))
    return recipe


def store_with_base(world, root: Path, tmp: Path) -> Buildah:
    """A private store holding the mmdebstrap base as localhost/bs-base."""
    b = Buildah(root, tmp)
    b.import_base(base_tarball(BASE_PACKAGES + runtime_packages(world.bootstrap)), "localhost/bs-base")
    return b


def test_image_build_bakes_in_the_venv_and_reuses_the_build_cache(image_tools, world, sources, tmp_path):
    b = store_with_base(world, tmp_path / "buildah", tmp_path / "tmp")
    ctx = tmp_path / "ctx"
    recipe = image_context(world, sources, ctx)
    assert (ctx / "sources/0/pyproject.toml").exists() or (ctx / "sources/0/setup.py").exists()

    cold, cold_s = b.bud(ctx, "localhost/bs-image:1")
    ok(cold)
    cold_log = cold.stdout + cold.stderr  # RUN's output goes to buildah's stderr
    assert "fastext" in cold_log and "built in" in cold_log, cold_log[-4000:]

    # The image: history and doctor run, the venv's packages import, the manifest is there.
    history = ok(b.run_in("localhost/bs-image:1", "bootstrap", "history", "--venv", "/opt/venv"))
    assert "after" in history.stdout, history.stdout
    ok(b.run_in("localhost/bs-image:1", "bootstrap", "doctor", "--venv", "/opt/venv"))
    imported = ok(b.run_in("localhost/bs-image:1", "/opt/venv/bin/python", "-c",
                           "import demo_torch, fastext; print(fastext.answer())"))
    assert imported.stdout.strip() == "42"
    manifest = json.loads(ok(b.run_in("localhost/bs-image:1", "cat", "/etc/bootstrap/manifest.json")).stdout)
    names = json.dumps(manifest)
    assert "demo-torch" in names and "fastext" in names
    digest_line = ok(b.run_in("localhost/bs-image:1", "cat", "/etc/bootstrap/manifest.json.sha256")).stdout
    assert digest_line.split()[1] == "manifest.json"
    recipe_in_image = ok(b.run_in("localhost/bs-image:1", "cat", "/etc/bootstrap/recipe.toml")).stdout
    assert recipe_in_image == recipe.read_text()

    labels = b.labels("localhost/bs-image:1")
    assert labels["io.bootstrap.recipe.name"] == "image-demo"
    assert labels["io.bootstrap.recipe.digest"] == "sha256:" + hashlib.sha256(recipe.read_bytes()).hexdigest()
    assert labels["io.bootstrap.arch"] == "none"  # --no-device and no fallback_arch
    assert labels["io.bootstrap.venv"] == "/opt/venv"

    # A second build after changing only the Containerfile's last line: the RUN runs again and
    # finds fastext in the build cache on the cache mount.
    cf = ctx / "Containerfile"
    cf.write_text(cf.read_text() + "LABEL io.bootstrap.test.rebuild=\"2\"\n")
    warm, warm_s = b.bud(ctx, "localhost/bs-image:2")
    ok(warm)
    warm_log = warm.stdout + warm.stderr
    assert "build cache hit" in warm_log, warm_log[-4000:]
    print(f"\nimage build: cold {cold_s:.1f} s, warm (cache mount) {warm_s:.1f} s")
    print(f"layers: {b.diff_ids('localhost/bs-image:2')}")


def test_podman_builds_the_same_context(image_tools, world, sources, tmp_path):
    """The Containerfile is not buildah's alone: `podman build` (chroot isolation) runs it too,
    cache mount included, and the image it makes holds a working venv and the labels."""
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (scripts/setup.sh --test-tools)")
    b = store_with_base(world, tmp_path / "buildah", tmp_path / "tmp")
    ctx = tmp_path / "ctx"
    image_context(world, sources, ctx)
    built = ok(b.podman("build", "--isolation", "chroot", "--layers=false", "-t", "localhost/bs-podman:1",
                        "-f", ctx / "Containerfile", ctx))
    assert "built in" in built.stdout + built.stderr, (built.stdout + built.stderr)[-4000:]
    imported = ok(b.run_in("localhost/bs-podman:1", "/opt/venv/bin/python", "-c",
                           "import demo_torch, fastext; print(fastext.answer())"))
    assert imported.stdout.strip() == "42"
    ok(b.run_in("localhost/bs-podman:1", "bootstrap", "doctor", "--venv", "/opt/venv"))
    assert b.labels("localhost/bs-podman:1")["io.bootstrap.recipe.name"] == "image-demo"


def tree_digests(b: Buildah, image: str, roots: list[str]) -> dict[str, str]:
    """path -> sha256 (or link target) of every file under `roots` in the image."""
    ctr = ok(b("from", image)).stdout.strip()
    try:
        mnt = Path(ok(b("mount", ctr)).stdout.strip())
        out = {}
        for root in roots:
            for p in sorted((mnt / root.lstrip("/")).rglob("*")):
                rel = "/" + str(p.relative_to(mnt))
                if p.is_symlink():
                    out[rel] = "-> " + os.readlink(p)
                elif p.is_file():
                    out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
                else:
                    out[rel] = "dir"
        return out
    finally:
        b("umount", ctr)
        b("rm", ctr)


def top_layer_members(b: Buildah, image: str, dest: Path) -> dict[str, str]:
    """member name -> everything the layer tar says of it (type, mode, owner, mtime, link,
    extended headers, content digest), from the image's last layer as `buildah push` writes it
    uncompressed (its digest is then the layer's diff_id)."""
    ok(b("push", "--disable-compression", "--quiet", image, f"oci:{dest}"))
    blobs = dest / "blobs" / "sha256"
    index = json.loads((dest / "index.json").read_text())
    manifest = json.loads((blobs / index["manifests"][0]["digest"].split(":")[1]).read_bytes())
    layer = blobs / manifest["layers"][-1]["digest"].split(":")[1]
    out = {}
    with tarfile.open(layer) as tf:
        for m in tf:
            data = tf.extractfile(m).read() if m.isfile() else b""
            out[m.name] = (f"type={m.type!r} mode={m.mode:o} uid={m.uid} gid={m.gid} mtime={m.mtime} "
                           f"link={m.linkname} pax={sorted(m.pax_headers.items())} "
                           f"sha256={hashlib.sha256(data).hexdigest()}")
    shutil.rmtree(dest, ignore_errors=True)
    return out


def test_two_clean_image_builds_give_the_same_venv_layer(image_tools, world, sources, tmp_path):
    """Reproducibility: the same context built twice from empty caches with --timestamp 0."""
    ctx = tmp_path / "ctx"
    image_context(world, sources, ctx)
    layers, trees, members = [], [], []
    for n in (1, 2):
        # A store and cache-mount directory of its own per build: nothing is shared.
        b = store_with_base(world, tmp_path / f"buildah{n}", tmp_path / f"tmp{n}")
        ok(b.bud(ctx, f"localhost/bs-repro:{n}", "--timestamp", "0")[0])
        layers.append(b.diff_ids(f"localhost/bs-repro:{n}"))
        trees.append(tree_digests(b, f"localhost/bs-repro:{n}", ["/opt/venv", "/etc/bootstrap"]))
        members.append(top_layer_members(b, f"localhost/bs-repro:{n}", tmp_path / f"oci{n}"))
    assert layers[0][0] == layers[1][0]  # the imported base
    differing = sorted(p for p in set(trees[0]) | set(trees[1]) if trees[0].get(p) != trees[1].get(p))
    print(f"\nvenv layer: {layers[0][-1]} vs {layers[1][-1]}; files differing: {differing}")
    in_layer = sorted(m for m in set(members[0]) | set(members[1]) if members[0].get(m) != members[1].get(m))
    for m in in_layer:
        print(f"layer member {m}:\n  1: {members[0].get(m)}\n  2: {members[1].get(m)}")
    # What made them differ, and what took care of it: bootstrap's state recorded when, by
    # which run and process, and on which inodes it was made (SOURCE_DATE_EPOCH, an ARG of the
    # Containerfile, dates it and derives run ids; `bootstrap seal` removes the lock, logs and
    # stat-keyed caches and resets the journal's stamps and timings); uv's uv_cache.json (the
    # ctime of the wheel installed by path) is removed with its RECORD row by the seal; the
    # fixture's build_info.json wrote its temporary build env's random name, and its build
    # counter (pids) went to /tmp (now the cache mount); the import checks' .pyc files are
    # recompiled hash-based. The image keeps what `history`/`diff` need.
    assert differing == []
    assert in_layer == []
    assert layers[0][-1] == layers[1][-1]
    kept = trees[0]
    assert "/opt/venv/.bootstrap/journal.json" in kept and "/etc/bootstrap/manifest.json" in kept
    assert any(re.fullmatch(r"/opt/venv/\.bootstrap/history/\d+-after\.json", p) for p in kept)
    assert not any(re.fullmatch(r"/opt/venv/\.bootstrap/(lock|logs|packages\.cache|python\.facts)", p) for p in kept)
    assert not any(p.endswith("/uv_cache.json") for p in kept)
