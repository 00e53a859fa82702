"""Build-cache keys from content (issue 42, item 1): a git source is keyed by its commit, never by
the clone path, mirror or URL it was fetched from, so one commit cloned at two paths and served
from a bare mirror builds once; and entries of the scheme before (bootstrap-build-v1, whose git
keys held the URL) are found and re-keyed, not rebuilt. The source is the test world's `fastext`
git repository (testworld/make_sources.py); test_build.py's fixtures count real builds."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import recipes as R
from recipes import steps_by_id
from test_build import build_step, builds, bw, cache_entries, ok  # noqa: F401 (bw: the fixture)
from test_cache_trust import group_home, shared  # noqa: F401 (shared: the fixture)

LIST_FIELDS = {"abi_packages", "env", "config_settings"}


def git(*args, cwd=None):
    subprocess.run(["git", *map(str, args)], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture
def places(bw, sources):
    """The fastext repository's first commit from three places: two clones at different paths
    and a bare mirror served as a file:// URL."""
    if not sources.get("repo"):
        pytest.skip("git missing")
    a = bw.root / "clones" / "a" / "fastext"
    b = bw.root / "elsewhere" / "b-clone"
    mirror = bw.root / "mirror" / "fastext.git"
    git("clone", "-q", sources["repo"], a)
    git("clone", "-q", sources["repo"], b)
    git("clone", "-q", "--mirror", sources["repo"], mirror)
    return {"rev": sources["commits"][0], "second": sources["commits"][1], "a": str(a), "b": str(b),
            "mirror": f"file://{mirror}"}


def recipe_for(bw, name: str, location: str, rev: str) -> Path:
    return R.write_recipe(bw.root, filename=f"{name}.toml",
                          steps=[R.venv(), build_step(bw, {"git": location, "rev": rev})])


def run_step(bw, recipe: Path, venv: Path) -> dict:
    proc, doc = bw.run_json([recipe, "--venv", venv])
    ok(proc)
    return steps_by_id(doc)["fastext"]


def explained_key(bw, recipe: Path, venv: Path) -> tuple[str, str]:
    out = ok(bw.run(["plan", recipe, "--venv", venv, "--explain"])).stdout
    m = re.search(r"build key: ([0-9a-f]{64}) \(([^)]*)\)", out)
    assert m, out
    return m.group(1), out


def v1_digest(inputs: str, v1_source: str) -> str:
    """The bootstrap-build-v1 key of a v2 entry's inputs.txt with its git source at `v1_source`:
    core::KeyBuilder's material (length-prefixed fields) with the scheme before."""
    material = ""
    for line in inputs.splitlines():
        if line.startswith("#"):
            continue
        field, _, value = line.partition(": ")
        if field == "scheme":
            value = "bootstrap-build-v1"
        elif field == "source":
            value = v1_source
        if field in LIST_FIELDS:
            items = [] if value == "[]" else value[1:-1].split(", ")
            material += f"{len(field)}:{field}[{len(items)}]\n" + "".join(f"{len(i)}:{i}\n" for i in items)
        else:
            material += f"{len(field)}:{field}={len(value.encode())}:{value}\n"
    return hashlib.sha256(material.encode()).hexdigest()


def test_one_commit_from_two_clone_paths_and_a_mirror_builds_once(bw, places):
    rev = places["rev"]
    keys = []
    for n, where in enumerate(("a", "b", "mirror")):
        recipe = recipe_for(bw, where, places[where], rev)
        venv = bw.root / f"venv-{where}"
        step = run_step(bw, recipe, venv)
        if n == 0:
            assert step["reason"].startswith("built in"), step
        else:
            assert step["reason"].startswith("build cache hit"), step
        key, _ = explained_key(bw, recipe, venv)
        keys.append(key)
        assert step["reason"].find(key[:12]) > 0, step
    assert builds(bw) == 1
    assert len(set(keys)) == 1, keys
    [entry] = cache_entries(bw)
    assert entry.name == keys[0]
    inputs = (entry / "inputs.txt").read_text()
    assert inputs.startswith(f"scheme: bootstrap-build-v2\nsource: git {rev}\n"
                             f"# source from: {places['a']} (not part of the key)\n"), inputs

    # An https URL with credentials: the same key, already cached; the token is never shown.
    recipe = recipe_for(bw, "https", "https://builder:s3cr3t-t0ken@git.example.invalid/fastext.git", rev)
    key, out = explained_key(bw, recipe, bw.root / "venv-a")
    assert key == keys[0]
    assert "in the build cache: installs without building" in out
    assert "# source from: https://" in out and "s3cr3t-t0ken" not in out

    # Another commit is another key.
    recipe = recipe_for(bw, "second", places["a"], places["second"])
    assert explained_key(bw, recipe, bw.root / "venv-a")[0] != keys[0]


def test_a_v1_entry_from_another_clone_path_is_rekeyed_not_rebuilt(bw, places):
    rev = places["rev"]
    # A bootstrap-build-v1 entry as the scheme before left it: built from clone a, its key
    # holding that path. Made here from a build's entry by rewriting its scheme and source.
    ok(bw.run([recipe_for(bw, "a", places["a"], rev), "--venv", bw.root / "venv-a"]))
    [entry] = cache_entries(bw)
    v2_inputs = (entry / "inputs.txt").read_text()
    v1_source = f"git {places['a']}@{rev}"
    v1_key = v1_digest(v2_inputs, v1_source)
    v1_inputs = "".join(line + "\n" for line in v2_inputs.splitlines() if not line.startswith("#"))
    v1_inputs = v1_inputs.replace("scheme: bootstrap-build-v2\n", "scheme: bootstrap-build-v1\n").replace(
        f"source: git {rev}\n", f"source: {v1_source}\n")
    (entry / "inputs.txt").write_text(v1_inputs)
    os.rename(entry, entry.parent / v1_key)
    assert builds(bw) == 1

    # Clone b, another venv: installed from the v1 entry, re-keyed under the v2 key.
    recipe = recipe_for(bw, "b", places["b"], rev)
    venv = bw.root / "venv-b"
    ok(bw.run([recipe, "--venv", venv, "--only", "venv"]))
    key, out = explained_key(bw, recipe, venv)
    assert key == entry.name
    assert f"in the build cache as bootstrap-build-v1 entry {v1_key[:12]}: re-keyed without building" in out
    step = run_step(bw, recipe, venv)
    assert step["reason"].startswith(
        f"build cache hit (key {key[:12]}, re-keyed from bootstrap-build-v1 entry {v1_key[:12]}"), step
    assert builds(bw) == 1
    assert {p.name for p in cache_entries(bw)} == {key, v1_key}  # the v1 entry is kept
    assert f"rekeyed_from = bootstrap-build-v1 {v1_key}" in (entry.parent / key / "entry.txt").read_text()
    assert (entry.parent / key / "inputs.txt").read_text().startswith(f"scheme: bootstrap-build-v2\nsource: git {rev}\n")
    # From now on a plain hit.
    step = run_step(bw, recipe_for(bw, "mirror", places["mirror"], rev), bw.root / "venv-m")
    assert step["reason"].startswith(f"build cache hit (key {key[:12]}, built"), step
    assert builds(bw) == 1


def test_an_entry_an_older_bootstrap_built_is_rekeyed(bw, places):
    """With BOOTSTRAP_V1_BIN naming a bootstrap of the scheme before (a main build), its entry
    is made by that binary for real."""
    old = os.environ.get("BOOTSTRAP_V1_BIN")
    if not old:
        pytest.skip("BOOTSTRAP_V1_BIN (a bootstrap with build keys of scheme bootstrap-build-v1) not set")
    rev = places["rev"]
    proc = subprocess.run([old, recipe_for(bw, "a", places["a"], rev), "--venv", bw.root / "venv-a"],
                          env=bw.full_env(), cwd=bw.root, capture_output=True, text=True, timeout=300)
    ok(proc)
    [v1_entry] = cache_entries(bw)
    assert (v1_entry / "inputs.txt").read_text().startswith(f"scheme: bootstrap-build-v1\nsource: git {places['a']}@")
    step = run_step(bw, recipe_for(bw, "b", places["b"], rev), bw.root / "venv-b")
    assert f"re-keyed from bootstrap-build-v1 entry {v1_entry.name[:12]}" in step["reason"], step
    assert builds(bw) == 1


# ------------------------------------------------------------ the trust rule holds for v1 entries

def as_v1(entry: Path, source: str | None = None) -> Path:
    """Turn a v2 entry into the v1 entry the scheme before would have made of the same build."""
    inputs = (entry / "inputs.txt").read_text()
    src = next(line for line in inputs.splitlines() if line.startswith("source: "))[len("source: "):]
    v1_key = v1_digest(inputs, source or src)
    lines = [line for line in inputs.splitlines() if not line.startswith("#")]
    lines[0] = "scheme: bootstrap-build-v1"
    lines[1] = f"source: {source or src}"
    (entry / "inputs.txt").write_text("\n".join(lines) + "\n")  # keeps its owner
    os.rename(entry, entry.parent / v1_key)
    return entry.parent / v1_key


def test_a_v1_entry_another_user_could_have_replaced_is_not_adopted(shared):
    s = shared
    group_home(s)
    recipe = s.recipe("k")
    step = s.run(recipe, s.user_dir / "venv", "002", user=True)
    assert step["reason"].startswith("built in") and builds(s.bw) == 1
    [entry] = s.entries()
    v1_entry = as_v1(entry)
    s.tamper(v1_entry)
    explain = s.bootstrap(["plan", recipe, "--venv", s.user_dir / "venv", "--explain"], "002")
    assert f"in the build cache as bootstrap-build-v1 entry {v1_entry.name[:12]}" in explain.stdout, explain.stdout
    step = s.run(recipe, s.top / "v1", "002")
    assert not s.marker.exists(), f"the planted .pth ran as uid {s.marker.read_text()}"
    assert not s.evil_installed(s.top / "v1")
    assert step["reason"].startswith("built in"), step
    log = Path(step["log"]).read_text()
    assert (f"passing over a bootstrap-build-v1 build cache entry: another user could have written it: "
            f"uid {s.user.pw_uid} ({s.user.pw_name})") in log and "it is not signed" in log, log
    assert builds(s.bw) == 2


def test_a_signed_v1_entry_of_a_trusted_key_is_rekeyed(shared):
    old = os.environ.get("BOOTSTRAP_V1_BIN")
    if not old:
        pytest.skip("BOOTSTRAP_V1_BIN (a bootstrap with build keys of scheme bootstrap-build-v1) not set")
    s = shared
    group_home(s)
    recipe = s.recipe("s")
    pub = s.keygen(user=True)
    ours = s.bw.bootstrap
    try:
        s.bw.bootstrap = Path(old)  # the other member built it with the bootstrap before
        step = s.run(recipe, s.user_dir / "venv", "002", user=True)
    finally:
        s.bw.bootstrap = ours
    assert step["reason"].startswith("built in") and builds(s.bw) == 1
    [v1_entry] = s.entries()
    assert (v1_entry / "inputs.txt").read_text().startswith("scheme: bootstrap-build-v1\n")
    # Not trusting the key: passed over, built here.
    step = s.run(recipe, s.top / "v1", "002")
    assert step["reason"].startswith("built in") and builds(s.bw) == 2, step
    assert "which you do not trust" in Path(step["log"]).read_text()
    # Trusting it: re-keyed, not built.
    shutil.rmtree(next(p for p in s.entries() if p != v1_entry))
    step = s.run(recipe, s.top / "v2", "002", extra={"BOOTSTRAP_TRUSTED_KEYS": pub})
    assert f"re-keyed from bootstrap-build-v1 entry {v1_entry.name[:12]}" in step["reason"], step
    assert builds(s.bw) == 2
