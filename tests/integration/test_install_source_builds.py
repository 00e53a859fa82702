"""An install step's sdists go through the build cache (issue 42, item 2(b)).

The fixture index group `sd` serves only sdists (testworld's `.list-sdists`, see sdists.py):
`torchext` imports demo_torch in its backend's build_wheel and records its version (it declares
`requires = ["demo-torch"]` but the step's index has no demo-torch: only a build against the venv,
`no_build_isolation_package`, can succeed) and comes out as a cp311 platform wheel; `puresd` is
pure Python, built in isolation. Each backend appends its name to a build log, so the tests count
real builds. Checked: built once per key into $BOOTSTRAP_HOME/builds/<key>/ and reused by a
second venv; the lock's built.key is that directory's name; `--locked` on the same home is a
cache hit; `--locked` into an empty path on a second $BOOTSTRAP_HOME rebuilds from the locked
sdist under the lock's key; a demo-torch bump gives torchext a new key while puresd is not rebuilt.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import recipes as R
import sdists
from sdists import fresh_node
from recipes import ok, steps_by_id

EXT, PURE, VERSION = "torchext", "puresd", "0.1.0"
# The backend's module text: the version of the demo_torch it imported while building.
AGAINST_VENV = '"TORCH = %r\\n" % __import__("demo_torch").__version__'


@pytest.fixture
def sw(world, index_factory):
    """The world plus a private $BOOTSTRAP_HOME, a build log and an index serving the two sdists."""
    world.home = world.root / "home"
    world.env["BOOTSTRAP_HOME"] = str(world.home)
    world.build_log = world.root / "builds.log"
    group = world.root / "sdroot" / "sd"
    group.mkdir(parents=True)
    (group / ".list-sdists").write_text("")
    world.sha = {
        EXT: sdists.make_sdist(group / f"{EXT}-{VERSION}.tar.gz", EXT, VERSION, module=AGAINST_VENV, pure=False,
                               requires=["demo-torch"], log=world.build_log),
        PURE: sdists.make_sdist(group / f"{PURE}-{VERSION}.tar.gz", PURE, VERSION, log=world.build_log),
    }
    world.sd = index_factory(root=group.parent)
    return world


def write(sw, torch: str = "2.10.0", pure: bool = False) -> Path:
    packages = [f"{EXT}=={VERSION}"] + ([f"{PURE}=={VERSION}"] if pure else [])
    verify = [R.imp(EXT)] + ([R.imp(PURE)] if pure else [])
    steps = [R.venv(),
             R.install("torch", [f"demo-torch=={torch}"], index_url=sw.index.url("main"), verify=[R.imp("demo_torch")]),
             R.install("ext", packages, index_url=sw.sd.url("sd"), no_build_isolation_package=[EXT], verify=verify)]
    return R.write_recipe(sw.root, steps=steps)


def builds(sw) -> list[str]:
    """The packages the backends built, one per build, in order."""
    return sw.build_log.read_text().split() if sw.build_log.exists() else []


def entries(home: Path, name: str) -> list[str]:
    """Names of the build-cache entries under home/builds holding a wheel of `name`."""
    root = home / "builds"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith(".") and any(p.glob(f"{name}-*.whl")))


def note(doc: dict, step: str = "ext") -> str:
    """The step's result text (`reason`, as the summary table prints it): one part per sdist, joined by "; "."""
    return steps_by_id(doc)[step].get("reason") or ""


def built_key(doc: dict, name: str) -> str:
    """The 12-hex key prefix of the note `NAME VERSION: built from SDIST in D (cache key K)`."""
    text = note(doc)
    m = re.search(rf"(?:^|; ){name} {re.escape(VERSION)}: built from {name}-{re.escape(VERSION)}\.tar\.gz in "
                  rf"[^;]*\(cache key ([0-9a-f]{{12}})\)", text)
    assert m, f"no 'built from' note for {name}: {text!r}"
    return m.group(1)


def hit_key(doc: dict, name: str) -> str:
    """The 12-hex key prefix of the note `NAME VERSION: build cache hit (key K, built WHEN[ on HOST])`."""
    text = note(doc)
    m = re.search(rf"(?:^|; ){name} {re.escape(VERSION)}: build cache hit \(key ([0-9a-f]{{12}}), built ", text)
    assert m, f"no 'build cache hit' note for {name}: {text!r}"
    return m.group(1)


def torch_seen(sw, venv: Path) -> str:
    """The demo_torch version torchext was built against (as installed in `venv`)."""
    r = sw.python(f"import {EXT}; print({EXT}.TORCH)", venv)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def run(sw, args, env: dict | None = None) -> dict:
    proc, doc = sw.run_json(args, env=env)
    ok(proc)
    return doc


def test_an_sdist_built_against_the_venv_is_built_once_reused_by_another_venv_and_locked_by_its_key(sw):
    recipe = write(sw)
    doc = run(sw, [recipe])
    key = built_key(doc, EXT)
    assert builds(sw) == [EXT]
    [entry] = entries(sw.home, EXT)
    assert re.fullmatch("[0-9a-f]{64}", entry) and entry.startswith(key), entry
    assert torch_seen(sw, sw.venv) == "2.10.0"  # built against the venv's demo-torch, not in isolation
    inputs = (sw.home / "builds" / entry / "inputs.txt").read_text()
    assert f"source: sha256 {sw.sha[EXT]}\n" in inputs, inputs
    url = f"{sw.sd.base_url}/sd/files/{EXT}-{VERSION}.tar.gz"
    assert f"# source from: {url} (not part of the key)" in inputs, inputs
    # The key holds the venv's installed version of the declared build requirement.
    assert any(line.startswith(("abi_packages:", "build_requires:")) and "demo-torch" in line and "2.10.0" in line
               for line in inputs.splitlines()), inputs

    # A second venv on the same home: the cached wheel, no build.
    other = sw.root / "other"
    doc = run(sw, [recipe, "--venv", other])
    assert hit_key(doc, EXT) == key
    assert builds(sw) == [EXT] and entries(sw.home, EXT) == [entry]
    assert sw.version_of(EXT, other) == VERSION and torch_seen(sw, other) == "2.10.0"

    ok(sw.run(["lock", recipe]))
    p = json.loads((sw.root / "lockfiles" / "itest.lock.json").read_text())["packages"][EXT]
    assert p["version"] == VERSION and p["sdist"] == f"{EXT}-{VERSION}.tar.gz" and p["sha256"] == sw.sha[EXT]
    assert p["built"]["key"] == entry, p
    # The entry holds what a build-step entry holds: the one wheel, inputs.txt, entry.txt and build.log.
    assert sorted(p.name for p in (sw.home / "builds" / entry).iterdir()) == \
        sorted(["build.log", "entry.txt", "inputs.txt", f"{EXT}-{VERSION}-cp311-cp311-linux_x86_64.whl"])


def test_locked_is_a_cache_hit_on_the_same_home_and_rebuilds_from_the_locked_sdist_on_a_fresh_one(sw):
    recipe = write(sw)
    run(sw, [recipe])
    ok(sw.run(["lock", recipe]))
    locked = json.loads((sw.root / "lockfiles" / "itest.lock.json").read_text())["packages"][EXT]
    [entry] = entries(sw.home, EXT)
    assert locked["built"]["key"] == entry

    same = sw.root / "same-home"
    doc = run(sw, [recipe, "--venv", same, "--locked"])
    assert hit_key(doc, EXT) == entry[:12]
    assert builds(sw) == [EXT] and torch_seen(sw, same) == "2.10.0"

    # Another node: nothing cached, so it builds from the lock's hash-checked sdist, under the lock's key.
    node = fresh_node(sw, "n2")
    fresh = sw.root / "fresh"
    doc = run(sw, [recipe, "--venv", fresh, "--locked"], env=node)
    assert built_key(doc, EXT) == entry[:12]
    assert builds(sw) == [EXT, EXT]
    assert entries(Path(node["BOOTSTRAP_HOME"]), EXT) == [entry]
    assert sw.version_of(EXT, fresh) == VERSION and torch_seen(sw, fresh) == "2.10.0"
    # The venv it made is the lock's: the same locked run again has nothing to build.
    run(sw, [recipe, "--venv", fresh, "--locked"], env=node)
    assert builds(sw) == [EXT, EXT]

    # A node whose build environment differs (CFLAGS is a build input): built under its own
    # key, and the report names the lock's so the difference is not silent.
    third = sw.root / "third"
    doc = run(sw, [recipe, "--venv", third, "--locked"], env={**fresh_node(sw, "n3"), "CFLAGS": "-O1"})
    assert built_key(doc, EXT) != entry[:12]
    assert f"(the lock recorded key {entry[:12]}: this node's toolchain or build requirements differ" in note(doc)
    assert sw.version_of(EXT, third) == VERSION


def test_a_torch_bump_rebuilds_the_sdist_built_against_the_venv_under_a_new_key_but_not_the_pure_one(sw):
    doc = run(sw, [write(sw, pure=True)])
    old_ext, pure = built_key(doc, EXT), built_key(doc, PURE)
    assert sorted(builds(sw)) == sorted([EXT, PURE])
    [pure_entry] = entries(sw.home, PURE)
    assert pure_entry.startswith(pure) and list((sw.home / "builds" / pure_entry).glob("*-py3-none-any.whl"))

    # Another venv whose demo-torch is 2.11.0: torchext gets a new key and a new build, puresd is reused.
    bumped = sw.root / "bumped"
    doc = run(sw, [write(sw, torch="2.11.0", pure=True), "--venv", bumped])
    assert hit_key(doc, PURE) == pure
    new_ext = built_key(doc, EXT)
    assert new_ext != old_ext
    assert sorted(builds(sw)) == sorted([EXT, EXT, PURE])
    assert entries(sw.home, PURE) == [pure_entry] and len(entries(sw.home, EXT)) == 2
    assert torch_seen(sw, bumped) == "2.11.0" and torch_seen(sw, sw.venv) == "2.10.0"
    assert sw.version_of(PURE, bumped) == VERSION
