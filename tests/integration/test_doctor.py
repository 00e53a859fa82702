"""`bootstrap doctor`, `relocate` and `launch` against the seed's pitfalls, reproduced in the
fixture world: a transformers stand-in that fails without regex (P11/P21), a cuBLASLt stand-in
whose library lacks or has the symbol TransformerEngine needs (P10), a copied venv (P4), a
conflicting pin declared as intended or not (P10), PyPI's unrelated apex, MCORE_DPA_USE_SDPA
(P20) and a forbidden training flag at launch (P16)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import TESTWORLD, make_wheelhouse
from recipes import imp, install, pipeline, venv, write_recipe

SYMBOL = "cublasLtGroupedMatrixLayoutInit_internal"


@pytest.fixture(scope="session")
def native_wheelhouse(tmp_path_factory) -> Path:
    """Wheels with real ELF libraries (testworld/native.toml), built with the host's cc."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) to build the native stand-in wheels")
    return make_wheelhouse(tmp_path_factory.mktemp("native-wheelhouse"), TESTWORLD / "native.toml")


@pytest.fixture
def native_index(index_factory, native_wheelhouse):
    return index_factory(root=native_wheelhouse)


def doctor(world, *args, venv_dir: Path | None = None, env: dict | None = None):
    proc, doc = world.run_json(["doctor", "--venv", venv_dir or world.venv, *args], env=env)
    assert proc.returncode in (0, 3), proc.stderr
    assert doc["ok"] == (proc.returncode == 0)
    return proc, doc["findings"]


def by_rule(findings, rule, severity=None):
    return [f for f in findings if f["rule"] == rule and (severity is None or f["severity"] == severity)]


def make_venv(world, *packages, index_url=None):
    subprocess.run([str(world.uv), "venv", "-q", "--python", "3.11", str(world.venv)],
                   env=world.full_env(), check=True, capture_output=True)
    if packages:
        world.uv_pip("install", "--index-url", index_url or world.index.url("main"), *packages)


# ----------------------------------------------------------------------------- imports (P11)

def test_doctor_names_the_missing_distribution_behind_a_failing_import(world):
    recipe = write_recipe(world.root, steps=[
        venv(),
        install("transformers", ["transformers"], index_url=world.index.url("main"),
                verify=[imp("transformers", "AutoTokenizer")]),
    ])
    assert world.run([recipe]).returncode == 0
    proc, findings = doctor(world, "--recipe", recipe)
    assert proc.returncode == 0, findings
    # Defaults that are not installed are info, never errors.
    assert {f["message"].split()[0] for f in by_rule(findings, "import", "info")} >= {
        "torch", "transformer_engine", "amp_C", "fused_weight_gradient_mlp_cuda", "megatron.core"}

    world.uv_pip("uninstall", "regex")
    proc, findings = doctor(world, "--recipe", recipe)
    assert proc.returncode == 3
    [err] = by_rule(findings, "import", "error")
    assert err["message"] == ("import transformers fails: distribution regex is missing "
                              "(required by transformers 4.57.1)")
    assert "ModuleNotFoundError: No module named 'regex'" in err["evidence"]
    assert err["fix"].startswith("re-run step 'transformers'")
    assert "--reinstall transformers" in err["fix"]
    [dep] = by_rule(findings, "deps", "error")
    assert dep["message"] == "transformers 4.57.1 requires regex, which is not installed"

    text = world.run(["doctor", "--venv", world.venv, "--recipe", recipe])
    assert text.returncode == 3
    assert "distribution regex is missing (required by transformers 4.57.1)" in text.stdout
    assert "error(s)" in text.stdout


def test_wandb_missing_its_dependencies_names_each_one(world):
    recipe = write_recipe(world.root, steps=[
        venv(),
        install("wandb", ["wandb"], index_url=world.index.url("main"), verify=[imp("wandb")]),
    ])
    assert world.run([recipe]).returncode == 0
    world.uv_pip("uninstall", "click", "platformdirs")
    proc, findings = doctor(world, "--recipe", recipe)
    assert proc.returncode == 3
    [err] = by_rule(findings, "import", "error")
    assert err["message"] == ("import wandb fails: distribution click is missing (required by "
                              "wandb 0.22.0)")
    assert err["fix"].startswith("re-run step 'wandb'")
    assert sorted(f["message"] for f in by_rule(findings, "deps", "error")) == [
        "wandb 0.22.0 requires click, which is not installed",
        "wandb 0.22.0 requires platformdirs, which is not installed"]


# ----------------------------------------------------------------------------- deps (P10)

def test_conflicting_pin_is_info_when_the_recipe_declares_it_and_an_error_otherwise(world):
    steps = pipeline(world.index)[:3]  # venv, torch (pins cublas 13.1.0.3), cublas upgrade
    intended = write_recipe(world.root, steps=steps)
    assert world.run([intended]).returncode == 0
    proc, findings = doctor(world, "--recipe", intended)
    assert proc.returncode == 0, findings
    [info] = by_rule(findings, "deps")
    assert info["severity"] == "info"
    assert info["message"] == "nvidia-cublas 13.4.1.1 is installed over demo-torch's pin ==13.1.0.3 on purpose"
    assert "allow_conflicts" in info["explain"]

    steps[2] = {k: v for k, v in steps[2].items() if k != "allow_conflicts"}
    undeclared = write_recipe(world.root, "undeclared.toml", steps=steps)
    proc, findings = doctor(world, "--recipe", undeclared)
    assert proc.returncode == 3
    [err] = by_rule(findings, "deps")
    assert err["severity"] == "error"
    assert err["message"] == ("demo-torch 2.11.0+cu130 requires nvidia-cublas==13.1.0.3, "
                              "but 13.4.1.1 is installed")
    assert "allow_conflicts" in err["fix"]
    # The fix names the version the pin asks for, never a reinstall of the one that breaks it.
    assert "install what demo-torch pins (nvidia-cublas==13.1.0.3): uv pip install" in err["fix"]
    assert "--reinstall" not in err["fix"]


# ----------------------------------------------------------------------------- symbols (P10)

def test_symbol_check_reads_the_library_the_venv_loads(world, native_index):
    make_venv(world, "demo-cublaslt==13.1.0.3", index_url=native_index.url("native"))
    lib = next(world.venv.glob("lib/python*/site-packages/nvidia/cublas/lib/libcublasLt.so.13"))
    proc, findings = doctor(world)
    assert proc.returncode == 3
    [err] = by_rule(findings, "elf-symbol")
    assert err["severity"] == "error"
    assert err["message"] == f"{lib} does not define {SYMBOL} (undefined symbol at import)"
    assert err["evidence"][0] == f"checked: {lib} (from the venv)"
    assert "installed by: demo-cublaslt 13.1.0.3" in err["evidence"]
    assert err["fix"].startswith("upgrade nvidia-cublas")

    world.uv_pip("install", "--index-url", native_index.url("native"), "demo-cublaslt==13.4.1.1")
    proc, findings = doctor(world, "--symbol", "cublasLtMatmul", "--library",
                            "nvidia/**/libcublasLt.so.*")
    assert proc.returncode == 0, findings
    found = by_rule(findings, "elf-symbol", "info")
    assert [f["message"] for f in found] == [
        f"libcublasLt.so.13 defines {SYMBOL}, version libcublasLt.so.13",
        "libcublasLt.so.13 defines cublasLtMatmul, version libcublasLt.so.13"]
    assert found[0]["evidence"][0] == f"checked: {lib} (from the venv)"

    proc, findings = doctor(world, "--symbol", "nothere", "--library", "nvidia/**/libnothere.so")
    assert proc.returncode == 3
    assert "no library matches nvidia/**/libnothere.so" in by_rule(findings, "elf-symbol", "error")[0]["message"]


def test_pypi_apex_is_not_nvidia_apex(world, native_index):
    make_venv(world, "apex", index_url=native_index.url("native"))
    proc, findings = doctor(world)
    assert proc.returncode == 3
    [err] = by_rule(findings, "apex")
    assert err["message"] == "apex 0.9.10.dev0 is PyPI's unrelated `apex` package, not NVIDIA's"
    assert "APEX_CPP_EXT=1 APEX_CUDA_EXT=1" in err["fix"]


def test_cuda_code_check_needs_an_arch(world):
    make_venv(world, "demo-core")
    proc, findings = doctor(world)
    assert [f["message"] for f in by_rule(findings, "cuda-arch")] == [
        "CUDA code of built extensions not checked: no device arch"]
    proc, findings = doctor(world, "--arch", "9.0")
    assert [f["message"] for f in by_rule(findings, "cuda-arch")] == [
        "0 CUDA libraries in site-packages carry code for 9.0"]


def test_forbidden_variable_is_reported(world):
    make_venv(world, "demo-core")
    proc, findings = doctor(world, env={"MCORE_DPA_USE_SDPA": "1"})
    assert proc.returncode == 3
    [err] = by_rule(findings, "env")
    assert "environment: MCORE_DPA_USE_SDPA=1" in err["evidence"]


# ----------------------------------------------------------------------------- copied venv (P4)

def test_copied_venv_is_found_and_relocate_makes_its_scripts_run(world, tmp_path):
    make_venv(world, "demo-core==1.1.0")
    copy = tmp_path / "moved" / "venv"
    shutil.copytree(world.venv, copy, symlinks=True)
    shutil.rmtree(world.venv)  # the original is gone, as on another machine

    script = copy / "bin" / "demo-core"
    with pytest.raises(FileNotFoundError):  # its shebang names the old interpreter
        subprocess.run([str(script)], capture_output=True, text=True)

    proc, findings = doctor(world, venv_dir=copy)
    assert proc.returncode == 3
    [err] = by_rule(findings, "venv")
    assert f"file(s) in bin/ point to {world.venv}, not to this venv {copy}" in err["message"]
    assert any(e.startswith(f"bin/demo-core: #!{world.venv}/bin/python") for e in err["evidence"])
    assert err["fix"].startswith(f"bootstrap relocate --venv {copy}")

    mode = script.stat().st_mode
    proc, doc = world.run_json(["relocate", "--venv", copy])
    assert proc.returncode == 0, proc.stderr
    assert doc["from"] == str(world.venv)
    assert str(script) in doc["rewritten"]
    assert str(copy / "bin" / "activate") in doc["rewritten"]
    assert script.stat().st_mode == mode
    assert not list((copy / "bin").glob(".*tmp-*"))

    ran = subprocess.run([str(script)], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "demo-core 1.1.0"
    activate = subprocess.run(["bash", "-c", f". {copy}/bin/activate && echo $VIRTUAL_ENV"],
                              capture_output=True, text=True)
    assert activate.stdout.strip() == str(copy)
    proc, findings = doctor(world, venv_dir=copy)
    assert by_rule(findings, "venv") == [], findings


# ----------------------------------------------------------------------------- launch

LINT = """
[[lint]]
id = "mhc-no-fine-grained-schedule"
when = "--enable-hyper-connections"
forbid = ["--delay-wgrad-compute"]
explain = "mat1 and mat2 shapes cannot be multiplied"
fix = "Remove --delay-wgrad-compute while mHC is enabled."
"""

PRINT_ENV = ("import os, sys; print(json.dumps({k: os.environ.get(k) for k in "
             "('VENV', 'VIRTUAL_ENV', 'PATH')} | {'prefix': sys.prefix}))")


def launch_recipe(world, env=None) -> Path:
    return write_recipe(world.root, steps=[
        venv(), install("core", ["demo-core"], index_url=world.index.url("main"))],
        header=LINT, env=env)


def test_launch_execs_the_command_in_the_venv(world):
    recipe = launch_recipe(world)
    assert world.run([recipe]).returncode == 0
    proc = world.run(["launch", recipe, "--", "python", "-c", "import json; " + PRINT_ENV,
                      "--enable-hyper-connections"])
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["VENV"] == got["VIRTUAL_ENV"] == got["prefix"] == str(world.venv)
    assert got["PATH"].split(":")[0] == str(world.venv / "bin")
    assert "launch preflight: 0 error(s)" in proc.stderr


def test_launch_refuses_on_lint_or_doctor_errors_unless_forced(world):
    recipe = launch_recipe(world)
    assert world.run([recipe]).returncode == 0
    cmd = ["python", "-c", "print('trained')", "--enable-hyper-connections",
           "--delay-wgrad-compute"]
    proc = world.run(["launch", recipe, "--", *cmd])
    assert proc.returncode == 3
    assert "mhc-no-fine-grained-schedule" in proc.stderr
    assert "launch refused: 1 error(s)" in proc.stderr
    assert "trained" not in proc.stdout

    yaml = world.root / "train.yaml"
    yaml.write_text("enable_hyper_connections: true\ndelay_wgrad_compute: true\n")
    proc = world.run(["launch", recipe, "--", "python", "-c", "print('trained')",
                      "--yaml-cfg", yaml])
    assert proc.returncode == 3 and "mhc-no-fine-grained-schedule" in proc.stderr

    proc = world.run(["launch", recipe, "--force", "--", *cmd])
    assert proc.returncode == 0 and proc.stdout.strip() == "trained"

    # A doctor error (P20) refuses too; a recipe that unsets the variable launches.
    proc = world.run(["launch", recipe, "--", "python", "-c", "print('trained')"],
                     env={"MCORE_DPA_USE_SDPA": "1"})
    assert proc.returncode == 3 and "MCORE_DPA_USE_SDPA" in proc.stderr
    unsetting = launch_recipe(world, env={"unset": ["MCORE_DPA_USE_SDPA"]})
    proc = world.run(["launch", unsetting, "--", "python", "-c",
                      "import os; print(os.environ.get('MCORE_DPA_USE_SDPA'))"],
                     env={"MCORE_DPA_USE_SDPA": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "None"


# ----------------------------------------------------------------------------- helpers_cpp, nvcc

def test_helpers_cpp_built_for_another_python(world, tmp_path):
    make_venv(world, "demo-core")
    datasets = tmp_path / "Megatron-LM" / "megatron" / "core" / "datasets"
    datasets.mkdir(parents=True)
    (datasets / "helpers_cpp.cpython-310-x86_64-linux-gnu.so").write_bytes(b"")
    proc, findings = doctor(world, "--megatron", tmp_path / "Megatron-LM")
    assert proc.returncode == 3
    [err] = by_rule(findings, "helpers-cpp")
    assert err["message"] == ("Megatron's helpers_cpp is built for another Python (expected "
                              "helpers_cpp.cpython-311-x86_64-linux-gnu.so)")
    # A command as printed: pybind11 names the include directories (no `<pybind11 include>`).
    assert f"$({world.venv}/bin/python -m pybind11 --includes) {datasets}/helpers.cpp" in err["fix"]
    (datasets / "helpers_cpp.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    proc, doc = world.run_json(["doctor", "--venv", world.venv],
                               env={"MEGATRON_DIR": str(tmp_path / "Megatron-LM")})
    assert by_rule(doc["findings"], "helpers-cpp") == []
    # It says that it passed, not nothing.
    [packages] = [c["summary"] for c in doc["checks"] if c["group"] == "packages"]
    assert packages.endswith("; Megatron's helpers_cpp is built for this Python "
                             f"({datasets / 'helpers_cpp.cpython-311-x86_64-linux-gnu.so'})")


def test_nvcc_version_against_torch_cuda(world):
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                    if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if nvcc is None:
        pytest.skip("no nvcc")
    release = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    version = release.split("release ")[1].split(",")[0]
    make_venv(world, "demo-core")
    site = next(world.venv.glob("lib/python*/site-packages"))
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text("cuda: Optional[str] = '11.8'\n")
    proc, findings = doctor(world, env={"PATH": f"{Path(nvcc).parent}:/usr/bin:/bin"})
    [warn] = by_rule(findings, "nvcc")
    assert warn["severity"] == "warning"
    assert warn["message"] == f"nvcc is CUDA {version} but torch was built with CUDA 11.8"
    (site / "torch" / "version.py").write_text(f"cuda = '{version}'\n")
    proc, findings = doctor(world, env={"PATH": f"{Path(nvcc).parent}:/usr/bin:/bin"})
    assert by_rule(findings, "nvcc") == []
