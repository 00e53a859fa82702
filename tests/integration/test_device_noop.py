"""A no-op re-run never imports torch: with --arch nothing is probed; without it the torch
probe's answer is cached in the venv (<venv>/.bootstrap/torch-probe.json) per installed torch.
Imports are counted by the stand-in torch (tests/fixtures/fake_torch, FAKE_TORCH_IMPORT_LOG),
installed with a dist-info so that it has a RECORD like a real one. Also: what torch prints
while probed (warnings) stays out of `device` output and of a run's."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import recipes as R

REPO = Path(__file__).resolve().parents[2]
FAKE_TORCH = REPO / "tests" / "fixtures" / "fake_torch" / "torch"

# No driver library and no NVML: only the stand-in torch can see a GPU.
NO_GPU = {"BOOTSTRAP_LIBCUDA": "/nonexistent/libcuda.so.1",
          "BOOTSTRAP_LIBNVML": "/nonexistent/libnvidia-ml.so.1"}
HEADER = '[device]\nprobes = ["torch", "driver"]\n'


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def site_packages(world) -> Path:
    r = world.python("import sysconfig; print(sysconfig.get_paths()['purelib'])")
    assert r.returncode == 0, r.stderr
    return Path(r.stdout.strip())


def install_fake_torch(world, version: str) -> None:
    """The stand-in torch as an installer leaves it: the package and a dist-info whose RECORD
    is written anew (a reinstall or an upgrade)."""
    site = site_packages(world)
    shutil.rmtree(site / "torch", ignore_errors=True)
    for old in site.glob("torch-*.dist-info"):
        shutil.rmtree(old)
    shutil.copytree(FAKE_TORCH, site / "torch")
    info = site / f"torch-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    (info / "INSTALLER").write_text("uv\n")
    rows = [f"torch/{p.relative_to(site / 'torch')},," for p in sorted((site / "torch").rglob("*.py"))]
    (info / "RECORD").write_text("\n".join(rows + [f"{info.name}/RECORD,,"]) + "\n")


class Imports:
    """How many interpreters imported the stand-in torch."""

    def __init__(self, root: Path):
        self.log = root / "torch-imports.log"

    def count(self) -> int:
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0


@pytest.fixture
def torch_world(world):
    """A venv made by bootstrap (with --arch: nothing probed) holding the stand-in torch, a
    recipe whose build step needs {device.torch_arch_list}, and the environment for runs."""
    step = R.run("build", ["true"], env={"TORCH_CUDA_ARCH_LIST": "{device.torch_arch_list}"})
    recipe = R.write_recipe(world.root, steps=[R.venv(), step], header=HEADER)
    imports = Imports(world.root)
    env = {**NO_GPU, "FAKE_TORCH_DEVICES": "9.0", "FAKE_TORCH_IMPORT_LOG": str(imports.log)}
    ok(world.run([recipe, "--only", "venv", "--arch", "9.0"], env=env))
    install_fake_torch(world, "2.11.0")
    return world, recipe, env, imports


def test_with_arch_a_run_and_a_plan_start_no_python_for_the_device(torch_world):
    world, recipe, env, imports = torch_world
    first = ok(world.run([recipe, "--arch", "9.0"], env=env))
    assert "warning" not in first.stderr, first.stderr  # nothing to confirm: nothing probed
    ok(world.run([recipe, "--arch", "9.0"], env=env))
    plan = ok(world.run(["plan", recipe, "--arch", "9.0"], env=env))
    assert "cuda archs: 9.0 (--arch 9.0)\n" in plan.stdout
    assert "warning" not in plan.stdout, plan.stdout
    assert imports.count() == 0
    assert not (world.venv / ".bootstrap" / "torch-probe.json").exists()
    # The run changed no distribution (no history entry), yet the venv still says what the
    # build targeted and why: the journal keeps the newest run's device facts for doctor.
    journal = json.loads((world.venv / ".bootstrap" / "journal.json").read_text())
    assert journal["device"] == {"cuda_archs": "9.0", "cuda_archs_from": "--arch 9.0"}
    doctor = world.run(["doctor", "--venv", world.venv, "--json"], env=env)
    assert "journal.json: device.cuda_archs = 9.0" in doctor.stdout, doctor.stdout[-3000:]


def test_without_arch_torch_is_imported_once_per_installed_torch(torch_world):
    world, recipe, env, imports = torch_world
    ok(world.run([recipe], env=env))
    assert imports.count() == 1
    cache = world.venv / ".bootstrap" / "torch-probe.json"
    assert json.loads(cache.read_text())["answer"]["gpus"] == ["0|9|0|Fake GPU sm_90"]
    second = ok(world.run([recipe], env=env))
    assert imports.count() == 1, "the no-op re-run imported torch"
    assert "build" in second.stdout or second.returncode == 0
    plan = ok(world.run(["plan", recipe], env=env))
    assert "cuda archs: 9.0 (probe 'torch')\n" in plan.stdout
    assert imports.count() == 1

    # An upgraded torch (a new RECORD) is asked again, once.
    time.sleep(0.02)  # past the file system's timestamp granularity
    install_fake_torch(world, "2.12.0")
    ok(world.run([recipe], env=env))
    assert imports.count() == 2
    ok(world.run([recipe], env=env))
    assert imports.count() == 2

    # So is the same torch on another set of visible GPUs.
    ok(world.run([recipe], env={**env, "CUDA_VISIBLE_DEVICES": "0"}))
    assert imports.count() == 3


def test_plan_reads_the_torch_cache_but_never_writes_it(torch_world):
    world, recipe, env, imports = torch_world
    ok(world.run(["plan", recipe], env=env))
    ok(world.run(["plan", recipe], env=env))
    assert imports.count() == 2
    assert not (world.venv / ".bootstrap" / "torch-probe.json").exists()


def test_torch_warnings_stay_out_of_device_and_run_output(torch_world):
    world, recipe, env, imports = torch_world
    warn = {**env, "FAKE_TORCH_WARN": "1"}
    # `device` gives torch only the pass-through environment: the settings go in a file.
    (site_packages(world) / "torch" / "_fake_env").write_text(
        "".join(f"{k}={v}\n" for k, v in warn.items() if k.startswith("FAKE_TORCH")))
    proc = ok(world.run(["device", "--venv", world.venv, "--probes", "torch,driver"], env=warn))
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    torch_line = next(line for line in lines if line.startswith("  torch "))
    assert torch_line.endswith("GPU 0 Fake GPU sm_90 9.0; torch 2.11.0+cu130; CUDA 13.0; built for "
                               "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120  <- used"), torch_line
    notes = [line for line in lines if "note: torch printed 2 warnings while probed" in line]
    assert len(notes) == 1, proc.stdout
    # Nowhere else: not as lines of their own, not among the arch list check's flags.
    others = [line for line in lines if ("pynvml" in line or "W1201" in line) and line not in notes]
    assert others == [], proc.stdout
    check = next(line for line in lines if "torch arch list" in line)
    assert check.endswith("TORCH_CUDA_ARCH_LIST=9.0 gives -gencode=arch=compute_90,code=sm_90"), check

    before = imports.count()
    run = ok(world.run([recipe], env=warn))
    assert imports.count() == before + 1  # the run asked torch once, for its cache
    for text in (run.stdout, run.stderr):
        assert "pynvml" not in text and "W1201" not in text and "torch printed" not in text, text
    # Under -v they are shown, as log lines.
    (world.venv / ".bootstrap" / "torch-probe.json").unlink()
    verbose = ok(world.run([recipe, "-v"], env=warn))
    assert "torch probe" in verbose.stderr and "FutureWarning: The pynvml package is deprecated" in verbose.stderr
