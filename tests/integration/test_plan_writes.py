"""What `bootstrap plan` writes. The README says plan "changes nothing"; what it does write is
listed here, so a new write (or one of these going away) is a decision, not an accident:

  - $BOOTSTRAP_HOME/sources/trees/<sha256>.txt: the per-file stat stamps behind a directory
    build source's tree digest (made, with its parent directories, by the first plan of it);
  - <venv>/.bootstrap/torch.facts: torch's version, CUDA and C++ ABI, asked of the venv's
    torch by `plan --explain` for a build step's cache key, once per installed torch;
  - the bytecode that importing torch for it writes, under site-packages/torch/**/__pycache__/
    (bootstrap's child environment does not pass PYTHONDONTWRITEBYTECODE on).

Everything else is read only: the journal, python.facts (plan runs the interpreter query but
leaves the cache to `run`), torch-probe.json (plan reads torch's cached device answer, `run`
writes it), logs, history, the venv lock, a sync project's uv.lock.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

import recipes as R

REPO = Path(__file__).resolve().parents[2]

# Paths (relative to the test world's root; fnmatch patterns) plan may write inside the venv.
PLAN_MAY_WRITE_IN_VENV = [
    "venv/.bootstrap/torch.facts",
    "venv/lib/python3*/site-packages/torch/__pycache__/*.pyc",
    "venv/lib/python3*/site-packages/torch/*/__pycache__/*.pyc",
]


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def tree_state(root: Path) -> dict[str, tuple]:
    """relative path -> (kind, mode, size, mtime_ns, sha256) of everything under `root`;
    directories by kind and mode only (their mtimes follow their entries)."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISDIR(st.st_mode):
                state[rel] = ("dir", st.st_mode)
            elif stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                state[rel] = ("file", st.st_mode, st.st_size, st.st_mtime_ns, digest)
            else:
                state[rel] = ("other", st.st_mode, os.readlink(path) if path.is_symlink() else "")
    return state


def changes(before: dict, after: dict) -> set[str]:
    """Paths added, removed or changed."""
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


def in_venv(paths: set[str]) -> set[str]:
    return {p for p in paths if p == "venv" or p.startswith("venv/")}


def allowed(path: str) -> bool:
    if any(fnmatch.fnmatchcase(path, pattern) for pattern in PLAN_MAY_WRITE_IN_VENV):
        return True
    # The __pycache__ directories those .pyc files go in.
    return path.endswith("/__pycache__") and "/site-packages/torch" in path


def test_plan_changes_nothing_after_a_run(world):
    project = world.root / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "itest-plan"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
        'dependencies = ["demo-core<2"]\n\n'
        f'[[tool.uv.index]]\nname = "fixture"\nurl = "{world.index.url()}"\ndefault = true\n')
    recipe = R.write_recipe(world.root, steps=[
        *R.pipeline(world.index),
        R.sync("sync", "proj", args=["--inexact"], env_unset=["UV_NO_CONFIG"])])
    ok(world.run([recipe]))
    assert (project / "uv.lock").is_file()

    before = tree_state(world.root)
    for args in (["plan", recipe], ["plan", recipe, "--json"], ["plan", recipe, "--explain"]):
        ok(world.run(args))
        assert changes(before, tree_state(world.root)) == set(), args

    # Without the interpreter facts cache, plan asks the interpreter but does not write it.
    (world.venv / ".bootstrap" / "python.facts").unlink()
    before = tree_state(world.root)
    ok(world.run(["plan", recipe]))
    assert changes(before, tree_state(world.root)) == set()


def test_plan_of_a_build_step_writes_only_its_caches(world, sources):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc): the build source's backend needs one")
    home = world.root / "home"
    world.env["BOOTSTRAP_HOME"] = str(home)
    tree = world.root / "fastext"
    shutil.copytree(sources["tree"], tree)
    step = {"id": "fastext", "kind": "build", "source": {"path": str(tree)},
            "env": {"TORCH_CUDA_ARCH_LIST": "{device.torch_arch_list}",
                    "FAKE_TORCH_CUDA": "13.0", "FAKE_TORCH_VERSION": "2.11.0+cu130"}}
    recipe = R.write_recipe(world.root, steps=[R.venv(), step])

    # No venv yet: the first plan records the tree's stamps in $BOOTSTRAP_HOME, nothing else.
    before = tree_state(world.root)
    ok(world.run(["plan", recipe, "--arch", "9.0"]))
    written = changes(before, tree_state(world.root))
    stamps = {p for p in written if p.startswith("home/sources/trees/")}
    assert len(stamps) == 1 and next(iter(stamps)).endswith(".json"), written
    assert written == {"home", "home/sources", "home/sources/trees"} | stamps
    before = tree_state(world.root)
    ok(world.run(["plan", recipe, "--arch", "9.0"]))
    assert changes(before, tree_state(world.root)) == set()

    # A venv holding the stand-in torch: plan reads; plan --explain keys the build on torch.
    ok(world.run([recipe, "--only", "venv", "--arch", "9.0"]))
    site = next((world.venv / "lib").glob("python3*/site-packages"))
    shutil.copytree(REPO / "tests" / "fixtures" / "fake_torch" / "torch", site / "torch")
    info = site / "torch-2.11.0+cu130.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n")
    (info / "RECORD").write_text("")

    before = tree_state(world.root)
    ok(world.run(["plan", recipe, "--arch", "9.0"]))
    ok(world.run(["plan", recipe, "--arch", "9.0", "--json"]))
    assert changes(before, tree_state(world.root)) == set()

    before = tree_state(world.root)
    out = ok(world.run(["plan", recipe, "--arch", "9.0", "--explain"])).stdout
    assert "| torch: 2.11.0+cu130 cuda 13.0 cxx11_abi 1" in out
    written = changes(before, tree_state(world.root))
    print("\nplan --explain wrote:", *sorted(written), sep="\n  ")
    assert "venv/.bootstrap/torch.facts" in written
    assert in_venv(written) == written  # nothing outside the venv this time
    assert {p for p in written if not allowed(p)} == set(), sorted(written)

    before = tree_state(world.root)
    ok(world.run(["plan", recipe, "--arch", "9.0", "--explain"]))
    assert changes(before, tree_state(world.root)) == set()  # the facts are cached now
