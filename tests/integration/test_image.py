"""`bootstrap containerfile` in real image builds, on a bare base: Debian minbase with python3,
python3-venv and ca-certificates only (the variant debian:bookworm-slim is made from; made by
mmdebstrap, cached under build/image-test/ keyed by its inputs). Nothing is added to it for the
binary's sake: the binary is self-contained (CMakeLists.txt, BOOTSTRAP_PORTABLE).

Each builder builds the context with the command `containerfile` prints, the test adding only
what its sandbox needs: buildah and podman a private vfs store and chroot isolation (RUN steps
share the host's network, so they reach the loopback fixture index), docker a Docker Engine
started by the test (Debian's docker.io: dockerd with vfs storage, stopped by pid) and
`--network host`. The recipe installs from the index and builds the test world's `fastext` from
a local directory (FASTEXT_PURE: the bare base has no compiler), so a second build shows the
cache mount at work.

Needs root, buildah and mmdebstrap (podman, docker.io for their tests; scripts/setup.sh
--test-tools installs them); skips otherwise."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

import recipes as R
from bare_base import BARE_PACKAGES, CHROOT, bare_root, base_tarball, ok

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def image_tools():
    if os.geteuid() != 0:
        pytest.skip("image builds need root (buildah with chroot isolation and vfs storage)")
    for tool in ("buildah", "mmdebstrap"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (scripts/setup.sh --test-tools)")


DOCKERD = shutil.which("dockerd") or "/usr/sbin/dockerd"
RUNROOTS: list[Path] = []  # the stores' runroots, outside tmp_path (see Buildah)


@pytest.fixture(autouse=True)
def remove_stores(tmp_path):
    """A vfs store holds a full copy of every layer: gone when the test is."""
    yield
    for d in tmp_path.iterdir():
        if d.name.startswith(("buildah", "tmp", "docker")):
            shutil.rmtree(d, ignore_errors=True)
    while RUNROOTS:
        shutil.rmtree(RUNROOTS.pop(), ignore_errors=True)


def printed_commands(stdout: str) -> dict[str, tuple[dict, list[str]]]:
    """The build commands `containerfile` printed, by tool: (variables set before it, argv)."""
    out = {}
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("build it with any of:"))
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        words = shlex.split(line)
        env = {}
        while "=" in words[0]:
            name, value = words.pop(0).split("=", 1)
            env[name] = value
        out[words[0]] = (env, words)
    return out


def as_run(command: tuple[dict, list[str]], image: str, globals_: list[str], flags: list[str]):
    """A printed command with IMAGE named and the sandbox's flags added: `globals_` after the
    program, `flags` after its subcommand."""
    env, words = command
    words = [image if w == "IMAGE" else w for w in words]
    return env, [words[0], *globals_, words[1], *flags, *words[2:]]


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

    def store_flags(self) -> list[str]:
        return ["--root", str(self.root / "storage"), "--runroot", str(self.runroot), "--storage-driver", "vfs"]

    PODMAN = ["--cgroup-manager", "cgroupfs", "--events-backend", "file"]

    def __call__(self, *args, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(["buildah", *self.store_flags(), *[str(a) for a in args]], capture_output=True,
                              text=True, env=self.env, timeout=timeout, stdin=subprocess.DEVNULL)

    def build(self, command, image: str, *extra, timeout: float = 900) -> tuple[subprocess.CompletedProcess, float]:
        """Run a printed `buildah bud` or `podman build` command against this store."""
        program = command[1][0]
        globals_ = self.store_flags() + (self.PODMAN if program == "podman" else [])
        env, argv = as_run(command, image, globals_, ["--isolation", "chroot", "--layers=false", *extra])
        start = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True, env={**self.env, **env}, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        return proc, time.monotonic() - start

    def import_base(self, tarball: Path, name: str):
        ctr = ok(self("from", "scratch")).stdout.strip()
        mnt = ok(self("mount", ctr)).stdout.strip()
        ok(subprocess.run(["tar", "-xf", str(tarball), "-C", mnt], capture_output=True, text=True))
        ok(self("umount", ctr))
        ok(self("commit", "--timestamp", "0", ctr, name))
        ok(self("rm", ctr))

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


class Docker:
    """A Docker Engine of the test's own (Debian's dockerd: vfs storage, no bridge or iptables,
    its socket, data and exec roots under the test's directories), stopped by its pid."""

    def __init__(self, root: Path):
        self.root = root
        self.short = Path(tempfile.mkdtemp(prefix="bs-dk-", dir="/tmp"))  # sockets want short paths
        RUNROOTS.append(self.short)
        self.sock = self.short / "docker.sock"
        self.env = {**os.environ, "DOCKER_HOST": f"unix://{self.sock}"}
        for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            self.env.pop(var, None)
        root.mkdir(parents=True, exist_ok=True)
        self.log = open(root / "dockerd.log", "w")
        self.proc = subprocess.Popen(
            [DOCKERD, "--storage-driver=vfs", "--data-root", str(root / "data"), "--exec-root",
             str(self.short / "exec"), "--pidfile", str(self.short / "dockerd.pid"), "-H", f"unix://{self.sock}",
             "--bridge=none", "--iptables=false"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env,
            start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            if self("version").returncode == 0:
                return
            time.sleep(0.5)
        self.stop()
        pytest.fail("dockerd did not start:\n" + (root / "dockerd.log").read_text()[-4000:])

    def __call__(self, *args, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(["/usr/bin/docker", *[str(a) for a in args]], capture_output=True, text=True,
                              env={**self.env, **(env or {})}, timeout=timeout, stdin=subprocess.DEVNULL)

    def build(self, command, image: str, *extra) -> tuple[subprocess.CompletedProcess, float]:
        env, argv = as_run(command, image, [], ["--network", "host", "--progress", "plain", *extra])
        argv[0] = "/usr/bin/docker"  # Debian's client, not another one first on PATH
        start = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True, env={**self.env, **env}, timeout=900,
                              stdin=subprocess.DEVNULL)
        return proc, time.monotonic() - start

    def run_in(self, image: str, *argv) -> subprocess.CompletedProcess:
        return self("run", "--rm", "--network", "none", image, *argv)

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


SECRET_VALUE = "bs-test-token-4242"


def image_recipe(world, sources, url: bool = False, secret: bool = False) -> Path:
    """Packages from the loopback index and fastext built from a directory beside the recipe
    (`url`: from its sdist's file:// URL, which the context carries: the bare base has no
    libcurl, and the path is not in the image). `secret`: a step checks HF_TOKEN (a build secret
    in the image build) against the digest of SECRET_VALUE."""
    # The fixture's build counter (a pid per build) goes to the cache mount: written into the
    # image it would make two builds differ.
    project, steps = R.torch_and_fastext(
        world, sources, env={"FASTEXT_BUILD_LOG": "/var/cache/bootstrap/fastext-builds.log", "FASTEXT_PURE": "1"})
    if url:
        steps[-1]["source"] = {"url": sources["tarball_url"], "sha256": sources["sha256"]}
    steps += [R.check("check", [R.imp("demo_torch"), R.imp("fastext")])]
    if secret:
        # The value's digest, not the value: the recipe itself goes into the image.
        digest = hashlib.sha256(SECRET_VALUE.encode()).hexdigest()
        steps += [R.run("uses-token", ["sh", "-c", f'test "$(printf %s "$HF_TOKEN" | sha256sum | cut -c1-64)" = {digest}'],
                        env={"HF_TOKEN": "{env.HF_TOKEN}"})]
    return R.write_recipe(project, "image.toml", name="image-demo", steps=steps,
                          header="", venv_path="/tmp/unused-venv")


def image_context(world, sources, ctx: Path, url: bool = False, secret: bool = False) -> tuple[Path, dict]:
    """The image recipe's build context written to `ctx` (--no-device, base localhost/bs-base):
    the recipe and the build commands `containerfile` printed."""
    recipe = image_recipe(world, sources, url, secret)
    proc = ok(world.run(["containerfile", recipe, "--no-device", "--base", "localhost/bs-base", "-o", ctx,
                         "--uv", world.uv, *(["--secret", "HF_TOKEN"] if secret else [])]))
    if url:
        assert "carried step 'fastext' source" in proc.stdout, proc.stdout
        assert (ctx / "bootstrap/downloads" / sources["sha256"]).is_dir()
    return recipe, printed_commands(proc.stdout)


def store_with_base(root: Path, tmp: Path) -> Buildah:
    """A private store holding the bare base as localhost/bs-base."""
    b = Buildah(root, tmp)
    b.import_base(base_tarball(BARE_PACKAGES), "localhost/bs-base")
    return b


def check_image(run_in, image: str, recipe: Path):
    """What every builder's image holds: history and doctor run, the venv's packages import,
    the manifest and the recipe are there."""
    history = ok(run_in(image, "bootstrap", "history", "--venv", "/opt/venv"))
    assert "after" in history.stdout, history.stdout
    ok(run_in(image, "bootstrap", "doctor", "--venv", "/opt/venv"))
    imported = ok(run_in(image, "/opt/venv/bin/python", "-c", "import demo_torch, fastext; print(fastext.answer())"))
    assert imported.stdout.strip() == "42"
    manifest = json.loads(ok(run_in(image, "cat", "/etc/bootstrap/manifest.json")).stdout)
    names = json.dumps(manifest)
    assert "demo-torch" in names and "fastext" in names
    digest_line = ok(run_in(image, "cat", "/etc/bootstrap/manifest.json.sha256")).stdout
    assert digest_line.split()[1] == "manifest.json"
    assert ok(run_in(image, "cat", "/etc/bootstrap/recipe.toml")).stdout == recipe.read_text()
    # Issue 42, item 5: checkable where it runs. In a fresh container (none of the build's
    # variables, no build secret), the recipe plans as in the build and every step is up to
    # date; the first run is a no-op that changes no file of the venv (names, sizes, mtimes,
    # contents compared in the same container).
    check = run_in(image, "bootstrap", "plan", "/etc/bootstrap/recipe.toml", "--venv", "/opt/venv", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "would re-verify" not in check.stdout and "would run" not in check.stdout, check.stdout
    tree = "find /opt/venv -printf '%p %y %s %T@\\n' | sort; find /opt/venv -type f -exec sha256sum {} + | sort"
    first = run_in(image, "sh", "-c", f"({tree}) > /tmp/before; bootstrap run /etc/bootstrap/recipe.toml --venv "
                                      f"/opt/venv || exit 3; ({tree}) > /tmp/after; diff /tmp/before /tmp/after")
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-4000:]


def test_the_printed_commands_are_for_docker_podman_and_buildah(image_tools, world, sources, tmp_path):
    _, commands = image_context(world, sources, tmp_path / "ctx")
    assert set(commands) == {"docker", "podman", "buildah"}
    assert commands["docker"] == ({"DOCKER_BUILDKIT": "1"}, ["docker", "build", "-t", "IMAGE", str(tmp_path / "ctx")])
    assert (tmp_path / "ctx" / "Dockerfile").is_file()  # the name all three look for


def test_image_build_bakes_in_the_venv_and_reuses_the_build_cache(image_tools, world, sources, tmp_path):
    b = store_with_base(tmp_path / "buildah", tmp_path / "tmp")
    ctx = tmp_path / "ctx"
    recipe, commands = image_context(world, sources, ctx)
    assert (ctx / "sources/0/pyproject.toml").exists() or (ctx / "sources/0/setup.py").exists()

    cold, cold_s = b.build(commands["buildah"], "localhost/bs-image:1")
    ok(cold)
    cold_log = cold.stdout + cold.stderr  # RUN's output goes to buildah's stderr
    assert "fastext" in cold_log and "built in" in cold_log, cold_log[-4000:]
    check_image(b.run_in, "localhost/bs-image:1", recipe)

    labels = b.labels("localhost/bs-image:1")
    assert labels["io.bootstrap.recipe.name"] == "image-demo"
    assert labels["io.bootstrap.recipe.digest"] == "sha256:" + hashlib.sha256(recipe.read_bytes()).hexdigest()
    assert labels["io.bootstrap.arch"] == "none"  # --no-device and no fallback_arch
    assert labels["io.bootstrap.venv"] == "/opt/venv"

    # A second build after changing only the Dockerfile's last line: the RUN runs again and
    # finds fastext in the build cache on the cache mount.
    cf = ctx / "Dockerfile"
    cf.write_text(cf.read_text() + "LABEL io.bootstrap.test.rebuild=\"2\"\n")
    warm, warm_s = b.build(commands["buildah"], "localhost/bs-image:2")
    ok(warm)
    warm_log = warm.stdout + warm.stderr
    assert "build cache hit" in warm_log, warm_log[-4000:]
    print(f"\nimage build: cold {cold_s:.1f} s, warm (cache mount) {warm_s:.1f} s")
    print(f"layers: {b.diff_ids('localhost/bs-image:2')}")


def test_a_context_written_to_a_relative_directory_builds(image_tools, world, sources, tmp_path):
    """Issue 41, item 10: `-o ctx` relative to the working directory, as the README writes it.
    fastext's source is named relative to the recipe: the COPY puts it in /etc/bootstrap/, where
    the image's recipe reads it (not under the host's stage directory), and the build passes."""
    b = store_with_base(tmp_path / "buildah", tmp_path / "tmp")
    recipe = image_recipe(world, sources)
    work = tmp_path / "work"
    work.mkdir()
    proc = ok(world.run(["containerfile", recipe, "--no-device", "--base", "localhost/bs-base", "-o", "ctx", "--uv",
                         world.uv], cwd=work))
    dockerfile = (work / "ctx" / "Dockerfile").read_text()
    assert 'COPY ["sources/0/", "/etc/bootstrap/fastext/"]' in dockerfile, dockerfile
    assert ".tmp-" not in dockerfile
    env, words = printed_commands(proc.stdout)["buildah"]
    built, _ = b.build((env, [str(work / "ctx") if w == "ctx" else w for w in words]), "localhost/bs-rel:1")
    ok(built)
    check_image(b.run_in, "localhost/bs-rel:1", recipe)


def test_podman_builds_the_same_context(image_tools, world, sources, tmp_path):
    """The Dockerfile is not buildah's alone: `podman build` (chroot isolation) runs it too,
    cache mount included, and the image it makes holds a working venv and the labels. Here
    fastext comes from its sdist's URL, carried in the context (the base has no libcurl)."""
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (scripts/setup.sh --test-tools)")
    b = store_with_base(tmp_path / "buildah", tmp_path / "tmp")
    recipe, commands = image_context(world, sources, tmp_path / "ctx", url=True)
    built, _ = b.build(commands["podman"], "localhost/bs-podman:1")
    ok(built)
    assert "built in" in built.stdout + built.stderr, (built.stdout + built.stderr)[-4000:]
    check_image(b.run_in, "localhost/bs-podman:1", recipe)
    assert b.labels("localhost/bs-podman:1")["io.bootstrap.recipe.name"] == "image-demo"


def test_a_docker_engine_builds_the_same_context(image_tools, world, sources, tmp_path):
    """A real Docker Engine (BuildKit) builds the context with the printed command (fastext from
    its sdist's URL, carried in the context); a rebuild that runs the RUN again finds fastext in
    the build cache on its cache mount. A step reads HF_TOKEN, given as a build secret as the
    printed command says: the run sees it (the step checks its value), and neither the build's
    output, the Dockerfile nor any layer holds it."""
    if not Path(DOCKERD).exists() or not Path("/usr/bin/docker").exists():
        pytest.skip("docker.io is not installed (scripts/setup.sh --test-tools)")
    docker = Docker(tmp_path / "docker")
    try:
        ok(docker("import", base_tarball(BARE_PACKAGES), "localhost/bs-base"))
        ctx = tmp_path / "ctx"
        recipe, commands = image_context(world, sources, ctx, url=True, secret=True)
        secret_file = tmp_path / "hf_token.txt"
        secret_file.write_text(SECRET_VALUE + "\n")
        env, words = commands["docker"]
        assert f"id=HF_TOKEN,src=FILE" in words, words
        commands["docker"] = (env, [f"id=HF_TOKEN,src={secret_file}" if w == "id=HF_TOKEN,src=FILE" else w
                                    for w in words])
        cold, cold_s = docker.build(commands["docker"], "localhost/bs-docker:1")
        ok(cold)
        log = cold.stdout + cold.stderr
        assert "built in" in log, log[-4000:]
        assert "uses-token" in log and SECRET_VALUE not in log, log[-4000:]
        assert SECRET_VALUE not in (ctx / "Dockerfile").read_text()
        check_image(docker.run_in, "localhost/bs-docker:1", recipe)
        saved = subprocess.run(["/usr/bin/docker", "save", "localhost/bs-docker:1"], capture_output=True,
                               env=docker.env, timeout=600, stdin=subprocess.DEVNULL)
        assert saved.returncode == 0 and len(saved.stdout) > 1 << 20, saved.stderr[-2000:]
        assert SECRET_VALUE.encode() not in saved.stdout  # no layer, no history entry holds it
        labels = json.loads(ok(docker("image", "inspect", "localhost/bs-docker:1")).stdout)[0]["Config"]["Labels"]
        assert labels["io.bootstrap.recipe.name"] == "image-demo"
        # BuildKit keeps the RUN's layer in its own cache (and --no-cache leaves the cache mounts
        # out too): another SOURCE_DATE_EPOCH, an input of the RUN, runs it again.
        warm, warm_s = docker.build(commands["docker"], "localhost/bs-docker:2", "--build-arg", "SOURCE_DATE_EPOCH=1")
        ok(warm)
        assert "build cache hit" in warm.stdout + warm.stderr, (warm.stdout + warm.stderr)[-4000:]
        print(f"\ndocker build: cold {cold_s:.1f} s, warm (cache mount) {warm_s:.1f} s")
    finally:
        docker.stop()


def test_the_binary_runs_on_the_bare_base_and_names_libcurl_when_a_download_needs_it(image_tools, world, tmp_path):
    """The binary needs nothing the bare base lacks; a download, which needs the system's
    libcurl, fails naming the package to install."""
    root = bare_root(tmp_path / "tmp" / "root")
    shutil.copy2(world.bootstrap, root / "usr/local/bin/bootstrap")
    assert not list(root.glob("usr/lib/*/libcurl.so*")) and not list(root.glob("usr/lib/*/libarchive.so*"))
    version = ok(subprocess.run([CHROOT, str(root), "bootstrap", "--version"], capture_output=True, text=True))
    assert version.stdout == ok(subprocess.run([str(world.bootstrap), "--version"], capture_output=True, text=True)).stdout
    (root / "tmp/dl.toml").write_text(
        'schema = 1\nname = "dl"\n[venv]\npath = "/tmp/v"\npython = "/usr/bin/python3"\ninstaller = "pip"\n'
        '[[step]]\nid = "venv"\nkind = "venv"\n'
        '[[step]]\nid = "src"\nkind = "build"\nabi_packages = []\n'
        'source = { url = "http://127.0.0.1:9/src-1.0.tar.gz", sha256 = "' + "0" * 64 + '" }\n')
    proc = subprocess.run([CHROOT, str(root), "bootstrap", "run", "/tmp/dl.toml"], capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "NO_COLOR": "1"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "libcurl.so.4" in proc.stderr and "apt-get install libcurl4" in proc.stderr, proc.stderr
    assert "attempt" not in proc.stdout + proc.stderr  # not retried: it cannot pass


def test_a_context_carries_the_local_project_a_sync_step_reads(world, tmp_path):
    """Every local path the recipe reads is in the context where the image's recipe reads it:
    here a sync step's project, named by a variable the build is given."""
    project = tmp_path / "checkout"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "1.0"\n')
    (project / "uv.lock").write_text("version = 1\n")
    (project / "pkg" / "__init__.py").write_text("")
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    recipe = tmp_path / "sync.toml"
    recipe.write_text('schema = 1\nname = "sync-image"\n[vars]\nproj = "{env.BS_PROJECT}"\n'
                      '[venv]\npath = "/tmp/unused"\npython = "3.11"\ninstaller = "uv"\n'
                      '[[step]]\nid = "venv"\nkind = "venv"\n'
                      '[[step]]\nid = "deps"\nkind = "sync"\nproject = "{vars.proj}"\nargs = ["--inexact"]\n')
    missing = world.run(["containerfile", recipe, "--arch", "9.0", "-o", tmp_path / "ctx0", "--uv", world.uv])
    assert missing.returncode == 2
    assert f"{recipe}:4:" in missing.stderr and "BS_PROJECT" in missing.stderr
    assert not (tmp_path / "ctx0").exists()

    proc = ok(world.run(["containerfile", recipe, "--arch", "9.0", "-o", tmp_path / "ctx", "--uv", world.uv],
                        env={"BS_PROJECT": str(project)}))
    ctx = tmp_path / "ctx"
    dockerfile = (ctx / "Dockerfile").read_text()
    assert f'COPY ["sources/0/", "{project}/"]' in dockerfile
    assert f"BS_PROJECT={project}" in dockerfile
    assert (ctx / "sources/0/pyproject.toml").read_text() == (project / "pyproject.toml").read_text()
    assert (ctx / "sources/0/pkg/__init__.py").exists() and not (ctx / "sources/0/.git").exists()
    assert f"copied {project} -> {project}" in proc.stdout and "3 files" in proc.stdout, proc.stdout


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
    _, commands = image_context(world, sources, ctx)
    layers, trees, members = [], [], []
    for n in (1, 2):
        # A store and cache-mount directory of its own per build: nothing is shared.
        b = store_with_base(tmp_path / f"buildah{n}", tmp_path / f"tmp{n}")
        ok(b.build(commands["buildah"], f"localhost/bs-repro:{n}", "--timestamp", "0")[0])
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
    assert not any(re.fullmatch(r"/opt/venv/\.bootstrap/(logs|packages\.cache|python\.facts)", p) for p in kept)
    assert kept["/opt/venv/.bootstrap/lock"] == hashlib.sha256(b"").hexdigest()  # emptied, kept
    assert not any(p.endswith("/uv_cache.json") for p in kept)
