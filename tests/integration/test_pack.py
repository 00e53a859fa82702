"""`bootstrap pack` / `unpack` on a real venv made by a run (uv, the fixture index): the same
venv packs to the same bytes; an unpacked venv at another path works, keeps its history and is
verified against the packed manifest; bad packs are refused and leave nothing behind."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import recipes as R


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def packed_venv(world) -> Path:
    recipe = R.write_recipe(world.root, steps=R.pipeline(world.index))
    ok(world.run([recipe]))
    pack = world.root / "env.tar.zst"
    ok(world.run(["pack", "--venv", world.venv, "-o", pack]))
    return pack


def repack(world, pack: Path, edit) -> Path:
    """Unpack with GNU tar, let `edit(dir)` change it, pack it again with GNU tar."""
    d = world.root / "tampered"
    d.mkdir()
    subprocess.run(["tar", "--zstd", "-xf", pack, "-C", d], check=True)
    edit(d)
    out = world.root / "tampered.tar.zst"
    subprocess.run(["tar", "--zstd", "-cf", out, "-C", d, "."], check=True)
    return out


def assert_nothing_left(dest: Path):
    assert not dest.exists()
    assert [p.name for p in dest.parent.iterdir() if p.name.startswith(f".{dest.name}.")] == []


def test_pack_is_reproducible_and_unpacks_relocated_and_verified(world):
    pack = packed_venv(world)
    again = world.root / "again.tar.zst"
    proc = ok(world.run(["pack", "--venv", world.venv, "-o", again]))
    assert pack.read_bytes() == again.read_bytes()
    assert "sha256 " in proc.stdout

    # What is inside: the description, the manifest, the tree without lock, logs and caches.
    listing = subprocess.run(["tar", "--zstd", "-tvf", pack], capture_output=True, text=True, check=True).stdout
    names = [(line.split()[-1] if " -> " not in line else line.split()[-3]).rstrip("/")
             for line in listing.splitlines()]
    assert names[:2] == ["bootstrap-pack.json", "manifest.json"]
    assert names[2:] == sorted(names[2:])
    assert "venv/.bootstrap/journal.json" in names
    assert any(n.startswith("venv/.bootstrap/history/") for n in names)
    assert not any(n.startswith("venv/.bootstrap/logs") or n == "venv/.bootstrap/lock" or n.endswith(".facts")
                   for n in names)
    assert all(" 0/0 " in line and "1970-01-01" in line for line in listing.splitlines())

    dest = world.root / "node3" / "venv"
    proc = ok(world.run(["unpack", pack, dest]))
    assert "file(s) match the manifest and RECORDs" in proc.stdout
    assert (dest / "bin" / "python").is_symlink()
    for script in (dest / "bin").iterdir():
        if script.is_file() and not script.is_symlink():
            assert str(world.venv) + "/" not in script.read_text(errors="replace"), script
    r = world.python("import demo_torch, regex; print('ok')", venv=dest)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    # Its history came along, and its packages equal the source venv's (diff across venvs).
    history = json.loads(ok(world.run(["history", "--venv", dest, "--json"])).stdout)
    assert len(history) >= 1
    ok(world.run(["snapshot", "--venv", world.venv, "-o", world.root / "a.json"]))
    ok(world.run(["snapshot", "--venv", dest, "-o", world.root / "b.json"]))
    proc = ok(world.run(["diff", world.root / "a.json", world.root / "b.json", "--exit-code"]))
    assert proc.stdout == "no change\n"

    proc = world.run(["unpack", pack, dest])
    assert proc.returncode == 2 and "already exists" in proc.stderr


def test_unpack_needs_the_interpreter_the_pack_names(world):
    pack = packed_venv(world)

    def elsewhere(d: Path):
        info = json.loads((d / "bootstrap-pack.json").read_text())
        info["python"]["home"] = "/nonexistent/py/bin"
        info["links"] = {name: "/nonexistent/py/bin/python3.11" for name in info["links"]}
        assert info["links"], "the venv's bin/python should link outside it"
        (d / "bootstrap-pack.json").write_text(json.dumps(info))

    dest = world.root / "dest"
    proc = world.run(["unpack", repack(world, pack, elsewhere), dest])
    assert proc.returncode == 1
    assert "needs Python 3.11" in proc.stderr and "/nonexistent/py/bin" in proc.stderr
    assert_nothing_left(dest)


def test_unpack_refuses_a_pack_that_does_not_match_its_manifest_or_is_unsafe(world):
    pack = packed_venv(world)

    def tamper_record(d: Path):
        (record,) = list(d.glob("venv/lib/python*/site-packages/regex-*.dist-info/RECORD"))
        record.write_text(record.read_text() + "regex/extra.py,,\n")

    dest = world.root / "dest"
    proc = world.run(["unpack", repack(world, pack, tamper_record), dest])
    assert proc.returncode == 1
    assert "does not match its manifest" in proc.stderr and "regex" in proc.stderr
    assert_nothing_left(dest)

    def escaping_link(d: Path):
        info = json.loads((d / "bootstrap-pack.json").read_text())
        info["links"]["../../outside"] = "/usr/bin/python3"
        (d / "bootstrap-pack.json").write_text(json.dumps(info))

    proc = world.run(["unpack", _fresh(world, pack, escaping_link), dest])
    assert proc.returncode == 1
    assert "refusing the link '../../outside'" in proc.stderr
    assert_nothing_left(dest)
    assert not (world.root / "outside").exists()

    def absolute_member(d: Path):
        (d / "venv" / "evil").symlink_to("/etc/passwd")

    proc = world.run(["unpack", _fresh(world, pack, absolute_member), dest])
    assert proc.returncode == 1
    assert "refusing unsafe entry" in proc.stderr
    assert_nothing_left(dest)


def _fresh(world, pack: Path, edit) -> Path:
    """repack() into a new directory each time."""
    import shutil
    for leftover in (world.root / "tampered", world.root / "tampered.tar.zst"):
        if leftover.is_dir():
            shutil.rmtree(leftover)
        elif leftover.exists():
            leftover.unlink()
    return repack(world, pack, edit)


# --- editable installs: what a packed venv leans on outside itself -----------------------------

_EDITABLE_BACKEND = '''\
"""A PEP 660 backend with nothing to install: the editable wheel holds a .pth naming src/."""
import base64, hashlib, os, zipfile

NAME, VERSION = "edpkg", "0.1.0"


def _hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def get_requires_for_build_editable(config_settings=None):
    return []


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    info = f"{NAME}-{VERSION}.dist-info"
    files = {
        f"_{NAME}.pth": (os.path.join(root, "src") + "\\n").encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
        f"{info}/top_level.txt": f"{NAME}\\n".encode(),
    }
    record = "".join(f"{p},{_hash(d)},{len(d)}\\n" for p, d in files.items()) + f"{info}/RECORD,,\\n"
    files[f"{info}/RECORD"] = record.encode()
    wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    return wheel
'''


def editable_project(root: Path) -> Path:
    """A project whose editable install imports `edpkg` from root/src (as setuptools' src
    layout and hatchling do: a .pth line), built offline by an in-tree backend."""
    (root / "_backend").mkdir(parents=True)
    (root / "_backend" / "edbackend.py").write_text(_EDITABLE_BACKEND)
    (root / "pyproject.toml").write_text('[project]\nname = "edpkg"\nversion = "0.1.0"\n\n'
                                         '[build-system]\nrequires = []\nbuild-backend = "edbackend"\n'
                                         'backend-path = ["_backend"]\n')
    (root / "src" / "edpkg").mkdir(parents=True)
    (root / "src" / "edpkg" / "__init__.py").write_text("ANSWER = 42\n")
    return root


def venv_with_editable(world) -> Path:
    recipe = R.write_recipe(world.root, steps=R.pipeline(world.index))
    ok(world.run([recipe]))
    project = editable_project(world.root / "checkout" / "edpkg")
    world.uv_pip("install", "--no-deps", "-e", str(project))
    r = world.python("import edpkg; print(edpkg.ANSWER)")
    assert r.returncode == 0 and r.stdout.strip() == "42", r.stderr
    return project


def test_pack_without_editable_installs_keeps_schema_1(world):
    pack = packed_venv(world)
    info = json.loads(subprocess.run(["tar", "--zstd", "-xOf", pack, "bootstrap-pack.json"], capture_output=True,
                                     text=True, check=True).stdout)
    assert info["schema"] == 1 and "local_sources" not in info


def test_pack_names_an_editable_install_and_unpack_doctor_fail_without_its_source(world):
    project = venv_with_editable(world)
    pack = world.root / "env.tar.zst"
    proc = ok(world.run(["pack", "--venv", world.venv, "-o", pack]))
    assert f"warning: edpkg 0.1.0 is an editable install from {project}, which is not in the pack" in proc.stderr
    assert "--carry-editable" in proc.stderr
    info = json.loads(subprocess.run(["tar", "--zstd", "-xOf", pack, "bootstrap-pack.json"], capture_output=True,
                                     text=True, check=True).stdout)
    assert info["schema"] == 2
    assert info["local_sources"] == [{"name": "edpkg", "version": "0.1.0", "path": str(project), "carried": ""}]

    # With the checkout where it was, the unpacked venv imports it from there.
    dest = world.root / "node1" / "venv"
    proc = ok(world.run(["unpack", pack, dest]))
    assert f"editable install edpkg 0.1.0: uses {project} on this host" in proc.stdout
    r = world.python("import edpkg; print(edpkg.ANSWER)", venv=dest)
    assert r.returncode == 0 and r.stdout.strip() == "42", r.stderr

    # A node without the checkout: unpack fails naming it, leaving nothing; doctor errors.
    project.rename(world.root / "checkout" / "moved")
    dest2 = world.root / "node2" / "venv"
    proc = world.run(["unpack", pack, dest2])
    assert proc.returncode == 1, proc.stderr
    assert f"edpkg 0.1.0 at {project}" in proc.stderr
    assert "bootstrap pack --carry-editable" in proc.stderr
    assert_nothing_left(dest2)
    for venv in (world.venv, dest):
        proc, doc = world.run_json(["doctor", "--venv", venv])
        assert proc.returncode == 3, proc.stdout + proc.stderr
        found = [f for f in doc["findings"] if f["rule"] == "editable-source"]
        assert len(found) == 1 and found[0]["severity"] == "error", doc["findings"]
        assert f"edpkg 0.1.0 is an editable install from {project}, which does not exist" in found[0]["message"]


def test_pack_carry_editable_brings_the_source_and_unpack_points_the_install_at_it(world):
    project = venv_with_editable(world)
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("[core]\n")
    (project / "src" / "edpkg" / "__pycache__").mkdir()
    (project / "src" / "edpkg" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    pack = world.root / "env.tar.zst"
    proc = ok(world.run(["pack", "--venv", world.venv, "-o", pack, "--carry-editable"]))
    assert "warning:" not in proc.stderr
    assert f"carried the editable install edpkg 0.1.0 from {project} as src/edpkg/" in proc.stdout
    names = subprocess.run(["tar", "--zstd", "-tf", pack], capture_output=True, text=True, check=True).stdout.split()
    assert "src/edpkg/src/edpkg/__init__.py" in names and "src/edpkg/pyproject.toml" in names
    assert not any(".git" in n or "__pycache__" in n for n in names if n.startswith("src/"))

    import shutil
    shutil.rmtree(project.parent)  # no checkout anywhere now
    dest = world.root / "node3" / "venv"
    proc = ok(world.run(["unpack", pack, dest]))
    assert f"source carried into {dest}/src/edpkg" in proc.stdout
    r = world.python("import edpkg; print(edpkg.ANSWER, edpkg.__file__)", venv=dest)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["42", str(dest / "src" / "edpkg" / "src" / "edpkg" / "__init__.py")]
    (direct_url,) = list(dest.glob("lib/python*/site-packages/edpkg-0.1.0.dist-info/direct_url.json"))
    assert json.loads(direct_url.read_text())["url"] == f"file://{dest}/src/edpkg"
    proc, doc = world.run_json(["doctor", "--venv", dest])
    rules = {f["rule"] for f in doc["findings"]}
    assert "editable-source" not in rules and "installed-files" not in rules, doc["findings"]
    # The venv it came from has lost its checkout: doctor says so.
    proc, doc = world.run_json(["doctor", "--venv", world.venv])
    assert proc.returncode == 3 and "editable-source" in {f["rule"] for f in doc["findings"]}


def test_pack_carry_editable_refuses_a_credential_file(world):
    project = venv_with_editable(world)
    (project / ".netrc").write_text("machine example.org login me password hunter2\n")
    out = world.root / "env.tar.zst"
    proc = world.run(["pack", "--venv", world.venv, "-o", out, "--carry-editable"])
    assert proc.returncode == 2, proc.stderr
    assert f"refusing to carry {project}/.netrc" in proc.stderr
    assert not out.exists()
