#!/usr/bin/env python3
"""Write Python *source* packages that build offline, for bootstrap's `build` steps.

    python3 testworld/make_sources.py --out DIR [--name fastext] [--marker TEXT]

writes

    DIR/fastext/                 source tree (pyproject.toml + in-tree PEP 517 backend)
    DIR/fastext-1.0.0.tar.gz     the same tree as a tarball with one top directory
    DIR/repo/                    git repository, two commits (1.0.0, then 1.1.0), tags
                                 v1.0.0 / v1.1.0, branch main; fetch-by-sha allowed
                                 (skipped, "repo": null, when git is not installed)

and prints JSON: {"name", "version", "tree", "tarball", "tarball_url", "sha256", "top",
"repo", "repo_url", "commits": [sha_1.0.0, sha_1.1.0], "tags", "markers"}.

The project's pyproject.toml declares

    [build-system]
    requires = []
    build-backend = "fastext_backend"
    backend-path = ["_backend"]

so building it needs no index at all, with or without build isolation.  The in-tree
backend (standard library only) implements get_requires_for_build_wheel/_sdist,
prepare_metadata_for_build_wheel, build_wheel and build_sdist.  build_wheel really
compiles the C extension `<name>._native` (function `answer()` -> 42) with $CC (default
`cc`, split like a shell would; $CFLAGS appended) against the headers of the interpreter
running the backend, and tags the wheel for that interpreter (e.g. cp311-cp311-linux_x86_64).
`<name>/__init__.py` exposes `answer` and `BUILD_INFO`, loaded from `<name>/build_info.json`
written at build time: TORCH_CUDA_ARCH_LIST, MAX_JOBS, APEX_CPP_EXT, APEX_CUDA_EXT,
FASTEXT_FLAVOR (null when unset), "marker", "python" (sys.version), "executable",
"prefix", "base_prefix", "name", "version", "required_module" (its paths with a temporary
directory's random name written as `<tmp>`, so the same build gives the same wheel).

Environment variables read by the backend (all optional):

    FASTEXT_BUILD_LOG=FILE        build_wheel appends "<pid> <name> <version>\\n" (O_APPEND,
                                  one write; before any sleep or failure) per call
    FASTEXT_BUILD_SECONDS=S       build_wheel sleeps S seconds (float) before compiling
    FASTEXT_FAIL=anything         build_wheel raises RuntimeError("fastext_backend: ...")
                                  after logging and sleeping
    FASTEXT_REQUIRE_MODULE=MOD    build_wheel imports MOD (ImportError if the build
                                  environment lacks it); name and __file__ go to BUILD_INFO
    FASTEXT_PURE=anything         build_wheel writes `<name>/_native.py` (answer() -> 42) instead
                                  of compiling: a build on a machine without a C compiler
    FASTEXT_BUILD_REQUIRES=A,B    get_requires_for_build_wheel returns ["A", "B"] (dynamic
                                  build dependencies; an isolated build then needs an index)
    CC, CFLAGS                    compiler command and extra flags

Everything is deterministic: fixed tar/zip timestamps and owners, fixed git author,
committer and dates (so the commit ids are the same on every machine).

Standard library only (Python >= 3.8 for the backend, >= 3.11 for this script).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

TAR_MTIME = 1704067200  # 2024-01-01T00:00:00Z
GIT_DATE = "2024-01-01T00:00:00+0000"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "testworld", "GIT_AUTHOR_EMAIL": "testworld@example.invalid",
    "GIT_COMMITTER_NAME": "testworld", "GIT_COMMITTER_EMAIL": "testworld@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
}
_NAME_OK = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


# --------------------------------------------------------------------- the backend

BACKEND = r'''"""In-tree PEP 517 backend of a testworld source package (standard library only).

Written by testworld/make_sources.py; see that file for the environment variables.
"""

import base64
import gzip
import hashlib
import importlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
TAR_MTIME = 1704067200
ENV_KEYS = ("TORCH_CUDA_ARCH_LIST", "MAX_JOBS", "APEX_CPP_EXT", "APEX_CUDA_EXT",
            "FASTEXT_FLAVOR")
SDIST_FILES = (".gitignore", "pyproject.toml", "README.txt", "_backend/fastext_backend.py",
               "src/native.c")


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    out = {}
    for key in ("name", "version", "marker", "package"):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % key, text, re.M)
        out[key] = m.group(1) if m else ""
    return out


def _dist(name):
    return re.sub(r"[-_.]+", "_", name).lower()


def _tag():
    if sys.implementation.name != "cpython":
        raise RuntimeError("fastext_backend: only CPython is supported, not %s"
                           % sys.implementation.name)
    py = "cp%d%d" % sys.version_info[:2]
    abi = py + getattr(sys, "abiflags", "")
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return "%s-%s-%s" % (py, abi, plat)


def _metadata(p):
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: testworld source package with a C extension (%s)\n"
            % (p["name"], p["version"], p["marker"] or "no marker")).encode()


def _wheel_file(tag):
    return ("Wheel-Version: 1.0\nGenerator: fastext_backend 1\nRoot-Is-Purelib: false\n"
            "Tag: %s\n" % tag).encode()


def _record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


# A temporary directory's random name: uv's isolated build env (`.tmpAbC123` under its cache),
# Python's tempfile.mkdtemp (`tmpk3j_x9qa`), pip's (`pip-build-env-k3jx9qa1`).
_TEMP_NAME = re.compile(r"^(\.?tmp[A-Za-z0-9_]{6,}|pip-[a-z-]+-[a-z0-9_]{8})$")


def _stable_path(path):
    """`path` with a temporary directory's random name written as `<tmp>`: BUILD_INFO says
    where the backend ran (the target venv, or a throw-away build env) without making two
    builds of the same inputs differ."""
    if not path:
        return path
    return "/".join("<tmp>" if _TEMP_NAME.match(part) else part for part in path.split("/"))


def _log(msg):
    sys.stderr.write("fastext_backend[%d]: %s\n" % (os.getpid(), msg))
    sys.stderr.flush()


# ---- PEP 517 hooks

def get_requires_for_build_wheel(config_settings=None):
    extra = os.environ.get("FASTEXT_BUILD_REQUIRES", "")
    return [r.strip() for r in extra.split(",") if r.strip()]


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    p = _project()
    dist_info = "%s-%s.dist-info" % (_dist(p["name"]), p["version"])
    d = os.path.join(metadata_directory, dist_info)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "wb") as f:
        f.write(_metadata(p))
    with open(os.path.join(d, "WHEEL"), "wb") as f:
        f.write(_wheel_file(_tag()))
    return dist_info


def _compile(ext_suffix):
    """The C extension `_native`, compiled with $CC for the running interpreter: its bytes."""
    include = sysconfig.get_paths()["include"]
    tmp = tempfile.mkdtemp(prefix="fastext-build-")
    try:
        so = os.path.join(tmp, "_native" + ext_suffix)
        cc = shlex.split(os.environ.get("CC") or "cc")
        cmd = cc + ["-shared", "-fPIC", "-O2", "-I", include,
                    os.path.join(ROOT, "src", "native.c"), "-o", so]
        cmd += shlex.split(os.environ.get("CFLAGS", ""))
        _log("compiling: %s" % " ".join(cmd))
        t0 = time.monotonic()
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True)
        if proc.returncode != 0:
            raise RuntimeError("fastext_backend: compiler failed (exit %d): %s\n%s"
                               % (proc.returncode, " ".join(cmd), proc.stdout))
        _log("compiled in %.2f s" % (time.monotonic() - t0))
        with open(so, "rb") as f:
            return f.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    name, version, pkg = p["name"], p["version"], p["package"]
    log_path = os.environ.get("FASTEXT_BUILD_LOG")
    if log_path:
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, ("%d %s %s\n" % (os.getpid(), name, version)).encode())
        finally:
            os.close(fd)
    seconds = os.environ.get("FASTEXT_BUILD_SECONDS")
    if seconds:
        _log("sleeping %s s (FASTEXT_BUILD_SECONDS)" % seconds)
        time.sleep(float(seconds))
    if os.environ.get("FASTEXT_FAIL"):
        raise RuntimeError("fastext_backend: FASTEXT_FAIL=%r is set, refusing to build %s %s"
                           % (os.environ["FASTEXT_FAIL"], name, version))
    required = None
    mod_name = os.environ.get("FASTEXT_REQUIRE_MODULE")
    if mod_name:
        try:
            mod = importlib.import_module(mod_name)
        except ImportError as e:
            raise ImportError("fastext_backend: FASTEXT_REQUIRE_MODULE=%s cannot be imported "
                              "by %s (sys.prefix %s): %s"
                              % (mod_name, sys.executable, sys.prefix, e)) from e
        required = {"name": mod_name, "file": _stable_path(getattr(mod, "__file__", None))}

    tag = _tag()
    if os.environ.get("FASTEXT_PURE"):
        # No compiler on the machine (a bare image): the same answer from Python.
        ext_suffix = ".py"
        so_bytes = b"def answer():\n    return 42\n"
        _log("FASTEXT_PURE: _native.py instead of a compiled extension")
    else:
        ext_suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        so_bytes = _compile(ext_suffix)

    info = {k: os.environ.get(k) for k in ENV_KEYS}
    info.update({"marker": p["marker"], "python": sys.version,
                 "executable": _stable_path(sys.executable), "prefix": _stable_path(sys.prefix),
                 "base_prefix": _stable_path(sys.base_prefix), "name": name,
                 "version": version, "required_module": required})
    with open(os.path.join(ROOT, pkg, "__init__.py"), "rb") as f:
        init_py = f.read()
    dist_info = "%s-%s.dist-info" % (_dist(name), version)
    files = [
        ("%s/__init__.py" % pkg, init_py),
        ("%s/_native%s" % (pkg, ext_suffix), so_bytes),
        ("%s/build_info.json" % pkg, (json.dumps(info, indent=1, sort_keys=True) + "\n").encode()),
        ("%s/METADATA" % dist_info, _metadata(p)),
        ("%s/WHEEL" % dist_info, _wheel_file(tag)),
        ("%s/top_level.txt" % dist_info, (pkg + "\n").encode()),
    ]
    record = "".join("%s,%s,%d\n" % (arc, _record_hash(data), len(data)) for arc, data in files)
    files.append(("%s/RECORD" % dist_info, (record + "%s/RECORD,,\n" % dist_info).encode()))
    wheel_name = "%s-%s-%s.whl" % (_dist(name), version, tag)
    os.makedirs(wheel_directory, exist_ok=True)
    target = os.path.join(wheel_directory, wheel_name)
    tmp_target = target + ".tmp%d" % os.getpid()
    with zipfile.ZipFile(tmp_target, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc, data in files:
            zi = zipfile.ZipInfo(arc, ZIP_DATE)
            zi.external_attr = (0o755 if arc.endswith(ext_suffix) else 0o644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, data)
    os.replace(tmp_target, target)
    _log("built %s" % wheel_name)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = "%s-%s" % (_dist(p["name"]), p["version"])
    members = [(rel, open(os.path.join(ROOT, rel), "rb").read())
               for rel in SDIST_FILES + ("%s/__init__.py" % p["package"],)]
    members.append(("PKG-INFO", _metadata(p)))
    os.makedirs(sdist_directory, exist_ok=True)
    target = os.path.join(sdist_directory, base + ".tar.gz")
    with open(target, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=TAR_MTIME) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tf:
                for rel, data in sorted(members):
                    ti = tarfile.TarInfo("%s/%s" % (base, rel))
                    ti.size, ti.mtime, ti.mode = len(data), TAR_MTIME, 0o644
                    tf.addfile(ti, io.BytesIO(data))
    return base + ".tar.gz"
'''

NATIVE_C = r'''/* testworld source package: a tiny CPython extension module. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *answer(PyObject *self, PyObject *noargs)
{
    (void)self; (void)noargs;
    return PyLong_FromLong(42);
}

static PyMethodDef methods[] = {
    {"answer", answer, METH_NOARGS, "Return 42 (computed in C)."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "fastext's compiled part", -1, methods,
    NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__native(void)
{
    return PyModule_Create(&module);
}
'''

INIT_PY = '''"""{name} {version}: testworld source package (marker: {marker!r})."""

import json as _json
import os as _os

from ._native import answer

__version__ = {version!r}

with open(_os.path.join(_os.path.dirname(__file__), "build_info.json"), encoding="utf-8") as _f:
    BUILD_INFO = _json.load(_f)

__all__ = ["answer", "BUILD_INFO", "__version__"]
'''

PYPROJECT = '''[build-system]
requires = [{requires}]
build-backend = "fastext_backend"
backend-path = ["_backend"]

[project]
name = "{name}"
version = "{version}"
description = "testworld source package with a C extension"
requires-python = ">=3.8"

[tool.fastext]
package = "{package}"
marker = "{marker}"
'''

README = '''{name} {version} - generated by bootstrap's testworld/make_sources.py.
Build offline: uv build --wheel . / pip wheel --no-deps --no-build-isolation .
'''


# --------------------------------------------------------------------- writers

def write_source_tree(dest: Path, name: str = "fastext", version: str = "1.0.0",
                      marker: str = "", requires: tuple[str, ...] | list[str] = ()) -> Path:
    """Write (or overwrite in place) the source tree of project `name` into `dest`.

    `requires` goes to [build-system] requires (default empty: no index needed).
    Returns `dest`."""
    if not _NAME_OK.match(name):
        raise ValueError(f"name must be a Python identifier-like project name, got {name!r}")
    if '"' in marker or "\\" in marker or "\n" in marker:
        raise ValueError(f"marker must not contain quotes, backslashes or newlines: {marker!r}")
    dest = Path(dest)
    package = name.lower()
    files = {
        "pyproject.toml": PYPROJECT.format(
            name=name, version=version, marker=marker, package=package,
            requires=", ".join(json.dumps(r) for r in requires)),
        "README.txt": README.format(name=name, version=version),
        ".gitignore": "__pycache__/\n*.pyc\n/build/\n/dist/\n",
        "_backend/fastext_backend.py": BACKEND,
        "src/native.c": NATIVE_C,
        f"{package}/__init__.py": INIT_PY.format(name=name, version=version, marker=marker),
    }
    for rel, text in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode()
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
        path.chmod(0o644)
    return dest


def _tree_members(src_tree: Path) -> list[Path]:
    skip = {".git", "__pycache__"}
    out = []
    for p in sorted(src_tree.rglob("*")):
        rel = p.relative_to(src_tree)
        if any(part in skip for part in rel.parts):
            continue
        out.append(p)
    return out


def make_tarball(src_tree: Path, out: Path, top: str = "fastext-1.0.0") -> str:
    """Write `src_tree` (without .git/__pycache__) as a deterministic tar.gz whose entries
    all live under `top/`; return the tarball's sha256 (hex)."""
    src_tree, out = Path(src_tree), Path(out)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=TAR_MTIME) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tf:
            def add(arcname: str, path: Path | None):
                ti = tarfile.TarInfo(arcname)
                ti.mtime, ti.uid, ti.gid, ti.uname, ti.gname = TAR_MTIME, 0, 0, "", ""
                if path is None or path.is_dir():
                    ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                    tf.addfile(ti)
                else:
                    data = path.read_bytes()
                    ti.size = len(data)
                    ti.mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
                    tf.addfile(ti, io.BytesIO(data))

            add(top, None)
            for p in _tree_members(src_tree):
                if p.is_symlink() or not (p.is_dir() or p.is_file()):
                    continue
                add(f"{top}/{p.relative_to(src_tree).as_posix()}", p)
    data = buf.getvalue()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, out)
    return hashlib.sha256(data).hexdigest()


def _git(args: list[str], cwd: Path, date: str = GIT_DATE) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed ({proc.returncode}):\n"
                           f"{proc.stdout}{proc.stderr}")
    return proc.stdout.strip()


def make_git_repo(dest: Path, name: str = "fastext",
                  versions: tuple[str, str] = ("1.0.0", "1.1.0"),
                  markers: tuple[str, str] = ("commit-1", "commit-2")) -> dict:
    """Create a non-bare git repository at `dest` (must not exist or be empty) holding the
    source tree in two commits on branch main: versions[0]/markers[0], then
    versions[1]/markers[1]; lightweight tags v<version>.  Fetching any commit by sha
    (e.g. `git fetch --depth 1 file://... <sha>`) is allowed.  Returns
    {"path", "url", "commits": [sha1, sha2], "tags": {tag: sha}, "versions", "markers"}."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} exists and is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    _git(["init", "-q", "-b", "main", "."], dest)
    for key, value in (("uploadpack.allowAnySHA1InWant", "true"),
                       ("uploadpack.allowReachableSHA1InWant", "true"),
                       ("uploadpack.allowTipSHA1InWant", "true"),
                       ("commit.gpgsign", "false"), ("tag.gpgsign", "false"),
                       ("core.autocrlf", "false"), ("core.fileMode", "true")):
        _git(["config", key, value], dest)
    commits, tags = [], {}
    for i, (version, marker) in enumerate(zip(versions, markers)):
        write_source_tree(dest, name=name, version=version, marker=marker)
        _git(["add", "-A"], dest)
        date = f"2024-01-0{i + 1}T00:00:00+0000"
        _git(["commit", "-q", "--no-verify", "-m", f"{name} {version} ({marker})"], dest, date)
        sha = _git(["rev-parse", "HEAD"], dest)
        _git(["tag", f"v{version}"], dest)
        commits.append(sha)
        tags[f"v{version}"] = sha
    return {"path": str(dest.resolve()), "url": dest.resolve().as_uri(), "commits": commits,
            "tags": tags, "versions": list(versions), "markers": list(markers)}


def make_all(out: Path, name: str = "fastext", version: str = "1.0.0",
             marker: str = "tree") -> dict:
    """Write out/<name> (tree), out/<name>-<version>.tar.gz and out/repo (when git is
    installed); return the JSON-able description printed by the CLI."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    tree = write_source_tree(out / name, name=name, version=version, marker=marker)
    top = f"{name}-{version}"
    tarball = out / f"{top}.tar.gz"
    sha = make_tarball(tree, tarball, top=top)
    doc = {"name": name, "version": version, "marker": marker, "tree": str(tree),
           "tarball": str(tarball), "tarball_url": tarball.as_uri(), "sha256": sha,
           "top": top, "repo": None, "repo_url": None, "commits": [], "tags": {},
           "markers": []}
    if shutil.which("git"):
        repo_dir = out / "repo"
        if repo_dir.exists():
            shutil.rmtree(repo_dir)
        repo = make_git_repo(repo_dir, name=name)
        doc.update(repo=repo["path"], repo_url=repo["url"], commits=repo["commits"],
                   tags=repo["tags"], markers=repo["markers"],
                   repo_versions=repo["versions"])
    return doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Write offline-buildable source packages")
    ap.add_argument("--out", type=Path, required=True, help="output directory")
    ap.add_argument("--name", default="fastext")
    ap.add_argument("--version", default="1.0.0")
    ap.add_argument("--marker", default="tree", help="marker of the tree and tarball")
    args = ap.parse_args(argv)
    try:
        doc = make_all(args.out, name=args.name, version=args.version, marker=args.marker)
    except (OSError, RuntimeError, ValueError) as e:
        print(f"make_sources: {e}", file=sys.stderr)
        return 1
    print(json.dumps(doc, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
