"""`bootstrap doctor` says what a venv (an image's venv) was built for against the GPU it runs on:
the arch a run recorded in the venv's journal (and history) (`--arch 9.0`, as `bootstrap containerfile` passes
it) against the GPUs a probe sees here. The GPU is a stand-in `nvidia-smi` on PATH (the driver and
NVML probes are pointed at nothing); the venv holds the fixture `fastext` built by a build step
whose TORCH_CUDA_ARCH_LIST is `{device.torch_arch_list}`. Also: `history` on a copied venv and
`diff` of two exported manifests (two image versions)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import recipes as R

NO_GPU = {"BOOTSTRAP_LIBCUDA": "/nonexistent/libcuda.so.1",
          "BOOTSTRAP_LIBNVML": "/nonexistent/libnvidia-ml.so.1"}
A100 = "NVIDIA A100-SXM4-80GB, 8.0, 580.65.06"
H200 = "NVIDIA H200, 9.0, 580.65.06"


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


@pytest.fixture
def aw(world, sources):
    """The world plus a private BOOTSTRAP_HOME, a copy of fastext and a recipe building it for
    {device.torch_arch_list}."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) to build fastext")
    world.home = world.root / "home"
    world.env["BOOTSTRAP_HOME"] = str(world.home)
    tree = world.root / "fastext"
    shutil.copytree(sources["tree"], tree)
    step = {"id": "fastext", "kind": "build", "source": {"path": str(tree)},
            "env": {"TORCH_CUDA_ARCH_LIST": "{device.torch_arch_list}"},
            "verify": [{"import": "fastext", "attr": "answer"}]}
    world.steps = [R.venv(), step]
    world.recipe = R.write_recipe(world.root, steps=world.steps)
    return world


def gpu_env(world, *lines: str) -> dict:
    """An environment whose only GPU answer is a stand-in nvidia-smi printing `lines` (none: no
    nvidia-smi at all)."""
    env = dict(NO_GPU)
    bindir = world.root / "fake-bin"
    shutil.rmtree(bindir, ignore_errors=True)
    bindir.mkdir()
    if lines:
        smi = bindir / "nvidia-smi"
        smi.write_text("#!/bin/sh\n" + "".join(f"echo '{line}'\n" for line in lines))
        smi.chmod(0o755)
    env["PATH"] = f"{bindir}{os.pathsep}{world.env['PATH']}"
    return env


def doctor(world, venv: Path, env: dict, *args):
    proc, doc = world.run_json(["doctor", "--venv", venv, *args], env=env)
    assert proc.returncode in (0, 3), proc.stderr
    [summary] = [c["summary"] for c in doc["checks"] if c["group"] == "built for"]
    found = [f for f in doc["findings"] if f["rule"] == "built-for"]
    return proc, summary, found


def test_doctor_says_what_the_venv_was_built_for_against_this_gpu(aw):
    ok(aw.run([aw.recipe, "--arch", "9.0"], env=NO_GPU))
    newest = sorted((aw.venv / ".bootstrap" / "history").glob("*.json"))[-1]
    assert json.loads(newest.read_text())["device"]["cuda_archs_from"] == "--arch 9.0"

    # An A100 node: an error naming both sides and where each comes from, and the fix.
    proc, summary, [f] = doctor(aw, aw.venv, gpu_env(aw, A100))
    assert proc.returncode == 3
    assert f["severity"] == "error"
    assert f["message"] == ("this venv (image) was built for 9.0 (--arch 9.0); this GPU is 8.0 "
                            "(NVIDIA A100-SXM4-80GB, probe 'nvidia-smi')")
    # The journal keeps the newest run's device facts (the history entry has them too).
    journal = aw.venv / ".bootstrap" / "journal.json"
    assert f"recorded in {journal}: device.cuda_archs = 9.0, cuda_archs_from = --arch 9.0" in f["evidence"]
    # No --recipe: the fix names the recipe the venv's run read (still there, unchanged) and
    # this venv.
    assert f"bootstrap run {aw.recipe} --venv {aw.venv} --arch 8.0" in f["fix"], f["fix"]
    assert "bootstrap containerfile" in f["fix"]
    assert summary == "built for: 9.0 (--arch 9.0) does not run on this GPU"
    text = aw.run(["doctor", "--venv", aw.venv], env=gpu_env(aw, A100))
    assert text.returncode == 3
    assert "this venv (image) was built for 9.0 (--arch 9.0); this GPU is 8.0" in text.stdout
    assert "built for: 9.0 (--arch 9.0) does not run on this GPU\n" in text.stdout

    # With the recipe, the fix names it.
    _, _, [named] = doctor(aw, aw.venv, gpu_env(aw, A100), "--recipe", aw.recipe)
    assert f"bootstrap run {aw.recipe} --venv {aw.venv} --arch 8.0" in named["fix"]

    # A recipe that trusts only the driver's answer: nvidia-smi's is no GPU, and doctor says why.
    strict = R.write_recipe(aw.root, "strict.toml", steps=[R.venv()],
                            header='[device]\nprobes = ["driver"]\n')
    _, summary, [f] = doctor(aw, aw.venv, gpu_env(aw, A100), "--recipe", strict)
    assert summary == "built for: 9.0 (--arch 9.0); no GPU detected, nothing compared"
    assert ("no GPU: nvidia-smi: sees 1 GPU(s), but is not in the recipe's [device] probes "
            "(driver)") in f["evidence"], f["evidence"]

    # An H200 node: passed.
    _, summary, [f] = doctor(aw, aw.venv, gpu_env(aw, H200))
    assert f["severity"] == "info"
    assert f["message"] == ("this venv (image) was built for 9.0 (--arch 9.0); this GPU is 9.0 "
                            "(NVIDIA H200, probe 'nvidia-smi'): its code runs there")
    assert summary == "built for: 9.0 (--arch 9.0) runs on this GPU"

    # No GPU here: nothing compared, and that is no error.
    _, summary, [f] = doctor(aw, aw.venv, gpu_env(aw))
    assert f["severity"] == "info"
    assert summary == "built for: 9.0 (--arch 9.0); no GPU detected, nothing compared"
    assert any(e.startswith("no GPU: nvidia-smi: ") for e in f["evidence"]), f["evidence"]

    # --arch names the device instead of a probe (a login node checking an image for A100s).
    _, summary, [f] = doctor(aw, aw.venv, gpu_env(aw, H200), "--arch", "8.0")
    assert f["message"] == "this venv (image) was built for 9.0 (--arch 9.0); this GPU is 8.0 (--arch 8.0)"
    proc = aw.run(["doctor", "--venv", aw.venv, "--arch", "Hoper"], env=NO_GPU)
    assert proc.returncode == 2 and "--arch: " in proc.stderr and "Hoper" in proc.stderr, proc.stderr


def test_an_arch_detected_at_build_time_is_named_as_detected(aw):
    # Built on an H200 node (the recipe trusts nvidia-smi), then run on an A100 one.
    recipe = R.write_recipe(aw.root, "detect.toml", steps=aw.steps,
                            header='[device]\nprobes = ["nvidia-smi"]\n')
    ok(aw.run([recipe], env=gpu_env(aw, H200)))
    proc, summary, [f] = doctor(aw, aw.venv, gpu_env(aw, A100))
    assert f["message"] == ("this venv (image) was built for 9.0 (detected by probe 'nvidia-smi'); "
                            "this GPU is 8.0 (NVIDIA A100-SXM4-80GB, probe 'nvidia-smi')")
    assert "the build saw: NVIDIA H200 (9.0)" in f["evidence"], f["evidence"]


def test_launch_refuses_a_venv_built_for_another_gpu(aw):
    ok(aw.run([aw.recipe, "--arch", "9.0"], env=NO_GPU))
    proc = aw.run(["launch", aw.recipe, "--", "true"], env=gpu_env(aw, A100))
    assert proc.returncode == 3, proc.stderr
    assert "this venv (image) was built for 9.0 (--arch 9.0); this GPU is 8.0" in proc.stderr
    assert "launch refused" in proc.stderr


def test_a_copied_venv_keeps_its_history_and_two_versions_diff(aw, tmp_path):
    ok(aw.run([aw.recipe, "--arch", "9.0"], env=NO_GPU))
    first = sorted((aw.venv / ".bootstrap" / "history").glob("*.json"))[-1]
    exported = tmp_path / "image-1.json"
    shutil.copy(first, exported)

    # The venv as an image holds it: copied elsewhere, its history lists and doctor reads it.
    copy = tmp_path / "image" / "venv"
    shutil.copytree(aw.venv, copy, symlinks=True)
    proc = ok(aw.run(["history", "--venv", copy]))
    assert "after" in proc.stdout and aw.recipe.stem in proc.stdout, proc.stdout
    _, summary, [f] = doctor(aw, copy, gpu_env(aw, A100))
    assert f["severity"] == "error"
    assert f"recorded in {copy}/.bootstrap/journal.json: device.cuda_archs = 9.0, cuda_archs_from = --arch 9.0" \
        in f["evidence"], f["evidence"]

    # Version 2 of the image: rebuilt for A100s.
    ok(aw.run([aw.recipe, "--arch", "8.0"], env=NO_GPU))
    second = sorted((aw.venv / ".bootstrap" / "history").glob("*.json"))[-1]
    assert second != first
    exported2 = tmp_path / "image-2.json"
    shutil.copy(second, exported2)
    _, summary, [f] = doctor(aw, aw.venv, gpu_env(aw, A100))
    assert f["severity"] == "info" and summary == "built for: 8.0 (--arch 8.0) runs on this GPU"

    # Two exported manifests diff by path, without a venv: the arch and the rebuilt package.
    proc = aw.run(["diff", exported, exported2])
    assert proc.returncode == 0, proc.stderr
    assert "device.cuda_archs" in proc.stdout and "9.0" in proc.stdout and "8.0" in proc.stdout, proc.stdout
    assert "fastext" in proc.stdout, proc.stdout
    proc, doc = aw.run_json(["diff", exported, exported2])
    assert doc["same"] is False
    facts = json.dumps(doc)
    assert "device.cuda_archs_from" in facts, doc
    assert aw.run(["diff", exported, exported2, "--exit-code"]).returncode == 1


# --------------------------------------------------------------------------- real nvcc output


def site_packages(world) -> Path:
    r = world.python("import sysconfig; print(sysconfig.get_paths()['purelib'])")
    assert r.returncode == 0, r.stderr
    return Path(r.stdout.strip())


def test_without_a_recorded_arch_the_extensions_fatbins_tell(world, tiny_extensions):
    # A venv whose run recorded no arch (no {device.*} placeholder) holding an sm_90 extension.
    recipe = R.write_recipe(world.root, steps=[R.venv()])
    ok(world.run([recipe], env=NO_GPU))
    target = site_packages(world) / "tinyext" / "_kernels.so"
    target.parent.mkdir()
    shutil.copy(tiny_extensions["90"], target)

    proc, summary, [f] = doctor(world, world.venv, gpu_env(world, A100))
    assert proc.returncode == 3
    assert f["message"] == ("this venv (image) was built for 9.0 (the CUDA code of its CUDA "
                            "library); this GPU is 8.0 (NVIDIA A100-SXM4-80GB, probe 'nvidia-smi')")
    assert f"{target}: sm_90 SASS" in f["evidence"]
    assert summary == ("built for: no arch recorded in the history; 1 of 1 CUDA library carries "
                       "no code for this GPU")
    _, summary, [f] = doctor(world, world.venv, gpu_env(world, H200))
    assert f["severity"] == "info"


def test_a_build_that_ignored_the_recorded_arch_is_found(aw, tiny_extensions):
    ok(aw.run([aw.recipe, "--arch", "9.0"], env=NO_GPU))
    # An extension built for 8.0 whatever the recipe said (its own arch list).
    target = site_packages(aw) / "fastext" / "_kernels.so"
    shutil.copy(tiny_extensions["80"], target)
    proc, summary, found = doctor(aw, aw.venv, gpu_env(aw, H200))
    assert proc.returncode == 3
    assert [f["severity"] for f in found] == ["info", "error"]
    assert found[1]["message"] == (
        "the history says this venv (image) was built for 9.0 (--arch 9.0); this GPU is 9.0 "
        "(NVIDIA H200, probe 'nvidia-smi'), but 1 CUDA library in the venv carries no code for it")
    assert f"{target}: sm_80 SASS" in found[1]["evidence"]
    assert summary == ("built for: 9.0 (--arch 9.0) runs on this GPU, but 1 CUDA library carries "
                       "no code for it")
