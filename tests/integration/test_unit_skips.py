"""The unit tests as ctest runs them (scripts/test.sh's unit stage): a test case that lacks a
tool is reported as skipped, never as passed (tests/unit/skip.hpp), and every ctest test runs
exactly the Catch2 test case it is named after.

Needs the unit tests built in the build directory next to $BOOTSTRAP_BIN (build/ by default)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Test cases that skip when a program is missing from PATH (cc, python3); the nvcc ones also
# look in /usr/local/cuda/bin, so PATH alone cannot hide nvcc from them.
NEEDS_CC = "inspect:read_dynamic_symbols lists defined symbols with their version"
NEEDS_PYTHON3 = "device:torch probe against a stand-in torch in a real venv"


@pytest.fixture(scope="module")
def build_dir() -> Path:
    binary = Path(os.environ.get("BOOTSTRAP_BIN") or REPO / "build" / "bootstrap")
    build = binary.parent
    if not (build / "CTestTestfile.cmake").is_file() or not (build / "unit_inspect").is_file():
        pytest.skip(f"no unit tests built in {build} (cmake --build {build} --target unit_tests)")
    return build


@pytest.fixture(scope="module")
def ctest() -> str:
    found = shutil.which("ctest")
    if not found:
        pytest.skip("ctest not found on PATH")
    return found


@pytest.fixture(scope="module")
def ctest_tests(build_dir, ctest) -> list[dict]:
    proc = subprocess.run([ctest, "--test-dir", str(build_dir), "--show-only=json-v1"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["tests"]


def run_ctest(ctest: str, build_dir: Path, name: str, path: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    env["PATH"] = path
    return subprocess.run([ctest, "--test-dir", str(build_dir), "-R", f"^{re.escape(name)}$"],
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", [NEEDS_CC, NEEDS_PYTHON3])
def test_a_missing_tool_is_a_skip_not_a_pass(build_dir, ctest, tmp_path, name):
    empty = tmp_path / "empty-path"
    empty.mkdir()
    proc = run_ctest(ctest, build_dir, name, str(empty))
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "***Skipped" in out, out
    assert "Passed" not in out, out
    assert "The following tests did not run:" in out and f"{name} (Skipped)" in out, out


@pytest.mark.parametrize("name", [NEEDS_CC, NEEDS_PYTHON3])
def test_with_the_tool_the_same_case_runs_and_passes(build_dir, ctest, name):
    tool = "cc" if name == NEEDS_CC else "python3"
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not on PATH here either")
    proc = run_ctest(ctest, build_dir, name, os.environ["PATH"])
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "Passed" in out and "Skipped" not in out, out


def test_the_skip_names_the_case_and_the_reason(build_dir, tmp_path):
    proc = subprocess.run([str(build_dir / "unit_inspect"), NEEDS_CC.split(":", 1)[1]],
                          env={"PATH": str(tmp_path)}, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 77, proc.stdout + proc.stderr
    assert (f"SKIPPED: {NEEDS_CC.split(':', 1)[1]}: no C compiler (cc) on PATH\n"
            in proc.stdout), proc.stdout


def test_every_ctest_test_is_one_catch2_case_that_runs(build_dir, ctest_tests):
    """Each ctest name is <module>:<a test case the binary lists> (a name with ';' used to be
    split into tests that matched nothing and passed), a test that matches no case fails
    (--warn NoTests), and exit status 77 counts as skipped."""
    listed: set[str] = set()
    for binary in sorted(build_dir.glob("unit_*")):
        if not binary.is_file() or not os.access(binary, os.X_OK) or binary.suffix:
            continue
        module = binary.name.removeprefix("unit_")
        proc = subprocess.run([str(binary), "--list-test-names-only"], capture_output=True,
                              text=True, timeout=60)
        listed |= {f"{module}:{n}" for n in proc.stdout.splitlines() if n}
    unit = [t for t in ctest_tests if Path(t["command"][0]).name.startswith("unit_")]
    assert {t["name"] for t in unit} == listed
    for t in unit:
        assert t["command"][-2:] == ["--warn", "NoTests"], t
        props = {p["name"]: p["value"] for p in t["properties"]}
        assert props.get("SKIP_RETURN_CODE") == 77, t


def test_every_ctest_filter_selects_exactly_its_own_case(ctest_tests):
    """What each ctest test asks its binary for is that one case: not nothing (a name with ';'
    or a backslash), not every other case (a name starting with '~'), not several (a '*')."""
    wrong = []
    for t in ctest_tests:
        binary, *spec = t["command"]
        if not Path(binary).name.startswith("unit_"):
            continue
        spec = [a for a in spec if a not in ("--warn", "NoTests")]
        proc = subprocess.run([binary, *spec, "--list-test-names-only"], capture_output=True,
                              text=True, timeout=60)
        selected = [n for n in proc.stdout.splitlines() if n]
        if selected != [t["name"].split(":", 1)[1]]:
            wrong.append(f"{t['name']}: selects {selected[:3]}{' ...' if len(selected) > 3 else ''}")
    assert wrong == []


def test_a_filter_that_matches_nothing_fails(build_dir):
    proc = subprocess.run([str(build_dir / "unit_core"), "no such test case", "--warn", "NoTests"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode not in (0, 77), proc.stdout
    assert "No test cases matched 'no such test case'" in proc.stdout
