"""Deterministic sdists for the integration tests: each carries its own PEP 517 backend
(`backend-path = ["."]`, no build requirement fetched), so uv builds it offline with no compiler.

    sha = make_sdist(group / "tinysd-0.1.0.tar.gz", "tinysd", "0.1.0")

`module` is a Python expression evaluated by the backend inside build_wheel (so it may import
the build environment's packages, e.g. `__import__("demo_torch").__version__`): its value, a
str, is the package's `__init__.py`. `pure=False` tags the wheel for the building interpreter
(`cp311-cp311-linux_x86_64`), as a compiled extension's would be. `requires` is the
[build-system] requires list (only declared: the backend asks for nothing). `log`: a file the
backend appends the package name to on every build_wheel, so tests count real builds.
`fresh_node(world, name)`: the environment of a second node that builds them (its own home).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from pathlib import Path

BACKEND = '''
import base64, hashlib, os, sys, sysconfig, zipfile

NAME, VERSION, PURE, LOG = {name!r}, {version!r}, {pure!r}, {log!r}


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if LOG:
        with open(LOG, "a") as f:
            f.write(NAME + "\\n")
    module = {module}
    if PURE:
        tag = "py3-none-any"
    else:
        impl = "cp%d%d" % sys.version_info[:2]
        tag = impl + "-" + impl + "-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
    pkg, info = NAME.replace("-", "_"), NAME.replace("-", "_") + "-" + VERSION + ".dist-info"
    files = {{pkg + "/__init__.py": module.encode(),
             info + "/METADATA": ("Metadata-Version: 2.2\\nName: %s\\nVersion: %s\\n" % (NAME, VERSION)).encode(),
             info + "/WHEEL": ("Wheel-Version: 1.0\\nGenerator: tiny\\nRoot-Is-Purelib: %s\\nTag: %s\\n"
                               % ("true" if PURE else "false", tag)).encode()}}
    record = ["%s,sha256=%s,%d" % (k, base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b"=").decode(),
                                   len(v)) for k, v in files.items()]
    files[info + "/RECORD"] = ("\\n".join(record + [info + "/RECORD,,"]) + "\\n").encode()
    name = "%s-%s-%s.whl" % (pkg, VERSION, tag)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for k, v in files.items():
            z.writestr(zipfile.ZipInfo(k, (2020, 1, 1, 0, 0, 0)), v)
    return name
'''


def make_sdist(path: Path, name: str, version: str, *, module: str = '"ANSWER = 42\\n"', pure: bool = True,
               requires: list[str] | None = None, log: Path | None = None) -> str:
    """Write the sdist `path` (a gzipped tar with fixed mtimes, byte-for-byte the same for the same
    arguments); returns its sha256."""
    requires_toml = "[" + ", ".join(f'"{r}"' for r in requires or []) + "]"
    pyproject = (f'[build-system]\nrequires = {requires_toml}\nbuild-backend = "tiny_backend"\n'
                 f'backend-path = ["."]\n\n[project]\nname = "{name}"\nversion = "{version}"\n')
    pkg_info = f"Metadata-Version: 2.2\nName: {name}\nVersion: {version}\n"
    backend = BACKEND.format(name=name, version=version, pure=pure, log=str(log) if log else None, module=module)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member, text in [("PKG-INFO", pkg_info), ("pyproject.toml", pyproject), ("tiny_backend.py", backend)]:
            data = text.encode()
            info = tarfile.TarInfo(f"{name.replace('-', '_')}-{version}/{member}")
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
        gz.write(raw.getvalue())
    Path(path).write_bytes(out.getvalue())
    return hashlib.sha256(out.getvalue()).hexdigest()


def fresh_node(world, name: str) -> dict:
    """A second node's environment: its own $BOOTSTRAP_HOME and an empty uv cache (under world.root)."""
    return {"BOOTSTRAP_HOME": str(world.root / f"{name}-home"), "UV_CACHE_DIR": str(world.root / f"{name}-uv")}
