#!/usr/bin/env python3
"""Write a wheelhouse of synthetic, valid py3-none-any wheels.

    python3 testworld/make_wheels.py OUT_DIR [--data testworld/packages.toml] [--filler N]

Every release declared in the data file becomes OUT_DIR/<group>/<wheel> for each
index group it belongs to.  Output is deterministic (fixed timestamps and
permissions, sorted entries, stored not deflated), so file hashes are stable
from run to run and machine to machine.  A wheel whose bytes would not change
is not rewritten; stale *.whl files in the group directories are removed.

Standard library only (Python >= 3.11 for tomllib).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

GENERATOR = "bootstrap-testworld 1"
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
DEFAULT_DATA = Path(__file__).resolve().parent / "packages.toml"
RELEASE_REPLACES = ("requires", "extras", "requires_python", "scripts",
                    "entry_points", "groups", "native")
_NAME_OK = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.I)
_VERSION_OK = re.compile(r"^[0-9][0-9A-Za-z.!+_-]*$")


def normalize(name: str) -> str:
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_name_part(name: str) -> str:
    """Distribution name as it appears in wheel / dist-info names (PEP 427/491)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def wheel_version_part(version: str) -> str:
    return version.replace("-", "_")


def wheel_filename(name: str, version: str) -> str:
    return f"{wheel_name_part(name)}-{wheel_version_part(version)}-py3-none-any.whl"


def default_import_name(name: str) -> str:
    return re.sub(r"[-.]+", "_", name).lower()


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


# --------------------------------------------------------------------- data model

class DataError(Exception):
    pass


def load_releases(data_path: Path, filler: int = 0) -> list[dict]:
    """Flatten the data file into one dict per release (all fields resolved)."""
    with open(data_path, "rb") as f:
        doc = tomllib.load(f)
    releases: list[dict] = []
    for pkg in doc.get("package", []):
        name = pkg.get("name")
        if not name or not _NAME_OK.match(name):
            raise DataError(f"bad or missing package name: {name!r}")
        base = {
            "name": name,
            "import_name": pkg.get("import_name") or default_import_name(name),
            "groups": list(pkg.get("groups", ["main"])),
            "requires": list(pkg.get("requires", [])),
            "extras": dict(pkg.get("extras", {})),
            "requires_python": pkg.get("requires_python"),
            "scripts": dict(pkg.get("scripts", {})),
            "entry_points": {g: dict(v) for g, v in pkg.get("entry_points", {}).items()},
            "module": pkg.get("module", ""),
            "files": dict(pkg.get("files", {})),
            "native": dict(pkg.get("native", {})),
        }
        rel_specs = [{"version": v} for v in pkg.get("versions", [])]
        rel_specs += list(pkg.get("release", []))
        if not rel_specs:
            raise DataError(f"package {name} declares no versions")
        for spec in rel_specs:
            version = spec.get("version")
            if not version or not _VERSION_OK.match(str(version)):
                raise DataError(f"{name}: bad or missing version {version!r}")
            rel = dict(base)
            rel["version"] = str(version)
            for key in RELEASE_REPLACES:
                if key in spec:
                    rel[key] = spec[key]
            rel["module"] = base["module"] + spec.get("module", "")
            rel["files"] = {**base["files"], **spec.get("files", {})}
            unknown = set(spec) - set(RELEASE_REPLACES) - {"version", "module", "files"}
            if unknown:
                raise DataError(f"{name} {version}: unknown release keys {sorted(unknown)}")
            releases.append(rel)
    for i in range(1, filler + 1):
        name = f"filler-{i:04d}"
        releases.append({
            "name": name, "import_name": default_import_name(name), "version": "1.0.0",
            "groups": ["main"], "requires": [], "extras": {}, "requires_python": None,
            "scripts": {}, "entry_points": {}, "module": "", "files": {}, "native": {},
        })
    seen = set()
    for rel in releases:
        key = (normalize(rel["name"]), rel["version"])
        if key in seen:
            raise DataError(f"duplicate release {rel['name']} {rel['version']}")
        seen.add(key)
    return releases


# --------------------------------------------------------------------- wheel building

def _with_extra(req: str, extra: str) -> str:
    req, sep, marker = req.partition(";")
    req = req.strip()
    marker = marker.strip()
    if marker:
        return f'{req}; ({marker}) and extra == "{extra}"'
    return f'{req}; extra == "{extra}"'


def metadata_text(rel: dict) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {rel['name']}",
        f"Version: {rel['version']}",
        "Summary: Synthetic package for the bootstrap test world",
    ]
    if rel.get("requires_python"):
        lines.append(f"Requires-Python: {rel['requires_python']}")
    for req in rel["requires"]:
        lines.append(f"Requires-Dist: {req.strip()}")
    for extra in sorted(rel["extras"]):
        lines.append(f"Provides-Extra: {extra}")
    for extra in sorted(rel["extras"]):
        for req in rel["extras"][extra]:
            lines.append(f"Requires-Dist: {_with_extra(req, extra)}")
    return "\n".join(lines) + "\n\n"


def wheel_text() -> str:
    return ("Wheel-Version: 1.0\n"
            f"Generator: {GENERATOR}\n"
            "Root-Is-Purelib: true\n"
            "Tag: py3-none-any\n\n")


def entry_points_text(rel: dict) -> str | None:
    groups: dict[str, dict] = {}
    if rel["scripts"]:
        groups["console_scripts"] = dict(rel["scripts"])
    for g, eps in rel["entry_points"].items():
        groups.setdefault(g, {}).update(eps)
    if not groups:
        return None
    out = []
    for g in sorted(groups):
        out.append(f"[{g}]")
        for n in sorted(groups[g]):
            out.append(f"{n} = {groups[g][n]}")
        out.append("")
    return "\n".join(out)


def init_text(rel: dict) -> str:
    head = (f'"""Synthetic package {rel["name"]} {rel["version"]} (bootstrap test world)."""\n'
            f'__version__ = "{rel["version"]}"\n')
    body = rel["module"]
    if body and not body.startswith("\n"):
        body = "\n" + body
    if body and not body.endswith("\n"):
        body += "\n"
    return head + body


def build_native_library(spec: dict) -> bytes:
    """A shared library defining spec["symbols"] (each `int NAME(void)`) in version
    spec["soname"], built with `cc`. Deterministic on one toolchain: fixed file names in a
    scratch directory mapped away, no build id, stripped."""
    soname = spec.get("soname")
    symbols = list(spec.get("symbols", []))
    if not soname or not all(re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", s) for s in symbols):
        raise DataError(f"native library needs a soname and C identifiers: {spec!r}")
    body = "".join(f"int {sym}(void) {{ return {i + 1}; }}\n" for i, sym in enumerate(symbols))
    body += "int bootstrap_testworld_marker(void) { return 0; }\n"
    exports = "".join(f" {sym};" for sym in symbols) + " bootstrap_testworld_marker;"
    with tempfile.TemporaryDirectory(prefix="make_wheels-") as tmp:
        src, script, out = (Path(tmp) / n for n in ("lib.c", "lib.map", "lib.so"))
        src.write_text(body)
        script.write_text(f"{soname} {{ global:{exports} local: *; }};\n")
        cmd = ["cc", "-shared", "-fPIC", "-O1", "-s", f"-ffile-prefix-map={tmp}=.",
               "-Wl,--build-id=none", f"-Wl,-soname,{soname}",
               f"-Wl,--version-script={script}", "-o", str(out), str(src)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, timeout=60)
        except FileNotFoundError:
            raise DataError("native libraries need a C compiler (cc) on PATH")
        if proc.returncode != 0:
            raise DataError(f"cc failed for {soname}: {proc.stderr.strip()}")
        return out.read_bytes()


def wheel_contents(rel: dict) -> list[tuple[str, bytes]]:
    """Ordered (arcname, bytes) list, RECORD last."""
    dist_info = f"{wheel_name_part(rel['name'])}-{wheel_version_part(rel['version'])}.dist-info"
    pkg_files = {f"{rel['import_name']}/__init__.py": init_text(rel).encode()}
    for path, text in rel["files"].items():
        pkg_files[path.lstrip("/")] = text.encode()
    for path, spec in rel.get("native", {}).items():
        pkg_files[path.lstrip("/")] = build_native_library(spec)
    meta_files = {
        f"{dist_info}/METADATA": metadata_text(rel).encode(),
        f"{dist_info}/WHEEL": wheel_text().encode(),
    }
    ep = entry_points_text(rel)
    if ep:
        meta_files[f"{dist_info}/entry_points.txt"] = ep.encode()
    entries = sorted(pkg_files.items()) + sorted(meta_files.items())
    record = io.StringIO()
    for arc, data in entries:
        record.write(f"{arc},{_record_hash(data)},{len(data)}\n")
    record.write(f"{dist_info}/RECORD,,\n")
    entries.append((f"{dist_info}/RECORD", record.getvalue().encode()))
    return entries


def build_wheel_bytes(rel: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for arc, data in wheel_contents(rel):
            zi = zipfile.ZipInfo(arc, date_time=ZIP_DATE)
            zi.create_system = 3
            zi.external_attr = (0o100644 & 0xFFFF) << 16
            zi.compress_type = zipfile.ZIP_STORED
            zf.writestr(zi, data)
    return buf.getvalue()


# --------------------------------------------------------------------- output

def write_wheelhouse(out_dir: Path, releases: list[dict], prune: bool = True,
                     verbose: bool = False) -> dict:
    """Write all wheels; return {"written": n, "unchanged": n, "removed": n, "files": [...]}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    wanted: dict[str, set[str]] = {}
    stats = {"written": 0, "unchanged": 0, "removed": 0, "files": []}
    for rel in releases:
        data = build_wheel_bytes(rel)
        fname = wheel_filename(rel["name"], rel["version"])
        for group in rel["groups"]:
            if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", group) or group.startswith("_"):
                raise DataError(f"bad group name {group!r}")
            gdir = out_dir / group
            gdir.mkdir(exist_ok=True)
            wanted.setdefault(group, set()).add(fname)
            target = gdir / fname
            stats["files"].append(str(target))
            try:
                if target.stat().st_size == len(data) and target.read_bytes() == data:
                    stats["unchanged"] += 1
                    continue
            except FileNotFoundError:
                pass
            tmp = gdir / f".{fname}.tmp{os.getpid()}"
            tmp.write_bytes(data)
            os.replace(tmp, target)
            stats["written"] += 1
            if verbose:
                print(f"wrote {target}")
    if prune:
        for gdir in sorted(p for p in out_dir.iterdir() if p.is_dir()):
            keep = wanted.get(gdir.name, set())
            for whl in sorted(gdir.glob("*.whl")):
                if whl.name not in keep:
                    whl.unlink()
                    stats["removed"] += 1
                    if verbose:
                        print(f"removed {whl}")
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--filler", type=int, default=0, metavar="N",
                    help="also write N tiny packages filler-0001..filler-N (group main)")
    ap.add_argument("--no-prune", action="store_true",
                    help="keep *.whl files in group dirs that the data no longer declares")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.filler < 0 or args.filler > 9999:
        ap.error("--filler must be between 0 and 9999")
    try:
        releases = load_releases(args.data, args.filler)
        st = write_wheelhouse(args.out_dir, releases, prune=not args.no_prune,
                              verbose=args.verbose)
    except (DataError, tomllib.TOMLDecodeError) as e:
        print(f"make_wheels: {e}", file=sys.stderr)
        return 2
    print(f"make_wheels: {len(st['files'])} wheels in {args.out_dir} "
          f"({st['written']} written, {st['unchanged']} unchanged, {st['removed']} removed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
