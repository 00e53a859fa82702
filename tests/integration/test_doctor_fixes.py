"""Issue 20 item 5: doctor inside an image (no `--recipe`) honours the overrides the venv's
recipe declared, and every fix doctor prints works as printed: the step that provides the
module (TransformerEngine's torch extension is built by the step verifying
`transformer_engine.pytorch`, not by the one installing transformer_engine), `--venv` of the
venv examined (not the recipe's default one), and the version a pin asks for (not a reinstall
of the version that breaks it). Each fix is run here, and doctor is clean afterwards."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

import recipes as R
from conftest import make_wheelhouse

# A TransformerEngine stand-in: the package installs demo_te/pytorch/, which imports the torch
# extension a later build step makes (transformer_engine_torch in the real thing).
TE_PACKAGES = """
[[package]]
name = "demo-te"
versions = ["2.14.1"]
files = { "demo_te/pytorch/__init__.py" = "import demo_te_torch\\nEXT = demo_te_torch.NAME\\n" }
"""

WRITE_EXT = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('NAME = 42\\n')"


def doctor(world, venv: Path, *args):
    proc, doc = world.run_json(["doctor", "--venv", venv, *args])
    assert proc.returncode in (0, 3), proc.stderr
    return proc, doc["findings"]


def run_fix(world, command: str) -> subprocess.CompletedProcess:
    """Run a printed fix in a shell whose PATH has bootstrap and uv, as a user's would."""
    path = f"{world.bootstrap.parent}{os.pathsep}{world.uv.parent}{os.pathsep}{os.environ['PATH']}"
    proc = subprocess.run(command, shell=True, env=world.full_env({"PATH": path}), cwd="/",
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{command}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


@pytest.fixture
def te_index(index_factory, tmp_path_factory):
    return index_factory(root=make_wheelhouse(tmp_path_factory.mktemp("te") / "wheels", TE_PACKAGES))


def test_doctor_without_a_recipe_reports_the_recorded_override_as_declared(world):
    recipe = R.write_recipe(world.root, steps=R.pipeline(world.index)[:3])  # cublas over torch's pin
    assert world.run([recipe]).returncode == 0
    record = world.venv / ".bootstrap" / "declared-overrides.txt"
    digest = hashlib.sha256(recipe.read_bytes()).hexdigest()
    lines = [line for line in record.read_text().splitlines() if not line.startswith("#")]
    assert lines == [f"recipe {digest} {recipe}", "override cublas demo-torch nvidia-cublas"]

    # As the README tells node admins: no --recipe. The override is declared: info, exit 0.
    proc, findings = doctor(world, world.venv)
    assert proc.returncode == 0, findings
    [info] = [f for f in findings if f["rule"] == "deps"]
    assert info["severity"] == "info"
    assert info["message"] == "nvidia-cublas 13.4.1.1 is installed over demo-torch's pin ==13.1.0.3 on purpose"
    assert info["explain"] == (f"the venv's recipe declares it (recorded by its last run in {record}): "
                               "step 'cublas' has allow_conflicts = [\"demo-torch\"]")
    text = world.run(["doctor", "--venv", world.venv])
    assert text.returncode == 0
    assert "dependencies: 2 distributions satisfied (1 override declared)" in text.stdout, text.stdout

    # A no-op run writes nothing; a venv without the record (an older bootstrap's) gets it
    # back from its next run.
    before = record.stat().st_mtime_ns
    assert world.run([recipe]).returncode == 0
    assert record.stat().st_mtime_ns == before
    record.unlink()
    assert world.run([recipe]).returncode == 0
    assert record.exists()


def test_an_undeclared_pin_conflict_fix_installs_the_pinned_version(world):
    recipe = R.write_recipe(world.root, steps=R.pipeline(world.index)[:3])
    assert world.run([recipe]).returncode == 0
    # A venv that records no declaration (an older bootstrap made it): the conflict is an
    # error, and the fix installs what the pin asks for, from the index the run used.
    (world.venv / ".bootstrap" / "declared-overrides.txt").unlink(missing_ok=True)
    proc, findings = doctor(world, world.venv)
    assert proc.returncode == 3
    [err] = [f for f in findings if f["rule"] == "deps"]
    assert err["message"] == "demo-torch 2.11.0+cu130 requires nvidia-cublas==13.1.0.3, but 13.4.1.1 is installed"
    command = (f"uv pip install --python {world.venv}/bin/python --index-url {world.index.url('main')} "
               "nvidia-cublas==13.1.0.3")
    assert err["fix"].startswith(f"install what demo-torch pins (nvidia-cublas==13.1.0.3): {command}; or, "), err
    assert "--reinstall" not in err["fix"]
    assert "allow_conflicts = [\"demo-torch\"] on step 'cublas'" in err["fix"]

    run_fix(world, command)
    assert world.version_of("nvidia-cublas") == "13.1.0.3"
    proc, findings = doctor(world, world.venv)
    assert proc.returncode == 0, findings
    assert [f for f in findings if f["rule"] == "deps"] == []


def test_fix_reruns_the_step_that_verifies_the_module_in_the_venv_examined(world, te_index):
    steps = [
        R.venv(),
        R.install("te-core", ["demo-te"], index_url=te_index.url(), verify=[R.imp("demo_te")]),
        R.run("te-torch", ["{venv.python}", "-c", WRITE_EXT, "{python.site_packages}/demo_te_torch.py"],
              creates="{python.site_packages}/demo_te_torch.py", verify=[R.imp("demo_te.pytorch", "EXT")]),
    ]
    recipe = R.write_recipe(world.root, steps=steps)
    # Not the recipe's default venv: a fix without --venv would act on another one.
    other = world.root / "nodes" / "venv-a"
    assert world.run([recipe, "--venv", other]).returncode == 0
    proc, findings = doctor(world, other, "--recipe", recipe)
    assert proc.returncode == 0, findings

    ext = next(other.glob("lib/python*/site-packages/demo_te_torch.py"))
    ext.unlink()  # the extension is gone; transformer_engine's files are all there
    proc, findings = doctor(world, other, "--recipe", recipe)
    assert proc.returncode == 3
    [err] = [f for f in findings if f["rule"] == "import" and f["severity"] == "error"]
    assert err["message"].startswith("import demo_te.pytorch fails: ModuleNotFoundError: No module named 'demo_te_torch'")
    assert any(e.startswith("asked for by: recipe step 'te-torch'") for e in err["evidence"]), err
    command = f"bootstrap run {recipe} --venv {other} --only te-torch --force"
    assert err["fix"] == f"re-run step 'te-torch' ({command})", err

    run_fix(world, command)
    assert ext.exists()
    proc, findings = doctor(world, other, "--recipe", recipe)
    assert proc.returncode == 0, findings
    assert not world.venv.exists()  # the recipe's default venv was never touched


def test_a_missing_dependency_fix_carries_the_venv_and_repairs_it(world):
    recipe = R.write_recipe(world.root, steps=[
        R.venv(), R.install("transformers", ["transformers"], index_url=world.index.url("main"),
                            verify=[R.imp("transformers", "AutoTokenizer")])])
    other = world.root / "elsewhere"
    assert world.run([recipe, "--venv", other]).returncode == 0
    world.uv_pip("uninstall", "regex", venv=other)
    proc, findings = doctor(world, other, "--recipe", recipe)
    assert proc.returncode == 3
    [err] = [f for f in findings if f["rule"] == "import" and f["severity"] == "error"]
    rerun = f"bootstrap run {recipe} --venv {other} --only transformers --force"
    assert err["fix"].startswith(f"re-run step 'transformers' ({rerun}) / uv pip install --python "
                                 f"{other}/bin/python --index-url {world.index.url('main')} --reinstall transformers")
    run_fix(world, re.search(r"\((bootstrap run [^)]*)\)", err["fix"]).group(1))
    assert world.version_of("regex", venv=other) == "2024.1.0"
    proc, findings = doctor(world, other, "--recipe", recipe)
    assert proc.returncode == 0, findings
