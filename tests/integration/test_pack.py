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
