"""Reproducible state: SOURCE_DATE_EPOCH dates what a run records and derives its run id, and
`bootstrap seal` removes what belongs to this host and moment, so two clean runs of the same
recipe into the same path leave the same bytes (what an image layer needs; test_image.py
checks the layer itself)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import recipes as R

EPOCH = "1700000000"  # 2023-11-14T22:13:20Z


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nargv={proc.args}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def state_files(venv: Path) -> dict[str, str]:
    """venv-relative path -> sha256 of bootstrap's state and every dist-info file."""
    out = {}
    roots = [venv / ".bootstrap", *venv.glob("lib/python*/site-packages/*.dist-info")]
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                out[str(p.relative_to(venv))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def repro(world, sources):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    project, steps = R.torch_and_fastext(world, sources)
    return R.write_recipe(project, "repro.toml", name="repro", steps=steps, venv_path=str(world.venv))


def test_two_clean_runs_leave_the_same_state_once_sealed(world, repro):
    states = []
    home, uv_cache = world.root / "home", world.root / "uv-cache"
    env = {"SOURCE_DATE_EPOCH": EPOCH, "BOOTSTRAP_HOME": str(home), "UV_CACHE_DIR": str(uv_cache)}
    for _ in (1, 2):
        # From nothing each time, at the same paths (as in an image build): no venv, no build
        # cache, no uv cache.
        for d in (world.venv, home, uv_cache):
            shutil.rmtree(d, ignore_errors=True)
        ok(world.run([repro], env=env))
        (after,) = (world.venv / ".bootstrap/history").glob("*-after.json")
        run = json.loads(after.read_text())["run"]
        assert run["time"] == "2023-11-14T22:13:20Z"
        assert re.fullmatch(r"20231114T221320Z-[0-9a-f]{8}", run["run_id"]), run
        journal = json.loads((world.venv / ".bootstrap/journal.json").read_text())
        assert {e["finished_at"] for e in journal["steps"].values()} == {"2023-11-14T22:13:20Z"}
        assert {e["run_id"] for e in journal["steps"].values()} == {run["run_id"]}
        assert list((world.venv / ".bootstrap/logs").iterdir()) == [world.venv / ".bootstrap/logs" / run["run_id"]]
        assert list(world.venv.glob("lib/python*/site-packages/fastext-*.dist-info/uv_cache.json"))

        sealed = ok(world.run(["seal", "--venv", world.venv]))
        assert "removed .bootstrap/logs" in sealed.stdout and "uv_cache.json" in sealed.stdout, sealed.stdout
        states.append(state_files(world.venv))
    differing = sorted(p for p in set(states[0]) | set(states[1]) if states[0].get(p) != states[1].get(p))
    print(f"\nfiles differing: {differing}")
    assert differing == []
    assert not any(re.search(r"(^|/)(logs/.*|.*\.cache|.*\.facts|uv_cache\.json)$", p) for p in states[0])
    # The lock stays, empty (a later no-op run confirms under it without creating a file).
    assert (world.venv / ".bootstrap/lock").read_bytes() == b""

    # The sealed venv is still a venv bootstrap knows: its history reads, and a run keeps it
    # (RECORDs rehashed instead of trusted by stamp, verify clauses run again).
    assert "after" in ok(world.run(["history", "--venv", world.venv])).stdout
    proc, doc = world.run_json([repro], env=env)
    ok(proc)
    results = {s["id"]: s["result"] for s in doc["steps"]}
    assert results["fastext"] != "ran" and results["torch"] != "ran", results
    assert doc["history"]["after"] is None  # nothing changed


def test_a_malformed_source_date_epoch_is_refused_before_anything_is_written(world, repro):
    proc = world.run([repro], env={"SOURCE_DATE_EPOCH": "last tuesday"})
    assert proc.returncode == 2, proc.stderr
    assert "SOURCE_DATE_EPOCH is not a number of seconds since 1970: 'last tuesday'" in proc.stderr
    assert not world.venv.exists()
