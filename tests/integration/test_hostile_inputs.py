"""Inputs from a fuzzing campaign that killed bootstrap by a signal (stack overflow in toml++,
std::regex or a recursive parser; std::out_of_range from std::stod). Each must now end in a
clear error naming the file and place, with exit code 2 (bad recipe or usage) or 1 (runtime
input), never a signal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAD = """\
schema = 1
name = "hostile"

[venv]
path = "venv"
python = "3.11"

[[step]]
id = "venv"
kind = "venv"
"""
# HEAD is 10 lines and ends inside [[step]] (depth 2); the text appended starts at line 11.

TOO_DEEP = ("value nested more than 64 deep (tables, dotted keys, arrays and inline tables "
            "together; the limit is 64)")


def no_signal(proc: subprocess.CompletedProcess) -> None:
    """A plain exit: neither killed (negative) nor a shell-style 128+SIGABRT/SIGSEGV."""
    assert proc.returncode >= 0 and proc.returncode not in (134, 139), (
        f"rc={proc.returncode}\nstderr tail: {proc.stderr[-2000:]}")


def write(tmp_path: Path, body: str, name: str = "recipe.toml") -> Path:
    path = tmp_path / name
    path.write_text(HEAD + body)
    return path


def assert_recipe_error(run_bootstrap, recipe: Path, where: str, message: str) -> None:
    """`plan` and `explain --recipe` both refuse the recipe: exit 2, file:line:col and the
    message on the first line."""
    log = recipe.parent / "empty.log"
    log.write_text("")
    for args in (["plan", recipe], ["explain", "--recipe", recipe, log]):
        proc = run_bootstrap(args, timeout=60)
        no_signal(proc)
        assert proc.returncode == 2, f"{args[0]}: rc={proc.returncode}\n{proc.stderr[-2000:]}"
        first = proc.stderr.splitlines()[0]
        assert first == f"error: {recipe}:{where}: {message}", first[:500]


# ----------------------------------------------------------------------- recipe loading (4)

def test_dotted_key_of_50000_parts(tmp_path, run_bootstrap):
    recipe = write(tmp_path, ".".join(["a"] * 50_000) + " = 1\n")
    assert_recipe_error(run_bootstrap, recipe, "11:1",
                        "dotted key of more than 64 parts (the limit is 64)")


def test_table_name_of_50000_parts(tmp_path, run_bootstrap):
    recipe = write(tmp_path, "[" + ".".join(["t"] * 50_000) + "]\n")
    assert_recipe_error(run_bootstrap, recipe, "11:1",
                        "table name of more than 64 parts (the limit is 64)")
    recipe = write(tmp_path, "[[" + ".".join(["t"] * 50_000) + "]]\n")
    assert_recipe_error(run_bootstrap, recipe, "11:1",
                        "table name of more than 64 parts (the limit is 64)")


def test_nesting_counts_tables_keys_and_arrays_together(tmp_path, run_bootstrap):
    # [[step]] is 2 deep, x 3; the 62nd '[' would be 65.
    recipe = write(tmp_path, "x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert_recipe_error(run_bootstrap, recipe, "11:66", TOO_DEEP)
    recipe = write(tmp_path, "[" + ".".join(["t"] * 40) + "]\n" + ".".join(["k"] * 30) + " = 1\n")
    assert_recipe_error(run_bootstrap, recipe, "12:1", TOO_DEEP)


def test_recipe_over_4_mib(tmp_path, run_bootstrap):
    recipe = write(tmp_path, "# " + "x" * (4 << 20) + "\n")
    size = recipe.stat().st_size
    assert_recipe_error(run_bootstrap, recipe, "1:1",
                        f"recipe is {size} bytes; bootstrap reads recipes of at most 4 MiB "
                        "(4194304 bytes)")


def test_fault_match_of_100000_characters(tmp_path, run_bootstrap):
    recipe = write(tmp_path, '[[fault]]\nid = "f"\nmatch = "' + "a" * 100_000 +
                   '"\nexplain = "e"\nfix = "f"\n')
    assert_recipe_error(run_bootstrap, recipe, "13:9",
                        "'match' is 100000 characters long; a pattern may have at most 1000")


def test_fault_with_nested_groups_on_a_long_log_line(tmp_path, run_bootstrap):
    # 20 nested capture groups cost libstdc++'s matcher ~6 KiB of stack per character: a
    # 4,000-character line overflowed it. Matched without capture groups it is ~320 bytes.
    pattern = "(" * 20 + "x" + ")" * 20 + "+y"
    recipe = write(tmp_path, f'[[fault]]\nid = "nested"\nmatch = "{pattern}"\n'
                             'explain = "e"\nfix = "f"\n')
    log = tmp_path / "train.log"
    log.write_text("start\n" + "x" * 4000 + "y\n")
    proc = run_bootstrap(["explain", "--recipe", recipe, log], timeout=120)
    no_signal(proc)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"known fault 'nested' at {log}:2" in proc.stdout


@pytest.mark.parametrize("marker,message", [
    ("(" * 100_000 + "os_name == 'x'" + ")" * 100_000,
     "marker of 200014 characters (the limit is 16384) at column 8"),
    (" and ".join(["os_name == 'x'"] * 100_000),
     "marker of 1899995 characters (the limit is 16384) at column 8"),
    ("(" * 33 + "os_name == 'x'" + ")" * 33,
     "parentheses nested more than 32 deep (the limit is 32) at column 40"),
], ids=["100000-parentheses", "100000-ands", "33-parentheses"])  # ids: PYTEST_CURRENT_TEST
def test_requirement_marker_beyond_the_bounds(tmp_path, run_bootstrap, marker, message):
    recipe = write(tmp_path, '[[step]]\nid = "i"\nkind = "install"\n'
                             f'packages = ["demo ; {marker}"]\n')
    proc = run_bootstrap(["plan", recipe], timeout=60)
    no_signal(proc)
    assert proc.returncode == 2, proc.stderr[-2000:]
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"error: {recipe}:14:13: invalid requirement 'demo ; "), first[:300]
    assert first.endswith(f": {message}"), first[-300:]
    assert len(first) < 600  # the requirement is quoted clipped


# ---------------------------------------------------------- import error messages (5)

@pytest.fixture
def venv_with_bad_module(tmp_path) -> Path:
    """A bare venv (no pip) whose module `bad` raises a 40,000-character ImportError."""
    venv_dir = tmp_path / "venv"
    proc = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv_dir)],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        pytest.skip(f"cannot make a venv with {sys.executable}: {proc.stderr[-500:]}")
    site = next(venv_dir.glob("lib/python*/site-packages"))
    (site / "bad.py").write_text("raise ImportError('x' * 40000)\n")
    return venv_dir


def test_doctor_reads_an_import_error_of_40000_characters(venv_with_bad_module, run_bootstrap):
    proc = run_bootstrap(["doctor", "--venv", venv_with_bad_module, "--import", "bad"],
                         timeout=120)
    no_signal(proc)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "ImportError: " + "x" * 40000 in proc.stdout + proc.stderr


def test_launch_refuses_on_an_import_error_of_40000_characters(tmp_path, venv_with_bad_module,
                                                               run_bootstrap):
    recipe = write(tmp_path, "")
    proc = run_bootstrap(["launch", recipe, "--venv", venv_with_bad_module, "--import", "bad",
                          "--", "true"], timeout=120)
    no_signal(proc)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "x" * 40000 in proc.stdout + proc.stderr


# ------------------------------------------------------------------ numbers in logs (6)

def test_perf_skips_a_400_digit_number(tmp_path, run_bootstrap):
    huge = "1" * 400
    log = tmp_path / "train.log"
    log.write_text(f" iteration 10/ 100 | throughput per GPU (TFLOP/s/GPU): {huge} |\n")
    proc = run_bootstrap(["perf", log, "--gpu", "H200"])
    no_signal(proc)  # std::stod threw std::out_of_range: abort, 134
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: no 'throughput per GPU (TFLOP/s/GPU)' line in {log}")

    with log.open("a") as f:
        f.write(f" iteration {huge}/ 100 | throughput per GPU (TFLOP/s/GPU): 400.0 | "
                f"MFU: {huge}%\n")
    proc = run_bootstrap(["perf", log, "--gpu", "H200"])
    no_signal(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("throughput: 400.0 TFLOP/s/GPU (median of 1 of 1 lines, "
                                  f"{log}:2-2;"), proc.stdout


def test_perf_with_a_gpu_name_of_100000_characters(tmp_path, run_bootstrap):
    log = tmp_path / "train.log"
    log.write_text(" iteration 10/ 100 | throughput per GPU (TFLOP/s/GPU): 400.0 |\n")
    proc = run_bootstrap(["perf", log, "--gpu", "h100 " + "x" * 100_000])
    no_signal(proc)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "(100005 characters)" in proc.stderr
    assert len(proc.stderr) < 1000
