"""Step kind `pybind11`: Megatron-style helpers compiled for the venv's own Python with the
system pybind11 headers (Debian's pybind11-dev; scripts/setup.sh installs it), imported and
called; a second run skips; a changed source rebuilds; a compile error keeps the old module."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import recipes as R
from recipes import steps_by_id

PYBIND11_INCLUDE = Path("/usr/include")

HELPERS_CPP = """\
// A stand-in for megatron/core/datasets/helpers.cpp: one function exported with pybind11.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <vector>

static long build_sample_idx_sum(const std::vector<long>& sizes) {
    long total = 0;
    for (long s : sizes) total += s;
    return total;
}

PYBIND11_MODULE(helpers_cpp, m) { m.def("build_sample_idx_sum", &build_sample_idx_sum); }
"""


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


@pytest.fixture
def helpers(world) -> Path:
    if not (PYBIND11_INCLUDE / "pybind11" / "pybind11.h").exists():
        pytest.skip("pybind11 headers missing (/usr/include/pybind11: apt-get install pybind11-dev)")
    datasets = world.root / "megatron" / "core" / "datasets"
    datasets.mkdir(parents=True)
    source = datasets / "helpers.cpp"
    source.write_text(HELPERS_CPP)
    return source


def pybind11_step(source: Path) -> dict:
    return {"id": "helpers", "kind": "pybind11", "source": str(source), "module": "helpers_cpp",
            "pybind11_include": str(PYBIND11_INCLUDE)}


def test_pybind11_builds_imports_skips_and_rebuilds(world, helpers):
    recipe = R.write_recipe(world.root, steps=[R.venv(), pybind11_step(helpers)])
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["helpers"]["result"] == "ran"
    suffix = world.python("import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))").stdout.strip()
    module = helpers.parent / f"helpers_cpp{suffix}"
    assert module.exists()
    assert not list(helpers.parent.glob(".helpers_cpp*.tmp-*"))
    r = world.python(f"import sys; sys.path.insert(0, {str(helpers.parent)!r}); import helpers_cpp; "
                     "print(helpers_cpp.build_sample_idx_sum([1, 2, 39]))")
    assert r.stdout.strip() == "42", r.stderr

    proc, doc = world.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["helpers"]["result"] == "skipped"

    # The module is part of the outcome: removed behind bootstrap's back, it is built again.
    module.unlink()
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["helpers"]["result"] == "ran"
    assert module.exists()

    # A changed source changes the key: rebuilt.
    helpers.write_text(HELPERS_CPP.replace("total = 0", "total = 1"))
    proc, doc = world.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["helpers"]["result"] == "ran"
    r = world.python(f"import sys; sys.path.insert(0, {str(helpers.parent)!r}); import helpers_cpp; "
                     "print(helpers_cpp.build_sample_idx_sum([1, 2, 39]))")
    assert r.stdout.strip() == "43", r.stderr

    # A compile error fails the step and leaves the previous module and no temp file.
    before = module.read_bytes()
    helpers.write_text(HELPERS_CPP + "\nthis is not C++;\n")
    proc = world.run([recipe])
    assert proc.returncode == 1, proc.stderr
    assert "step 'helpers' (pybind11) failed" in proc.stderr
    assert module.read_bytes() == before
    assert not list(helpers.parent.glob(".helpers_cpp*.tmp-*"))


def test_pybind11_plan_shows_the_compile(world, helpers):
    recipe = R.write_recipe(world.root, steps=[R.venv(), pybind11_step(helpers)])
    ok(world.run([recipe, "--only", "venv"]))
    proc = ok(world.run(["plan", recipe, "--explain"]))
    assert "-O3 -shared -std=c++17 -fPIC -I" in proc.stdout
    assert f"-I{PYBIND11_INCLUDE} {helpers} -o {helpers.parent}/helpers_cpp.cpython-" in proc.stdout
    assert "verify: import helpers_cpp (from " in proc.stdout
    assert "| source.sha256: " in proc.stdout and "| compiler: " in proc.stdout
