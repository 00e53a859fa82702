"""One import-probe rule for step verify, doctor and lint (issue 10 items 2 and 8): an extension
whose DT_NEEDED names libc10.so imports only after `import torch` has loaded torch's libraries,
so the probe imports torch first (the rule reads DT_NEEDED) or when the recipe says so
(`preload`). Doctor runs every check in a child forked from one interpreter that imported torch
once, and its fixes name the recipe step that provides a module."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import recipes as R
from recipes import steps_by_id

PY_INCLUDE = Path("/usr/include/python3.11")
EXT = "fused_weight_gradient_mlp_cuda"

TORCH_INIT = """\
import ctypes, os, time
# Like torch: load its own libraries (libc10.so) so that extensions linked against them resolve.
ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib", "libc10.so"), mode=ctypes.RTLD_GLOBAL)
time.sleep(float(os.environ.get("FAKE_TORCH_SLEEP", "0")))
__version__ = "2.11.0"
"""

EXT_C = """\
#include <Python.h>
extern int c10_answer(void);
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "%s", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_%s(void) {
    PyObject *m = PyModule_Create(&def);
    if (m) PyModule_AddIntConstant(m, "ANSWER", c10_answer());
    return m;
}
""" % (EXT, EXT)


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def site_of(world) -> Path:
    return next((world.venv / "lib").glob("python3*/site-packages"))


def dist_info(site: Path, name: str, version: str, files: list[str], requires: list[str] = ()):
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir()
    meta = [f"Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta += [f"Requires-Dist: {r}" for r in requires]
    (d / "METADATA").write_text("\n".join(meta) + "\n")
    (d / "INSTALLER").write_text("uv\n")
    (d / "RECORD").write_text("".join(f"{f},,\n" for f in files + [f"{d.name}/METADATA"]))


@pytest.fixture
def torch_venv(world) -> Path:
    """The world's venv with a stand-in torch that ships lib/libc10.so (built with cc)."""
    if shutil.which("cc") is None or not (PY_INCLUDE / "Python.h").exists():
        pytest.skip("no C compiler (cc) or Python 3.11 headers (python3.11-dev) to build extensions")
    ok(world.run([R.write_recipe(world.root, "venv.toml", steps=[R.venv()])]))
    site = site_of(world)
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(TORCH_INIT)
    src = world.root / "c10.c"
    src.write_text("int c10_answer(void) { return 42; }\n")
    # With its soname, as torch's: the loader then takes the loaded copy for a DT_NEEDED entry.
    subprocess.run(["cc", "-shared", "-fPIC", "-Wl,-soname,libc10.so", "-o", str(lib / "libc10.so"),
                    str(src)], check=True)
    dist_info(site, "torch", "2.11.0", ["torch/__init__.py", "torch/lib/libc10.so"])
    return site


def apex_step(world, site: Path, **extra) -> dict:
    """A build step in the way apex's is: compiles the extension against torch's libc10.so."""
    src = world.root / "ext.c"
    src.write_text(EXT_C)
    suffix = world.python("import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))").stdout.strip()
    out = site / f"{EXT}{suffix}"
    return R.run("apex", ["cc", "-shared", "-fPIC", f"-I{PY_INCLUDE}", str(src), "-o", str(out),
                          f"-L{site / 'torch' / 'lib'}", "-lc10"],
                 creates=str(out), verify=[R.imp(EXT, "ANSWER")], **extra)


def test_verify_imports_torch_first_for_an_extension_that_needs_libc10(world, torch_venv):
    recipe = R.write_recipe(world.root, steps=[R.venv(), apex_step(world, torch_venv)])
    proc, doc = world.run_json([recipe])
    ok(proc)
    # The control: in a fresh interpreter the extension does not import, after torch it does.
    bare = world.python(f"import {EXT}")
    assert bare.returncode != 0 and "libc10.so: cannot open shared object file" in bare.stderr
    ok(world.python(f"import torch, {EXT}; assert {EXT}.ANSWER == 42"))
    log = Path(steps_by_id(doc)["apex"]["log"]).read_text()
    assert (f"verify: import {EXT}.ANSWER (importing torch first: "
            f"{EXT}.cpython-311-x86_64-linux-gnu.so needs libc10.so)") in log
    assert f"bootstrap-verify: import {EXT}.ANSWER ok" in log

    # doctor and lint use the same rule: the extension imports there too.
    proc, doc = world.run_json(["doctor", "--venv", world.venv, "--recipe", recipe])
    assert not [f for f in doc["findings"] if f["rule"] == "import" and EXT in f["message"]], doc

    # A broken build: the error shows what the probe did, not its Python source, and doctor's
    # fix re-runs the step that provides the module (no distribution is called that).
    so = next(torch_venv.glob(f"{EXT}*.so"))
    so.write_bytes(b"not an ELF file")
    proc = world.run([recipe, "--verify"])
    assert proc.returncode != 0
    assert f"command: {world.venv}/bin/python -c <import probe>: import {EXT}.ANSWER" in proc.stderr
    assert "def _bs_probe" not in proc.stderr and "traceback.print_exc" not in proc.stderr
    proc, doc = world.run_json(["doctor", "--venv", world.venv, "--recipe", recipe])
    [err] = [f for f in doc["findings"] if f["rule"] == "import" and f["severity"] == "error"]
    assert err["message"].startswith(f"import {EXT} fails: ImportError:")
    assert err["fix"] == f"re-run step 'apex' (bootstrap run {recipe} --venv {world.venv} --only apex --force)"
    assert "fused-weight-gradient-mlp-cuda" not in json.dumps(doc)


def test_recipe_preload_imports_what_a_module_needs_first(world, torch_venv):
    (torch_venv / "needs_torch.py").write_text(
        "import sys\nif 'torch' not in sys.modules:\n    raise ImportError('import torch first')\n")
    without = R.write_recipe(world.root, "without.toml", steps=[
        R.venv(), R.check("late", [R.imp("needs_torch")])])
    proc = world.run([without])
    assert proc.returncode != 0
    assert "step 'late': verify failed: import needs_torch failed: ImportError: import torch first" in proc.stderr
    with_preload = R.write_recipe(world.root, "with.toml", steps=[
        R.venv(), R.check("late", [{"import": "needs_torch", "preload": ["torch"]}])])
    proc, doc = world.run_json([with_preload])
    ok(proc)
    log = Path(steps_by_id(doc)["late"]["log"]).read_text()
    assert "verify: import needs_torch after torch (importing torch first: the recipe asks for it)" in log

    bad = R.write_recipe(world.root, "bad.toml", steps=[
        R.venv(), R.check("late", [{"file": "/x", "preload": ["torch"]}])])
    proc = world.run(["plan", bad])
    assert proc.returncode == 2
    assert "'preload' is valid only with 'import' in a verify clause" in proc.stderr


def test_doctor_shares_one_torch_import_and_keeps_checks_apart(world, torch_venv):
    modules = [f"uses_torch_{i}" for i in range(24)]
    for m in modules:
        (torch_venv / f"{m}.py").write_text("import torch\nX = 1\n")
    (torch_venv / "crashes.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    (torch_venv / "exits.py").write_text("import sys\nsys.exit(7)\n")
    args = ["doctor", "--venv", world.venv]
    for m in modules + ["crashes", "exits"]:
        args += ["--import", m]
    started = time.monotonic()
    proc, doc = world.run_json(args, env={"FAKE_TORCH_SLEEP": "2"})
    took = time.monotonic() - started
    assert proc.returncode == 3
    # Each interpreter importing torch (2 s) would take 25 x 2 s / jobs; one import is ~2 s.
    assert took < 10, took
    errors = {f["message"] for f in doc["findings"] if f["rule"] == "import" and f["severity"] == "error"}
    assert errors == {"import crashes fails: killed by signal 11 (SIGSEGV)",
                      "import exits fails: SystemExit: 7"}, doc["findings"]
    imports = [c for c in doc["checks"] if c["group"] == "imports"] if "checks" in doc else []
    text = world.run(args, env={"FAKE_TORCH_SLEEP": "0"}).stdout
    assert "(torch imported first, once)" in text


def test_megatron_core_root_cause_is_an_error_naming_the_distribution(world, torch_venv):
    site = torch_venv
    (site / "nvidia_resiliency_ext").mkdir()
    (site / "nvidia_resiliency_ext" / "__init__.py").write_text("# 0.4.1 has no __version__\n")
    dist_info(site, "nvidia-resiliency-ext", "0.4.1", ["nvidia_resiliency_ext/__init__.py"])
    (site / "megatron" / "core").mkdir(parents=True)
    (site / "megatron" / "__init__.py").write_text("")
    (site / "megatron" / "core" / "__init__.py").write_text(
        "import torch\nfrom nvidia_resiliency_ext import __version__\n")
    dist_info(site, "megatron-core", "0.14.0", ["megatron/__init__.py", "megatron/core/__init__.py"],
              requires=["nvidia-resiliency-ext"])
    proc, doc = world.run_json(["doctor", "--venv", world.venv])
    assert proc.returncode == 3
    [err] = [f for f in doc["findings"] if f["rule"] == "import" and "megatron.core" in f["message"]]
    assert err["severity"] == "error"
    assert err["message"].startswith("import megatron.core fails: ImportError: cannot import name "
                                     "'__version__' from 'nvidia_resiliency_ext'")
    assert err["message"].endswith("(root cause in nvidia-resiliency-ext 0.4.1)")
    assert "root cause in distribution nvidia-resiliency-ext 0.4.1" in err["evidence"]
    assert err["fix"].startswith("install a version of nvidia-resiliency-ext that megatron-core "
                                 "works with (nvidia-resiliency-ext 0.4.1 is installed)")


def test_requirement_check_follows_extras(world, torch_venv):
    """torch pins cuBLAS through `cuda-toolkit[cublas]`: the pin is in cuda-toolkit's
    `extra == "cublas"` requirements, in force only because torch asks for that extra."""
    site = torch_venv
    dist_info(site, "cuda-toolkit", "13.0.2", [],
              requires=['nvidia-cublas==13.0.2.9; extra == "cublas"',
                        'nvidia-cufft==12.0.0; extra == "cufft"'])
    dist_info(site, "nvidia-cublas", "13.4.1.1", [])
    (site / "torch-2.11.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0\nRequires-Dist: cuda-toolkit[cublas]==13.0.2\n")
    proc, doc = world.run_json(["doctor", "--venv", world.venv])
    deps = [f for f in doc["findings"] if f["rule"] == "deps"]
    # cufft is not asked for: not a finding; the cublas pin is.
    assert [f["message"] for f in deps] == [
        'cuda-toolkit 13.0.2 requires nvidia-cublas==13.0.2.9; extra == "cublas", but 13.4.1.1 is '
        "installed (extra 'cublas', asked for by torch 2.11.0)"], deps
    assert deps[0]["severity"] == "error"

    # Without the extra, cuda-toolkit's extra requirements are not in force.
    (site / "torch-2.11.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0\nRequires-Dist: cuda-toolkit==13.0.2\n")
    proc, doc = world.run_json(["doctor", "--venv", world.venv])
    assert [f for f in doc["findings"] if f["rule"] == "deps"] == []


def test_doctor_fix_reruns_the_step_that_owns_the_distribution(world, torch_venv):
    """regex came in as a dependency of step 'transformers' (the journal says so; the recipe
    does not name it): a broken regex is fixed by re-running that step."""
    recipe = R.write_recipe(world.root, steps=[
        R.venv(), R.install("transformers", ["transformers"], index_url=world.index.url("main"))])
    ok(world.run([recipe]))
    assert "regex" in world.journal()["steps"]["transformers"]["dists"]
    origin = world.python("import importlib.util; print(importlib.util.find_spec('regex').origin)").stdout.strip()
    Path(origin).write_text("raise RuntimeError('broken on purpose')\n")
    proc, doc = world.run_json(["doctor", "--venv", world.venv, "--recipe", recipe, "--import", "regex"])
    [err] = [f for f in doc["findings"] if f["rule"] == "import" and f["message"].startswith("import regex")]
    assert err["message"] == "import regex fails: RuntimeError: broken on purpose"
    assert err["severity"] == "error"
    assert err["fix"].startswith(f"re-run step 'transformers' (bootstrap run {recipe} --venv {world.venv} "
                                 "--only transformers --force)")
