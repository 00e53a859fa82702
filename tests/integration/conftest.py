"""Fixtures for bootstrap's integration tests (offline "test world").

Fixtures:
  wheelhouse     (session) dir with <group>/*.whl built by testworld/make_wheels.py
  index          (function) a running testworld/index_server.py on a free loopback port;
                 .url(group="main") -> "http://127.0.0.1:PORT/<group>/simple",
                 .set_faults(rules), .faults(), .stats(), .count(regex), .reset(), .log_text()
  index_factory  (function) start more servers: index_factory(root=None, faults=None,
                 cache_max_age=None) -> IndexServer
  uv_bin         path to uv ($BOOTSTRAP_UV or `uv` on PATH), skips the test if missing
  bootstrap_bin  path to bootstrap ($BOOTSTRAP_BIN or <repo>/build/bootstrap), skips if missing
  uv_cache       a fresh, empty directory for UV_CACHE_DIR
  clean_env      the hermetic_env(overrides=None) function below
  run_bootstrap  callable run_bootstrap(args, env=None, timeout=120, cwd=None)
                 -> subprocess.CompletedProcess (text stdout/stderr)
  sources        (session) offline-buildable source package from testworld/make_sources.py:
                 dict with "tree", "tarball", "tarball_url", "sha256", "top" (tarball's top
                 dir), "name", "version", "marker", "repo", "repo_url" (file://),
                 "commits" [1.0.0, 1.1.0], "tags", "markers", "repo_versions" (repo keys
                 None/empty when git is missing); built once per session: copy the tree
                 before changing it
  tiny_extensions (session) tests/fixtures/tiny_kernel.cu built by the host's nvcc as shared
                 libraries: {"80": sm_80 SASS only, "90": sm_90 only}; skips without nvcc

The environment given to bootstrap is made hermetic (see hermetic_env): the
caller's PIP_* / UV_* / VIRTUAL_ENV / CONDA_PREFIX variables are dropped, pip and
uv config files are ignored, and loopback is exempt from any proxy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TESTWORLD = REPO / "testworld"
MAKE_WHEELS = TESTWORLD / "make_wheels.py"
INDEX_SERVER = TESTWORLD / "index_server.py"

# Loopback control requests must never go through a proxy.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

_DROPPED_PREFIXES = ("PIP_", "UV_")
_DROPPED_VARS = ("VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHONHOME",
                 "PYTHONPATH", "PYTHONUSERBASE")


def hermetic_env(overrides: dict | None = None) -> dict:
    """os.environ minus PIP_*/UV_*/virtualenv variables, plus settings that keep uv from
    reading uv.toml and pip from reading user config (PIP_CONFIG_FILE=/dev/null; pip may
    still read /etc/pip.conf); `overrides` wins (value None deletes)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(_DROPPED_PREFIXES) and k not in _DROPPED_VARS}
    env.update({
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
        "UV_NO_CONFIG": "1",
        "UV_NO_PROGRESS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    no_proxy = [p for p in env.get("NO_PROXY", env.get("no_proxy", "")).split(",") if p]
    for host in ("127.0.0.1", "localhost"):
        if host not in no_proxy:
            no_proxy.append(host)
    env["NO_PROXY"] = env["no_proxy"] = ",".join(no_proxy)
    for k, v in (overrides or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


# --------------------------------------------------------------------------- wheelhouse

def make_wheelhouse(out: Path, data: str | Path | None = None) -> Path:
    """testworld/make_wheels.py into `out` (`out/<group>/*.whl`): the default packages, or those
    of `data` (a packages.toml path, or its text, written beside `out`)."""
    args = [sys.executable, str(MAKE_WHEELS), str(out)]
    if isinstance(data, str):
        path = out.parent / f"{out.name}-packages.toml"
        path.write_text(data)
        data = path
    if data is not None:
        args += ["--data", str(data)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        pytest.fail(f"make_wheels.py failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return out


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    return make_wheelhouse(tmp_path_factory.mktemp("wheelhouse"))


# --------------------------------------------------------------------------- index server

class IndexServer:
    """A running testworld/index_server.py process."""

    def __init__(self, root: Path, workdir: Path, faults: list | None = None,
                 cache_max_age: int | None = None, start_timeout: float = 10.0):
        self.root = Path(root)
        self.port_file = workdir / "index.port"
        self.log_path = workdir / "index.log"
        if self.port_file.exists():
            self.port_file.unlink()
        cmd = [sys.executable, str(INDEX_SERVER), "--root", str(self.root),
               "--host", "127.0.0.1", "--port", "0", "--port-file", str(self.port_file)]
        if faults:
            faults_file = workdir / "index.faults.json"
            faults_file.write_text(json.dumps(faults))
            cmd += ["--faults", str(faults_file)]
        if cache_max_age is not None:
            cmd += ["--cache-max-age", str(cache_max_age)]
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + start_timeout
        while True:
            if self.port_file.exists():
                text = self.port_file.read_text().strip()
                if text:
                    self.port = int(text)
                    break
            if self.proc.poll() is not None:
                self._log.close()
                raise RuntimeError(f"index server exited with {self.proc.returncode}:\n"
                                   f"{self.log_text()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"index server did not start within {start_timeout}s:\n"
                                   f"{self.log_text()}")
            time.sleep(0.02)
        self.base_url = f"http://127.0.0.1:{self.port}"

    # ---- URLs
    def url(self, group: str = "main") -> str:
        return f"{self.base_url}/{group}/simple"

    # ---- control API
    def _call(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with _OPENER.open(req, timeout=10) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"{method} {path}: {e.code} {e.read().decode(errors='replace')}")

    def set_faults(self, rules: list) -> list:
        """Replace the fault rules (re-arms every rule's `times`)."""
        return self._call("POST", "/_faults", rules)

    def clear_faults(self) -> None:
        self.set_faults([])

    def faults(self) -> list:
        """Current rules, each with "applied": how often it fired."""
        return self._call("GET", "/_faults")

    def stats(self) -> dict:
        """{request path: count} since start or the last reset()."""
        return self._call("GET", "/_stats")

    def count(self, pattern: str = "") -> int:
        """Number of requests whose path matches the regex (re.search)."""
        rx = re.compile(pattern)
        return sum(n for p, n in self.stats().items() if rx.search(p))

    def reset(self) -> None:
        """Clear request counters (fault rules and their counters are kept)."""
        self._call("POST", "/_reset", {})

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        if not self._log.closed:
            self._log.close()


@pytest.fixture
def index_factory(wheelhouse, tmp_path_factory):
    servers: list[IndexServer] = []

    def start(root: Path | None = None, faults: list | None = None,
              cache_max_age: int | None = None) -> IndexServer:
        srv = IndexServer(root or wheelhouse, tmp_path_factory.mktemp("index"),
                          faults=faults, cache_max_age=cache_max_age)
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.stop()


@pytest.fixture
def index(index_factory) -> IndexServer:
    return index_factory()


# --------------------------------------------------------------------------- binaries

@pytest.fixture(scope="session")
def uv_bin() -> Path:
    uv = os.environ.get("BOOTSTRAP_UV") or shutil.which("uv")
    if not uv or not Path(uv).is_file() or not os.access(uv, os.X_OK):
        pytest.skip(f"uv not found (set BOOTSTRAP_UV or put uv on PATH; got {uv!r})")
    return Path(uv)


@pytest.fixture(scope="session")
def bootstrap_bin() -> Path:
    path = Path(os.environ.get("BOOTSTRAP_BIN") or REPO / "build" / "bootstrap")
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.skip(f"bootstrap binary not found at {path} (build it or set BOOTSTRAP_BIN)")
    return path


@pytest.fixture(scope="session")
def clean_env():
    """The hermetic_env function, for tests that spawn uv/pip/python themselves."""
    return hermetic_env


@pytest.fixture
def uv_cache(tmp_path) -> Path:
    d = tmp_path / "uv-cache"
    d.mkdir()
    return d


@pytest.fixture
def run_bootstrap(bootstrap_bin):
    """run_bootstrap(args, env=None, timeout=120, cwd=None) -> CompletedProcess.

    `env` is applied on top of hermetic_env() (None values delete a variable).
    Never raises on a non-zero exit; a timeout raises subprocess.TimeoutExpired."""

    def run(args, env: dict | None = None, timeout: float = 120,
            cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
        cmd = [str(bootstrap_bin), *[str(a) for a in args]]
        return subprocess.run(cmd, env=hermetic_env(env), cwd=cwd, timeout=timeout,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True)

    return run


# --------------------------------------------------------------------------- bootstrap runs

class World:
    """One test's sandbox for running bootstrap: its own directory (recipe files, the venv),
    a fresh UV_CACHE_DIR, the index, and an environment where `uv` is on PATH first."""

    def __init__(self, root: Path, index: IndexServer, uv: Path, bootstrap: Path,
                 uv_cache: Path):
        self.root = root
        self.index = index
        self.uv = uv
        self.bootstrap = bootstrap
        self.uv_cache = uv_cache
        self.venv = root / "venv"
        self.env = {
            "UV_CACHE_DIR": str(uv_cache),
            "UV_PYTHON_DOWNLOADS": "never",
            "PATH": f"{uv.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "BOOTSTRAP_BACKOFF_BASE": "0.1",
            "NO_COLOR": "1",
        }
        # Offline for real: anything but loopback (exempt through NO_PROXY) goes to a dead
        # proxy, so a test that would reach PyPI by mistake fails instead of passing online.
        for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            self.env[var] = "http://127.0.0.1:9"

    def full_env(self, extra: dict | None = None) -> dict:
        return hermetic_env({**self.env, **(extra or {})})

    def cmd(self, args) -> list[str]:
        return [str(self.bootstrap), *[str(a) for a in args]]

    def run(self, args, env: dict | None = None, timeout: float = 120,
            cwd=None) -> subprocess.CompletedProcess:
        """Run bootstrap (never raises on a non-zero exit)."""
        return subprocess.run(self.cmd(args), env=self.full_env(env), cwd=cwd or self.root,
                              timeout=timeout, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True)

    def popen(self, args, env: dict | None = None, **kw) -> subprocess.Popen:
        return subprocess.Popen(self.cmd(args), env=self.full_env(env), cwd=self.root,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **kw)

    def run_json(self, args, **kw) -> tuple[subprocess.CompletedProcess, dict]:
        proc = self.run([*args, "--json"], **kw)
        try:
            doc = json.loads(proc.stdout)
        except ValueError:
            raise AssertionError(f"stdout is not JSON (rc={proc.returncode}):\n{proc.stdout}\n"
                                 f"stderr:\n{proc.stderr}")
        return proc, doc

    def python(self, code: str, venv: Path | None = None) -> subprocess.CompletedProcess:
        py = (venv or self.venv) / "bin" / "python"
        return subprocess.run([str(py), "-c", code], env=self.full_env(), capture_output=True,
                              text=True, timeout=60)

    def version_of(self, dist: str, venv: Path | None = None) -> str | None:
        r = self.python("import importlib.metadata as m, sys\n"
                        "try: print(m.version(sys.argv[1]))\n"
                        "except m.PackageNotFoundError: print('-')\n".replace(
                            "sys.argv[1]", repr(dist)), venv)
        assert r.returncode == 0, r.stderr
        v = r.stdout.strip()
        return None if v == "-" else v

    def uv_pip(self, *args, venv: Path | None = None) -> subprocess.CompletedProcess:
        py = (venv or self.venv) / "bin" / "python"
        r = subprocess.run([str(self.uv), "pip", *args[:1], "--python", str(py), *args[1:]],
                           env=self.full_env(), capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return r

    def journal(self, venv: Path | None = None) -> dict:
        return json.loads(((venv or self.venv) / ".bootstrap" / "journal.json").read_text())


@pytest.fixture
def world(tmp_path, index, uv_bin, bootstrap_bin, uv_cache) -> World:
    root = tmp_path / "w"
    root.mkdir()
    return World(root, index, uv_bin, bootstrap_bin, uv_cache)


# --------------------------------------------------------------------------- source packages

MAKE_SOURCES = TESTWORLD / "make_sources.py"


@pytest.fixture(scope="session")
def sources(tmp_path_factory) -> dict:
    """testworld/make_sources.py's JSON (all paths absolute strings), built once."""
    out = tmp_path_factory.mktemp("sources")
    proc = subprocess.run([sys.executable, str(MAKE_SOURCES), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        pytest.fail(f"make_sources.py failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout)


NVCC_CANDIDATES = [shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"]


@pytest.fixture(scope="session")
def tiny_extensions(tmp_path_factory) -> dict[str, Path]:
    """The tiny CUDA kernel built by nvcc as shared libraries: {"80": sm_80 SASS, "90": sm_90}."""
    nvcc = next((Path(c) for c in NVCC_CANDIDATES if c and Path(c).exists()), None)
    if nvcc is None:
        pytest.skip("nvcc not found (PATH, /usr/local/cuda/bin)")
    out = tmp_path_factory.mktemp("tinyext")
    built = {}
    for sm in ("80", "90"):
        so = out / f"tinyext_sm{sm}.so"
        subprocess.run([str(nvcc), "-shared", "-Xcompiler", "-fPIC", "-gencode",
                        f"arch=compute_{sm},code=sm_{sm}", "-o", str(so),
                        str(REPO / "tests" / "fixtures" / "tiny_kernel.cu")],
                       check=True, capture_output=True, timeout=300)
        built[sm] = so
    return built
