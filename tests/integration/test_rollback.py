"""`bootstrap rollback`: make a venv match a manifest exactly (names, versions, RECORD digests).

Each scenario builds a venv directly with uv or pip (a pip venv comes from `python -m venv`),
takes S0 with `bootstrap snapshot`, changes the venv behind bootstrap's back (upgrade,
downgrade, a reinstall from a different wheel of the same version, an add, a remove, and a
locally built wheel replaced by another), rolls back and compares a new snapshot with S0.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_wheelhouse

LOCAL_DATA = '''
[[package]]
name = "mylocal"
versions = ["1.0", "2.0"]
module = """
BUILT_HERE = True
"""

[[package]]
name = "regex"
versions = ["2024.1.0"]
module = """
REBUILT = "not the index's regex"
"""

# Two projects that ship the same module (a renamed project, a full and a lite build).
[[package]]
name = "cvlite"
import_name = "sharedcv"
versions = ["1.0", "2.0"]
module = """
FLAVOUR = "lite"
"""

[[package]]
name = "cvfull"
import_name = "sharedcv"
versions = ["1.0"]
module = """
FLAVOUR = "full"
"""
'''

S0_REQUIREMENTS = ["demo-core==1.0.0", "demo-utils==1.0.0", "transformers", "click"]


@pytest.fixture(scope="session")
def local_builds(tmp_path_factory) -> Path:
    """mylocal 1.0/2.0, a regex 2024.1.0 whose bytes differ from the index's, and cvlite/cvfull
    (both ship the module sharedcv)."""
    return make_wheelhouse(tmp_path_factory.mktemp("local-builds") / "w", LOCAL_DATA) / "main"


class Scenario:
    """One venv, built with `kind` ("uv" or "pip"), and the paths of its local wheels."""

    def __init__(self, world, kind: str, local_builds: Path):
        self.world = world
        self.kind = kind
        self.venv = world.venv
        self.py = self.venv / "bin" / "python"
        self.dist = world.root / "dist"  # where "the build" put its wheels
        self.alt = world.root / "alt"    # another build of regex 2024.1.0
        self.dist.mkdir()
        self.alt.mkdir()
        for wheel in ("mylocal-1.0", "mylocal-2.0", "cvlite-1.0", "cvlite-2.0", "cvfull-1.0"):
            shutil.copy2(local_builds / f"{wheel}-py3-none-any.whl", self.dist)
        shutil.copy2(local_builds / "regex-2024.1.0-py3-none-any.whl", self.alt)
        self.index_url = world.index.url()
        if kind == "uv":
            self.cmd([str(world.uv), "venv", "-q", "--python", sys.executable, str(self.venv)])
        else:
            self.cmd([sys.executable, "-m", "venv", str(self.venv)])

    def cmd(self, argv) -> subprocess.CompletedProcess:
        r = subprocess.run([str(a) for a in argv], env=self.world.full_env(), capture_output=True,
                           text=True, timeout=180)
        assert r.returncode == 0, f"{argv}:\n{r.stdout}\n{r.stderr}"
        return r

    def install(self, *args):
        if self.kind == "uv":
            return self.cmd([self.world.uv, "pip", "install", "-q", "--python", self.py, *args])
        return self.cmd([self.py, "-m", "pip", "install", "-q", *args])

    def reinstall(self, *args):
        return self.install("--reinstall" if self.kind == "uv" else "--force-reinstall", "--no-deps", *args)

    def uninstall(self, *names):
        if self.kind == "uv":
            return self.cmd([self.world.uv, "pip", "uninstall", "-q", "--python", self.py, *names])
        return self.cmd([self.py, "-m", "pip", "uninstall", "-y", "-q", *names])

    def build_s0(self) -> Path:
        self.install("--index-url", self.index_url, *S0_REQUIREMENTS)
        self.install("--no-deps", self.dist / "mylocal-1.0-py3-none-any.whl")
        return self.snapshot("s0.json")

    def change_everything(self):
        self.install("--index-url", self.index_url, "demo-core==2.0.0")          # upgrade
        self.install("--index-url", self.index_url, "--no-deps", "demo-utils==0.9.0")  # downgrade
        self.reinstall(self.alt / "regex-2024.1.0-py3-none-any.whl")              # other bytes
        self.install("--index-url", self.index_url, "wandb")                     # add (+ deps)
        self.uninstall("transformers")                                           # remove
        self.install("--no-deps", self.dist / "mylocal-2.0-py3-none-any.whl")    # local rebuild

    def snapshot(self, name: str) -> Path:
        out = self.world.root / name
        proc = self.world.run(["snapshot", "--venv", self.venv, "-o", out])
        assert proc.returncode == 0, proc.stderr
        return out

    def rollback(self, *args, env=None) -> subprocess.CompletedProcess:
        return self.world.run(["rollback", "--venv", self.venv, *args], env=env, timeout=300)


def packages(manifest: Path) -> dict:
    """name -> (version, record_sha256): what 'equal' means for a rollback."""
    doc = json.loads(manifest.read_text())
    return {n: (p["version"], p["record_sha256"]) for n, p in doc["packages"].items()}


def managed_recipe(sc: Scenario, step: str, packages: str, more: str = "") -> Path:
    """A recipe over the scenario's venv: a venv step, then install step `step` of `packages`
    (a TOML list) from the fixture index, `more` added to that step."""
    recipe = sc.world.root / "r.toml"
    recipe.write_text(f'''schema = 1
name = "managed"
[venv]
path = "{sc.venv}"
python = "3.11"
[[step]]
id = "venv"
kind = "venv"
[[step]]
id = "{step}"
kind = "install"
packages = {packages}
index_url = "{sc.world.index.url()}"
{more}''')
    return recipe


@pytest.fixture(params=["uv", "pip"])
def scenario(request, world, local_builds) -> Scenario:
    return Scenario(world, request.param, local_builds)


def test_rollback_to_s0_restores_names_versions_and_records(scenario):
    s0 = scenario.build_s0()
    scenario.change_everything()
    changed = packages(scenario.snapshot("changed.json"))
    assert changed != packages(s0)

    # uv's cache cold (another node's, say): nothing to restore from it, every package through
    # the installers (test_index_down_with_uv_cache_warm covers the warm cache).
    cold = {"UV_CACHE_DIR": str(scenario.world.root / "cold-uv-cache")}
    proc = scenario.rollback("--to", s0, "--index-url", scenario.index_url, env=cold)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "3 to remove, 5 to install" in out
    for line in ["  - wandb 0.22.0 (remove)", "  - demo-requests 2.32.3 (remove)",
                 "  - platformdirs 4.3.6 (remove)",
                 "  ~ demo-core 1.0.0 (2.0.0 -> 1.0.0) from index",
                 "  ~ demo-utils 1.0.0 (0.9.0 -> 1.0.0) from index",
                 "  ~ regex 2024.1.0 (reinstall: RECORD differs) from index",
                 "  + transformers 4.57.1 (missing) from index",
                 f"  ~ mylocal 1.0 (2.0 -> 1.0) from local wheel {scenario.dist}/mylocal-1.0-py3-none-any.whl"]:
        assert line in out, out
    assert "rolled back" in proc.stderr

    after = packages(scenario.snapshot("after.json"))
    assert after == packages(s0)
    history = sorted((scenario.venv / ".bootstrap" / "history").glob("*-rollback.json"))
    assert len(history) == 1
    assert json.loads(history[0].read_text())["run"]["phase"] == "rollback"
    logs = list((scenario.venv / ".bootstrap" / "logs").glob("*/rollback.log"))
    assert len(logs) == 1
    commands = [line for line in logs[0].read_text().splitlines() if line.startswith("$ ")]
    # The whole change in one install command (index packages and the local wheel together),
    # then one uninstall; no dry run: the install resolves before it changes anything.
    assert len(commands) == 2, commands
    assert " install " in commands[0] and "--no-deps" in commands[0], commands
    assert str(scenario.dist / "mylocal-1.0-py3-none-any.whl") in commands[0]
    assert " uninstall " in commands[1], commands
    assert not any("--dry-run" in c for c in commands), commands
    if scenario.kind == "uv":
        # Only the same-version reinstall is named; uv's --reinstall would refresh its cache.
        assert "--reinstall-package regex" in commands[0] and "--reinstall " not in commands[0]

    # Idempotent: a second rollback has nothing to do.
    again = scenario.rollback("--to", s0, "--index-url", scenario.index_url)
    assert again.returncode == 0, again.stderr
    assert "nothing to do" in again.stdout
    assert "already matches" in again.stderr


def test_offline_rollback_from_find_links(scenario, wheelhouse):
    s0 = scenario.build_s0()
    scenario.change_everything()
    scenario.world.index.stop()
    proc = scenario.rollback("--to", s0, "--find-links", wheelhouse / "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "from find-links" in proc.stdout
    assert packages(scenario.snapshot("after.json")) == packages(s0)


def store_entry(home: Path, wheel: Path) -> str:
    """Keep `wheel` in the artifact store the way the engine does (content address, mtime)."""
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    d = home / "artifacts" / "sha256" / sha[:2] / sha
    d.mkdir(parents=True)
    shutil.copy2(wheel, d / wheel.name)
    return sha


def with_artifact(s0: Path, sha: str) -> None:
    doc = json.loads(s0.read_text())
    doc["packages"]["mylocal"]["origin"]["artifact_sha256"] = sha
    s0.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def test_offline_rollback_from_the_artifact_store(scenario, wheelhouse, tmp_path):
    s0 = scenario.build_s0()
    home = tmp_path / "home"
    built = scenario.dist / "mylocal-1.0-py3-none-any.whl"
    with_artifact(s0, store_entry(home, built))
    scenario.change_everything()
    built.unlink()  # the build directory was cleaned
    scenario.world.index.stop()
    proc = scenario.rollback("--to", s0, "--find-links", wheelhouse / "main",
                             env={"BOOTSTRAP_HOME": home})
    assert f"  ~ mylocal 1.0 (2.0 -> 1.0) from artifact store {home}/artifacts/sha256/" in proc.stdout
    after = scenario.snapshot("after.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Restored from the store, the package still records where it was built from.
    assert packages(after) == packages(s0)
    direct_url = next((scenario.venv / "lib").glob("python*/site-packages/mylocal-1.0.dist-info"))
    assert str(built) in (direct_url / "direct_url.json").read_text()


def test_refusal_when_an_artifact_is_missing_changes_nothing(scenario, wheelhouse, tmp_path):
    s0 = scenario.build_s0()
    built = scenario.dist / "mylocal-1.0-py3-none-any.whl"
    sha = hashlib.sha256(built.read_bytes()).hexdigest()
    with_artifact(s0, sha)
    scenario.change_everything()
    built.unlink()
    before = packages(scenario.snapshot("before.json"))
    home = tmp_path / "empty-home"
    proc = scenario.rollback("--to", s0, "--find-links", wheelhouse / "main",
                             env={"BOOTSTRAP_HOME": home})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "refused: 1 package(s) cannot be restored" in proc.stderr
    why = (f"mylocal 1.0: {built} no longer exists; artifact sha256:{sha[:12]} is not in the "
           f"store {home}/artifacts")
    assert why in proc.stderr
    assert "nothing was changed" in proc.stderr
    assert "  ! mylocal 1.0: cannot be restored:" in proc.stdout
    assert packages(scenario.snapshot("after.json")) == before


def test_dry_run_changes_nothing(scenario):
    s0 = scenario.build_s0()
    scenario.change_everything()
    before = packages(scenario.snapshot("before.json"))
    proc = scenario.rollback("--to", s0, "--index-url", scenario.index_url, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "3 to remove, 5 to install" in proc.stdout
    assert "dry run: nothing was changed" in proc.stderr
    assert packages(scenario.snapshot("after.json")) == before
    assert not list((scenario.venv / ".bootstrap" / "history").glob("*-rollback.json"))


def test_version_gone_from_the_index_is_refused_before_any_change(world, local_builds):
    sc = Scenario(world, "uv", local_builds)
    s0 = sc.build_s0()
    sc.change_everything()
    before = packages(sc.snapshot("before.json"))
    world.index.set_faults([{"match": "/simple/demo-utils/", "kind": "status", "status": 404}])
    cold = {"UV_CACHE_DIR": str(world.root / "cold-uv-cache")}  # nothing restorable from it
    proc = sc.rollback("--to", s0, "--index-url", sc.index_url, env=cold)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "refused: 1 package(s) failed the reachability check" in proc.stderr
    assert f"demo-utils 1.0.0: not available from index {sc.index_url}" in proc.stderr
    assert packages(sc.snapshot("after.json")) == before


def test_index_down_with_uv_cache_warm(world, local_builds):
    """The index unreachable, uv's cache holding the wheels: the index pins uv installed come
    back from the cache's unpacked wheels (scripts included) without uv and without the index,
    exactly; what the cache cannot give (a local wheel) goes through uv as before."""
    sc = Scenario(world, "uv", local_builds)
    s0 = sc.build_s0()
    sc.install("--index-url", sc.index_url, "demo-core==2.0.0")                 # upgrade (a script)
    sc.install("--index-url", sc.index_url, "--no-deps", "demo-utils==0.9.0")   # downgrade
    sc.uninstall("transformers")                                                # remove
    world.index.set_faults([{"match": "/simple/", "kind": "status", "status": 503}])
    proc = sc.rollback("--to", s0, "--index-url", sc.index_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "restoring 3 package(s) from uv's cache: demo-core, demo-utils, transformers" in proc.stderr
    assert packages(sc.snapshot("after.json")) == packages(s0)
    log = max((sc.venv / ".bootstrap" / "logs").glob("*/rollback.log"), key=lambda p: p.stat().st_mtime)
    assert not [line for line in log.read_text().splitlines() if line.startswith("$ ")]  # no uv at all
    script = sc.venv / "bin" / "demo-core"
    run = subprocess.run([script], capture_output=True, text=True)
    assert run.returncode == 0 and "1.0.0" in run.stdout, run.stdout + run.stderr
    # Nothing left to do, the index still down.
    proc = sc.rollback("--to", s0, "--index-url", sc.index_url)
    assert proc.returncode == 0 and "nothing to do" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_failed_install_changes_nothing_and_a_rerun_finishes(world, local_builds, tmp_path):
    sc = Scenario(world, "uv", local_builds)
    s0 = sc.build_s0()
    sc.change_everything()
    before = packages(sc.snapshot("before.json"))
    # A cold uv cache: transformers must be downloaded, and its wheel is gone (its metadata,
    # PEP 658, is not: a dry run would pass). uv fails before it changes anything.
    cold = {"UV_CACHE_DIR": str(tmp_path / "cold-cache")}
    world.index.set_faults([{"match": r"transformers-.*\.whl$", "kind": "status", "status": 404}])
    proc = sc.rollback("--to", s0, "--index-url", sc.index_url, env=cold)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "installing from index" in proc.stderr and "failed" in proc.stderr
    assert "transformers" in proc.stderr  # the installer's own words, in the log tail
    assert "nothing was changed" in proc.stderr
    assert packages(sc.snapshot("after-failure.json")) == before
    world.index.clear_faults()
    proc = sc.rollback("--to", s0, "--index-url", sc.index_url, env=cold)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert packages(sc.snapshot("after.json")) == packages(s0)


def test_interrupted_rollback_reruns_to_completion(world, local_builds, tmp_path):
    """SIGINT after the install and before the uninstall leaves a partly rolled back venv;
    the same rollback run again plans from there and finishes."""
    sc = Scenario(world, "uv", local_builds)
    s0 = sc.build_s0()
    sc.change_everything()
    wrapper = tmp_path / "bin" / "uv"
    wrapper.parent.mkdir()
    wrapper.write_text(f"""#!/bin/sh
if [ "$1 $2" = "pip uninstall" ]; then kill -INT $PPID; sleep 30; fi
exec {world.uv} "$@"
""")
    wrapper.chmod(0o755)
    path = f"{wrapper.parent}{os.pathsep}{world.full_env()['PATH']}"
    proc = sc.rollback("--to", s0, "--index-url", sc.index_url, env={"PATH": path})
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert "run the same rollback again to finish it" in proc.stderr
    partial = packages(sc.snapshot("partial.json"))
    assert partial["demo-core"] == packages(s0)["demo-core"]  # installed
    assert "wandb" in partial                                  # not yet removed
    proc = sc.rollback("--to", s0, "--index-url", sc.index_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 to remove" in proc.stdout and "to install" not in proc.stdout
    assert packages(sc.snapshot("after.json")) == packages(s0)


def test_an_extra_leaves_the_files_a_restored_package_shares_with_it(scenario):
    """cvlite and cvfull both ship sharedcv/: installing cvlite 1.0 back and then removing
    cvfull must leave cvlite's files in place."""
    scenario.build_s0()
    scenario.install("--no-deps", scenario.dist / "cvlite-1.0-py3-none-any.whl")
    s0 = scenario.snapshot("s0-cv.json")
    scenario.install("--no-deps", scenario.dist / "cvlite-2.0-py3-none-any.whl")
    scenario.install("--no-deps", scenario.dist / "cvfull-1.0-py3-none-any.whl")
    proc = scenario.rollback("--to", s0, "--index-url", scenario.index_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "  - cvfull 1.0 (remove)" in proc.stdout
    assert packages(scenario.snapshot("after.json")) == packages(s0)
    probe = scenario.cmd([scenario.py, "-c", "import sharedcv; print(sharedcv.FLAVOUR)"])
    assert probe.stdout.strip() == "lite"


def test_invalid_target_entries_are_refused_before_any_change(world, local_builds):
    sc = Scenario(world, "uv", local_builds)
    s0 = sc.build_s0()
    sc.change_everything()
    before = packages(sc.snapshot("before.json"))
    doc = json.loads(s0.read_text())
    doc["packages"]["demo-utils"]["version"] = "1.0.0; rm -rf"
    doc["packages"]["regex"]["record_sha256"] = "not-a-digest"
    doc["packages"]["--index-url=http://evil"] = dict(doc["packages"]["click"])
    s0.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    proc = sc.rollback("--to", s0, "--index-url", sc.index_url)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "refused: the target has 3 invalid entries" in proc.stderr
    for line in ["--index-url=http://evil: not a normalised PEP 503 project name",
                 "demo-utils: version '1.0.0; rm -rf' is not a PEP 440 version",
                 "regex: record_sha256 'not-a-digest' is not a sha256 digest"]:
        assert line in proc.stderr, proc.stderr
    assert "nothing was changed" in proc.stderr
    assert packages(sc.snapshot("after.json")) == before


def two_index_scenario(world, local_builds):
    """demo-torch from the cu130 index and the rest from main, recorded as such; then both
    demo-torch and demo-core changed. A rollback needs one command per index."""
    sc = Scenario(world, "uv", local_builds)
    main, cu130 = world.index.url("main"), world.index.url("cu130")
    sc.install("--index-url", main, "--extra-index-url", cu130, "demo-torch==2.11.0+cu130",
               "demo-core==1.0.0")
    s0 = sc.snapshot("s0.json")
    doc = json.loads(s0.read_text())
    for name, p in doc["packages"].items():
        p["origin"]["index_urls"] = [cu130 if name == "demo-torch" else main]
    s0.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    sc.install("--index-url", main, "--no-deps", "demo-torch==2.10.0", "demo-core==2.0.0")
    return sc, s0


def test_a_later_install_command_is_checked_before_the_first_runs(world, local_builds):
    sc, s0 = two_index_scenario(world, local_builds)
    before = packages(sc.snapshot("before.json"))
    world.index.set_faults([{"match": "/main/simple/demo-core/", "kind": "status", "status": 404}])
    cold = {"UV_CACHE_DIR": str(world.root / "cold-uv-cache")}  # every package through uv
    proc = sc.rollback("--to", s0, env=cold)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "refused: 1 package(s) failed the reachability check" in proc.stderr
    assert f"demo-core 1.0.0: not available from index {world.index.url('main')}" in proc.stderr
    # demo-torch's command (the cu130 index) would have succeeded: it did not run.
    assert packages(sc.snapshot("after-refusal.json")) == before

    world.index.clear_faults()
    proc = sc.rollback("--to", s0, env=cold)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert packages(sc.snapshot("after.json")) == packages(s0)
    log = max((sc.venv / ".bootstrap" / "logs").glob("*/rollback.log"), key=lambda p: p.stat().st_mtime)
    commands = [line for line in log.read_text().splitlines() if line.startswith("$ ")]
    assert len(commands) == 3, commands  # the second command's dry run, then both installs
    assert "--dry-run" in commands[0] and world.index.url("main") in commands[0]
    assert world.index.url("cu130") in commands[1] and "--dry-run" not in commands[1]
    assert world.index.url("main") in commands[2] and "--dry-run" not in commands[2]


def test_rollback_last_and_history_numbers(world, local_builds):
    sc = Scenario(world, "uv", local_builds)
    sc.build_s0()
    proc = world.run(["snapshot", "--venv", sc.venv, "--save", "--label", "good"])
    assert proc.returncode == 0, proc.stderr
    good = packages(next((sc.venv / ".bootstrap" / "history").glob("*-good.json")))
    sc.change_everything()
    proc = sc.rollback("--last", "--index-url", sc.index_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert packages(sc.snapshot("after.json")) == good
    # By number too (entry 1 is "good"): nothing left to do.
    proc = sc.rollback("--to", "1", "--index-url", sc.index_url)
    assert proc.returncode == 0, proc.stderr
    assert "nothing to do" in proc.stdout


def test_rollback_usage_errors(world, local_builds):
    sc = Scenario(world, "uv", local_builds)
    proc = world.run(["rollback", "--venv", sc.venv])
    assert proc.returncode == 2
    assert "give exactly one of --to N|FILE and --last" in proc.stderr
    proc = world.run(["rollback", "--to", "1"], env={"VIRTUAL_ENV": None})
    assert proc.returncode == 2
    assert "no venv given" in proc.stderr
    proc = world.run(["rollback", "--to", world.root / "missing.json", "--venv", sc.venv])
    assert proc.returncode != 0


def test_rollback_takes_the_venv_lock(world, local_builds):
    sc = Scenario(world, "uv", local_builds)
    s0 = sc.build_s0()
    lock = sc.venv / ".bootstrap" / "lock"
    lock.parent.mkdir(exist_ok=True)
    with open(lock, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        proc = sc.rollback("--to", s0, "--lock-timeout", "0.5")
    assert proc.returncode != 0
    assert f"held by pid {os.getpid()}" in proc.stderr


def test_engine_keeps_local_wheels_for_rollback(world, local_builds, tmp_path):
    """A recipe step installs a local wheel; the run keeps it in the store, so a rollback
    restores it after the wheel is gone and with the index stopped."""
    sc = Scenario(world, "uv", local_builds)
    home = tmp_path / "home"
    wheel = sc.dist / "mylocal-1.0-py3-none-any.whl"
    recipe = managed_recipe(sc, "local", '["mylocal==1.0"]', f'find_links = ["{sc.dist}"]\n')
    proc = world.run([recipe], env={"BOOTSTRAP_HOME": home})
    assert proc.returncode == 0, proc.stderr
    entries = sorted((sc.venv / ".bootstrap" / "history").glob("*.json"))
    target = entries[-1]
    sha = json.loads(target.read_text())["packages"]["mylocal"]["origin"]["artifact_sha256"]
    assert sha
    # A snapshot of the venv carries the stored wheel, which only the newest history entry knows
    # (the journal does not): that entry is read.
    snap = json.loads(sc.snapshot("managed.json").read_text())
    assert snap["packages"]["mylocal"]["origin"]["artifact_sha256"] == sha
    assert snap["packages"]["mylocal"]["origin"]["step"] == "local"
    sc.install("--no-deps", sc.dist / "mylocal-2.0-py3-none-any.whl")
    wheel.unlink()
    world.index.stop()
    proc = sc.rollback("--to", target, env={"BOOTSTRAP_HOME": home})
    assert "from artifact store" in proc.stdout, proc.stdout + proc.stderr
    after = sc.snapshot("after.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert packages(after) == packages(target)


def test_snapshot_of_a_managed_venv_skips_only_a_history_entry_that_adds_nothing(world, local_builds, tmp_path):
    """A venv whose every package a step installed from an index: the journal gives each its
    step and indexes, so the snapshot does not read the newest history entry (a damaged one
    draws no warning); the manifest is the same as when the entry is read (a `\\u` escape in
    it makes the snapshot read it: an escape could spell a key)."""
    sc = Scenario(world, "uv", local_builds)
    recipe = managed_recipe(sc, "deps", '["demo-core==1.0.0", "click"]')
    proc = world.run([recipe], env={"BOOTSTRAP_HOME": tmp_path / "home"})
    assert proc.returncode == 0, proc.stderr

    def snapshot() -> tuple[str, str]:
        proc = world.run(["snapshot", "--venv", sc.venv])
        assert proc.returncode == 0, proc.stderr
        return proc.stdout, proc.stderr

    skipped, err = snapshot()
    assert "warning" not in err
    doc = json.loads(skipped)
    assert {p["origin"]["step"] for p in doc["packages"].values()} == {"deps"}
    assert all(p["origin"]["index_urls"] == [world.index.url()] for p in doc["packages"].values())
    newest = sorted((sc.venv / ".bootstrap" / "history").glob("*.json"))[-1]
    text = newest.read_text()
    assert '"label": "after"' in text and "artifact_sha256" not in text
    newest.write_text(text + "not JSON")
    assert snapshot() == (skipped, err)
    escaped = text.replace('"label": "after"', '"label": "\\u0061fter"')
    newest.write_text(escaped)
    assert snapshot() == (skipped, err)
    newest.write_text(escaped + "not JSON")
    out, err = snapshot()
    assert out == skipped and "warning" in err and newest.name in err
