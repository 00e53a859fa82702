"""The `elf_symbol` verify clause and `doctor --symbol --library` (README pitfall P10), a
`[venv] python` that is an interpreter's path, and what an interrupted or first run reports."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import recipes as R
from recipes import steps_by_id

SYMBOL = "cublasLtGroupedMatrixLayoutInit_internal"
LIB = "nvidia/**/libcublasLt.so.13"
PY311 = Path("/usr/bin/python3.11")


@pytest.fixture(scope="session")
def native_wheelhouse(tmp_path_factory) -> Path:
    """Wheels with real ELF libraries (testworld/native.toml), built with the host's cc."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) to build the native stand-in wheels")
    out = tmp_path_factory.mktemp("native-wheelhouse")
    make_wheels = Path(__file__).resolve().parents[2] / "testworld" / "make_wheels.py"
    proc = subprocess.run([sys.executable, str(make_wheels), str(out), "--data",
                           str(make_wheels.parent / "native.toml")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture
def native_index(index_factory, native_wheelhouse):
    return index_factory(root=native_wheelhouse)


def build_so(directory: Path, name: str, source: str) -> Path:
    """A shared library with plain (unversioned) exported symbols, built with the host's cc."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) to build a shared library")
    src = directory / (name + ".c")
    src.write_text(source)
    out = directory / name
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(out), str(src)], check=True,
                   capture_output=True, text=True, timeout=60)
    return out


def step_log(world, step_id: str) -> str:
    logs = sorted((world.venv / ".bootstrap" / "logs").glob(f"*/*-{step_id}.log"))
    assert logs, f"no log for step {step_id}"
    return logs[-1].read_text()


def cublas_recipe(world, index, version: str, **extra) -> Path:
    return R.write_recipe(world.root, steps=[
        R.venv(),
        R.install("cublas", [f"demo-cublaslt=={version}"], index_url=index.url("native"),
                  verify=[{"elf_symbol": SYMBOL, "library": LIB}], **extra),
    ])


# ------------------------------------------------------------------------ elf_symbol clause

def test_elf_symbol_verify_reads_the_library_the_venv_loads(world, native_index):
    recipe = cublas_recipe(world, native_index, "13.1.0.3")
    proc, doc = world.run_json([recipe])
    assert proc.returncode != 0
    lib = next(world.venv.glob("lib/python*/site-packages/nvidia/cublas/lib/libcublasLt.so.13"))
    step = steps_by_id(doc)["cublas"]
    assert (step["result"], step["reason"]) == ("failed", "verify failed"), step
    assert doc["error"]["message"] == (
        f"step 'cublas': verify failed: {lib} does not define {SYMBOL} (checked the venv)")
    assert f"checked: {lib} (from the venv)" in doc["error"]["detail"]

    # The release that defines it: the clause passes and the log names the file it read.
    recipe = cublas_recipe(world, native_index, "13.4.1.1", upgrade=True)
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    assert steps_by_id(doc)["cublas"]["result"] == "ran"
    assert (f"verify: elf_symbol {SYMBOL} in {LIB} ok: {lib} (from the venv) defines it, "
            f"version libcublasLt.so.13") in step_log(world, "cublas")

    # `plan` shows the clause as written; it is part of the step's key.
    plan = world.run(["plan", recipe])
    assert f"verify: elf_symbol {SYMBOL} in {LIB}" in plan.stdout, plan.stdout


def test_elf_symbol_verify_falls_back_to_the_system_library(world):
    """No venv match: the file name is looked up on the system (ldconfig -p)."""
    libc = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    if "libc.so.6 " not in libc:
        pytest.skip("ldconfig -p lists no libc.so.6")
    recipe = R.write_recipe(world.root, steps=[
        R.venv(),
        R.check("sys", [{"elf_symbol": "printf", "library": "nvidia/**/libc.so.6"}]),
    ])
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    log = step_log(world, "sys")
    assert "(from the system) defines it" in log and "libc.so.6" in log, log

    recipe = R.write_recipe(world.root, steps=[
        R.venv(),
        R.check("sys", [{"elf_symbol": "printf", "library": "nvidia/**/libnothere.so.42"}]),
    ])
    proc, doc = world.run_json([recipe])
    assert proc.returncode != 0
    assert doc["error"]["message"] == (
        "step 'sys': verify failed: elf_symbol printf in nvidia/**/libnothere.so.42: no library "
        "matches nvidia/**/libnothere.so.42 in the venv or the system")
    assert "searched: " in doc["error"]["detail"] and "/site-packages/nvidia/**/libnothere.so.42" \
        in doc["error"]["detail"]


def test_elf_symbol_with_an_absolute_library_checks_that_file(world):
    plain = build_so(world.root, "libplain.so", "int plain_symbol(void) { return 1; }\n")
    recipe = R.write_recipe(world.root, steps=[
        R.venv(),
        R.check("abs", [{"elf_symbol": "plain_symbol", "library": str(plain)}]),
    ])
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    assert f"ok: {plain} (from the path given) defines it" in step_log(world, "abs")

    recipe = R.write_recipe(world.root, steps=[
        R.venv(),
        R.check("abs", [{"elf_symbol": "other_symbol", "library": str(plain)},
                        ]),
    ])
    proc, doc = world.run_json([recipe])
    assert proc.returncode != 0
    assert doc["error"]["message"] == (
        f"step 'abs': verify failed: {plain} does not define other_symbol (checked the path given)")

    missing = world.root / "libgone.so"
    recipe = R.write_recipe(world.root, steps=[
        R.venv(), R.check("abs", [{"elf_symbol": "x", "library": str(missing)}])])
    proc, doc = world.run_json([recipe])
    assert proc.returncode != 0
    assert doc["error"]["message"] == (
        f"step 'abs': verify failed: elf_symbol x in {missing}: {missing} is not a file")


def test_doctor_library_given_as_an_absolute_path_means_that_file(world):
    """`doctor --symbol S --library /abs/libX.so` reads that file, not the system's namesake."""
    subprocess.run([str(world.uv), "venv", "-q", "--python", "3.11", str(world.venv)],
                   env=world.full_env(), check=True, capture_output=True)
    # Named like a system library, so a lookup by file name would find the system's copy.
    fake = build_so(world.root, "libc.so.6", "int only_in_the_fake(void) { return 1; }\n")
    proc, doc = world.run_json(["doctor", "--venv", world.venv, "--symbol", "only_in_the_fake",
                                "--library", fake])
    found = [f for f in doc["findings"] if f["rule"] == "elf-symbol"
             and "only_in_the_fake" in f["message"]]
    assert [f["severity"] for f in found] == ["info"], doc["findings"]
    assert found[0]["evidence"][0] == f"checked: {fake} (from the path given)"

    gone = world.root / "libgone.so"
    proc, doc = world.run_json(["doctor", "--venv", world.venv, "--symbol", "x", "--library", gone])
    assert proc.returncode == 3
    [err] = [f for f in doc["findings"] if f["rule"] == "elf-symbol" and f["severity"] == "error"]
    assert err["message"] == f"x in {gone}: {gone} is not a file"


# ------------------------------------------------------------------ [venv] python as a path

@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_venv_python_may_be_an_interpreter_path(world, installer):
    if not PY311.exists():
        pytest.skip(f"{PY311} is not installed")
    recipe = R.write_recipe(world.root, python=str(PY311), installer=installer, steps=[
        R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url())])
    proc, doc = world.run_json([recipe], timeout=300)
    assert proc.returncode == 0, proc.stderr
    cfg = (world.venv / "pyvenv.cfg").read_text()
    assert "home = /usr/bin" in cfg, cfg
    real = subprocess.run([str(world.venv / "bin" / "python"), "-c",
                           "import sys; print(sys._base_executable)"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert Path(real).resolve() == PY311.resolve()
    plan = world.run(["plan", recipe])
    assert f"--python {PY311}" in plan.stdout or f"{PY311} -m venv" in plan.stdout, plan.stdout

    # A re-run keeps the venv it made (the same interpreter) and runs nothing.
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    venv_step = steps_by_id(doc)["venv"]
    assert venv_step["result"] == "skipped", venv_step


def test_venv_python_path_that_does_not_exist_names_the_recipe_line(world):
    recipe = R.write_recipe(world.root, python="/nonexistent/bin/python3.12", steps=[R.venv()])
    line, col = R.line_of(recipe, '"/nonexistent/bin/python3.12"')
    for args in ([recipe], ["plan", recipe]):
        proc = world.run(args)
        assert proc.returncode != 0
        assert (f"{recipe}:{line}:{col}: [venv] python: /nonexistent/bin/python3.12 does not "
                f"exist") in proc.stderr, proc.stderr
    assert not (world.venv / "bin").exists()


def test_venv_python_path_differs_from_the_venvs(world):
    """A venv made with another interpreter is refused (or, with --recreate, remade)."""
    if not PY311.exists():
        pytest.skip(f"{PY311} is not installed")
    other = world.root / "py" / "python3"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\necho 3.11.99\n")  # reports a different version
    other.chmod(0o755)
    recipe = R.write_recipe(world.root, python=str(PY311), steps=[R.venv()])
    assert world.run([recipe]).returncode == 0
    recipe = R.write_recipe(world.root, python=str(other), steps=[R.venv()])
    proc = world.run(["plan", recipe])
    assert proc.returncode != 0
    assert "has Python 3.11" in proc.stderr and f"but the recipe asks for {other}" in proc.stderr


# --------------------------------------------------------------------- run reports

def test_first_run_summary_says_there_was_no_venv_before(world):
    recipe = R.write_recipe(world.root, steps=[
        R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url())])
    proc = world.run([recipe])
    assert proc.returncode == 0, proc.stderr
    assert "(history #1; no venv before this run)" in proc.stderr, proc.stderr
    assert "#-" not in proc.stderr


def test_a_plain_failure_is_not_labelled_twice(world):
    recipe = R.write_recipe(world.root, steps=[R.venv(), R.run("boom", ["false"])])
    proc = world.run([recipe])
    assert proc.returncode != 0
    assert "failed: failed" not in proc.stderr, proc.stderr


def test_interrupted_run_still_takes_its_after_snapshot(world):
    """A new venv (no host facts cached yet) changed, then SIGINT: the after-snapshot's host
    probes (gcc --version) still run, and history records what the run changed."""
    started = world.root / "started"
    code = (f"import pathlib, time; pathlib.Path({str(started)!r}).write_text('x'); "
            f"time.sleep(60)")
    recipe = R.write_recipe(world.root, steps=[
        R.venv(),
        R.install("core", ["demo-core==1.0.0"], index_url=world.index.url()),
        R.run("slow", ["{venv.python}", "-c", code]),
    ])
    proc = world.popen([recipe, "--json"])
    deadline = time.monotonic() + 120
    while not started.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert not [w for w in doc.get("warnings", []) if "snapshot" in w], doc.get("warnings")
    assert doc["history"]["after"] == 1, (doc["history"], err)
    after = json.loads((world.venv / ".bootstrap/history/0001-after.json").read_text())
    assert "demo-core" in after["packages"]
    assert after["run"]["ok"] is False


def test_a_python_version_this_machine_lacks_is_announced_and_explained(world):
    """uv would download a managed CPython (from GitHub) for a version with no pythonX.Y on PATH:
    the plan says so, and the failure on a node without one names the known fault."""
    recipe = R.write_recipe(world.root, python="3.99", steps=[R.venv()])
    plan = world.run(["plan", recipe], env={"UV_PYTHON_DOWNLOADS": None})
    assert plan.returncode == 0, plan.stderr
    assert ("note: no python3.99 on PATH: uv uses a managed CPython 3.99 it already has, or "
            "downloads one from GitHub") in plan.stdout, plan.stdout
    plan = world.run(["plan", recipe])  # the World sets UV_PYTHON_DOWNLOADS=never
    assert "no python3.99 on PATH and UV_PYTHON_DOWNLOADS=never" in plan.stdout, plan.stdout
    proc = world.run([recipe])
    assert proc.returncode != 0
    assert "known fault 'uv-python-unavailable'" in proc.stderr, proc.stderr
    assert "set [venv] python to its path" in proc.stderr
    assert "UV_PYTHON_INSTALL_MIRROR" in proc.stderr
