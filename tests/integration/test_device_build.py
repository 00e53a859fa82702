"""{device.*} placeholders with --arch / --no-device, and the cuda_arch verify clause against a
real CUDA extension compiled by nvcc (skipped, with the reason, when nvcc is missing)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import recipes as R

# No driver library, no NVML, and only the driver probe decides: "no GPU" on any machine.
NO_GPU = {"BOOTSTRAP_LIBCUDA": "/nonexistent/libcuda.so.1",
          "BOOTSTRAP_LIBNVML": "/nonexistent/libnvidia-ml.so.1"}
DEVICE_HEADER = '[device]\nprobes = ["driver"]\nfallback_arch = "8.9"\n'


def build_step() -> dict:
    return R.run("build", ["true"], env={"TORCH_CUDA_ARCH_LIST": "{device.torch_arch_list}",
                                         "NVTE_CUDA_ARCHS": "{device.nvte_archs}"})


def write(world, steps, header=DEVICE_HEADER) -> Path:
    return R.write_recipe(world.root, steps=steps, header=header)


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


# --------------------------------------------------------------------------- {device.*}

def test_plan_with_arch_shows_the_arch_and_probes_nothing(world):
    recipe = write(world, [R.venv(), build_step()])
    proc = ok(world.run(["plan", recipe, "--arch", "9.0"], env=NO_GPU))
    assert "env set: TORCH_CUDA_ARCH_LIST=9.0\n" in proc.stdout
    assert "env set: NVTE_CUDA_ARCHS=90\n" in proc.stdout
    assert "cuda archs: 9.0 (--arch 9.0)\n" in proc.stdout
    # Nothing was probed, so nothing to confirm or override (test_device_noop.py proves it).
    assert "warning" not in proc.stdout


def test_no_device_and_no_option_fails_naming_both_options(world):
    recipe = write(world, [R.venv(), build_step()])
    for args in (["plan", recipe], [recipe]):
        proc = world.run(args, env=NO_GPU)
        assert proc.returncode == 1, proc.stderr
        assert proc.stdout == ""
        line, _ = R.line_of(recipe, "TORCH_CUDA_ARCH_LIST")
        assert proc.stderr.startswith(f"error: {recipe}:{line}:"), proc.stderr
        assert "no CUDA arch to build for: no GPU was detected" in proc.stderr
        assert "--arch 9.0" in proc.stderr and "--no-device" in proc.stderr
    assert not world.venv.exists()  # failed at plan time, before anything ran


def test_no_device_uses_fallback_arch_loudly(world):
    recipe = write(world, [R.venv(), build_step()])
    proc = ok(world.run(["plan", recipe, "--no-device"], env=NO_GPU))
    assert "env set: TORCH_CUDA_ARCH_LIST=8.9\n" in proc.stdout
    assert "cuda archs: 8.9 ([device] fallback_arch)\n" in proc.stdout
    assert "warning: --no-device: building for 8.9 from the recipe's [device] fallback_arch" in proc.stdout


def test_no_device_without_fallback_arch_is_a_usage_error(world):
    recipe = write(world, [R.venv(), build_step()], header='[device]\nprobes = ["driver"]\n')
    proc = world.run(["plan", recipe, "--no-device"], env=NO_GPU)
    assert proc.returncode == 2, proc.stderr
    assert "--no-device needs the recipe's [device] fallback_arch" in proc.stderr


def test_detected_gpu_through_the_driver_probe(world):
    fake = Path(world.bootstrap).parent / "fixtures" / "libcuda.so.1"
    if not fake.exists():
        pytest.skip(f"stand-in libcuda not built next to the binary ({fake})")
    recipe = write(world, [R.venv(), build_step()])
    env = {**NO_GPU, "BOOTSTRAP_LIBCUDA": str(fake), "FAKE_CUDA_DEVICES": "9.0;8.9"}
    proc = ok(world.run(["plan", recipe], env=env))
    assert "env set: TORCH_CUDA_ARCH_LIST=8.9;9.0\n" in proc.stdout
    assert "cuda archs: 8.9;9.0 (probe 'driver')\n" in proc.stdout


def test_recipe_without_device_placeholders_needs_no_arch(world):
    recipe = write(world, [R.venv(), R.run("a", ["true"])])
    proc = ok(world.run(["plan", recipe], env=NO_GPU))
    assert "cuda archs" not in proc.stdout and "warning" not in proc.stdout


# --------------------------------------------------------------------------- cuda_arch verify

def test_cuda_arch_verify_lists_what_the_library_carries(world, tiny_extensions):
    check = R.check("cuda", [{"cuda_arch": "{device.arch}", "module": "tinyext"},
                             {"cuda_arch": "9.0", "path": "lib/tinyext-copy.so"}])
    recipe = write(world, [R.venv(), check])
    ok(world.run([recipe, "--only", "venv", "--arch", "9.0"], env=NO_GPU))
    r = world.python("import sysconfig; print(sysconfig.get_paths()['purelib']); "
                     "print(sysconfig.get_config_var('EXT_SUFFIX'))")
    site, suffix = r.stdout.split()
    target = Path(site) / f"tinyext{suffix}"
    copy = world.venv / "lib" / "tinyext-copy.so"

    shutil.copy(tiny_extensions["80"], target)
    shutil.copy(tiny_extensions["90"], copy)
    proc = world.run([recipe, "--arch", "9.0"], env=NO_GPU)
    assert proc.returncode == 1, proc.stderr
    assert (f"step 'cuda': verify failed: module tinyext ({target}) has no CUDA code for compute "
            "capability 9.0: it carries sm_80 SASS") in proc.stderr, proc.stderr

    shutil.copy(tiny_extensions["90"], target)
    shutil.copy(tiny_extensions["80"], copy)
    proc = world.run([recipe, "--arch", "9.0"], env=NO_GPU)
    assert proc.returncode == 1, proc.stderr
    assert f"step 'cuda': verify failed: {copy} has no CUDA code for compute capability 9.0" in proc.stderr

    shutil.copy(tiny_extensions["90"], copy)
    proc = ok(world.run([recipe, "--arch", "9.0"], env=NO_GPU))
    assert "warning" not in proc.stderr, proc.stderr
