"""ARCHITECTURE.md's layering is enforced twice: scripts/check-layering.sh fails (naming
file:line) on an include of a module that the includer does not link directly, or of a third-party
header that its module does not own; and the build itself cannot compile an include of a module
that is not linked at all (each module's include path holds only its own and its links' headers).

Each test works on a copy of the repository's CMakeLists.txt, cmake/ and src/ in a temp dir, with
one include planted.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / "scripts" / "check-layering.sh"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy2(REPO / "CMakeLists.txt", root / "CMakeLists.txt")
    shutil.copytree(REPO / "cmake", root / "cmake")
    shutil.copytree(REPO / "src", root / "src")
    return root


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(CHECK), str(root)], capture_output=True, text=True,
                          timeout=120)


def plant(path: Path, line: str) -> int:
    """Insert `line` after the file's first #include; return its 1-based line number."""
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, text in enumerate(lines) if text.startswith("#include")) + 1
    lines.insert(at, line + "\n")
    path.write_text("".join(lines))
    return at + 1


def test_the_repository_passes(tree):
    r = check(tree)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == ""
    assert "every include is of a linked module" in r.stderr


def test_an_include_of_a_module_not_linked_fails_naming_it(tree):
    line = plant(tree / "src" / "recipe" / "recipe.cpp", '#include "steps/executor.hpp"')
    r = check(tree)
    assert r.returncode == 1, r.stdout + r.stderr
    assert (f'src/recipe/recipe.cpp:{line}: recipe/ includes "steps/..." but bs_recipe does not '
            "link bs_steps") in r.stdout
    assert "1 include(s) break the layering" in r.stderr


def test_a_module_reached_only_through_another_is_not_enough(tree):
    # engine links steps, which links inspect: the build would compile this; the check does not
    # let it through, since bs_engine does not list bs_inspect itself.
    line = plant(tree / "src" / "engine" / "plan.hpp", '#include "inspect/fatbin.hpp"')
    r = check(tree)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f'src/engine/plan.hpp:{line}: engine/ includes "inspect/..."' in r.stdout


def test_nothing_includes_cli(tree):
    line = plant(tree / "src" / "engine" / "runner.cpp", '#include "cli/status.hpp"')
    r = check(tree)
    assert r.returncode == 1
    assert f'src/engine/runner.cpp:{line}: engine/ includes "cli/..."' in r.stdout


def test_a_third_party_header_outside_its_owner_fails(tree):
    toml = plant(tree / "src" / "cli" / "app.cpp", "#include <toml++/toml.h>")
    curl = plant(tree / "src" / "steps" / "build.cpp", "#include <curl/curl.h>")
    r = check(tree)
    assert r.returncode == 1, r.stdout + r.stderr
    assert (f"src/cli/app.cpp:{toml}: cli/ includes <toml++/toml.h> but bs_cli does not link "
            "${BS_TOML} (toml++'s target)") in r.stdout
    assert f"src/steps/build.cpp:{curl}: <curl/curl.h> is libcurl's, which only net/ may" in r.stdout
    assert "2 include(s) break the layering" in r.stderr


def test_a_link_added_with_target_link_libraries_counts(tree):
    plant(tree / "src" / "recipe" / "recipe.cpp", '#include "exec/process.hpp"')
    assert check(tree).returncode == 1
    cmake = tree / "CMakeLists.txt"
    cmake.write_text(cmake.read_text() + "\ntarget_link_libraries(bs_recipe\n  PUBLIC bs_exec)\n")
    r = check(tree)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_deps_line_comment_is_not_a_dependency(tree):
    plant(tree / "src" / "recipe" / "recipe.cpp", '#include "exec/process.hpp"')
    cmake = tree / "CMakeLists.txt"
    text = cmake.read_text().replace(
        "bs_module(recipe SOURCES ${RECIPE_SRC} DEPS bs_core",
        "bs_module(recipe SOURCES ${RECIPE_SRC} DEPS bs_core  # not bs_exec\n ")
    assert "# not bs_exec" in text
    cmake.write_text(text)
    r = check(tree)
    assert r.returncode == 1, r.stdout + r.stderr
    assert 'recipe/ includes "exec/..."' in r.stdout


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ninja") is None,
                    reason="cmake or ninja missing (scripts/setup.sh installs them)")
def test_the_build_cannot_compile_an_include_of_a_module_not_linked(tree):
    # recipe links only core: steps/ is not on its include path. One object file is compiled,
    # without the PCH and the unit tests, to keep this quick.
    shutil.copytree(REPO / "recipes", tree / "recipes")
    source = tree / "src" / "recipe" / "recipe.cpp"
    build = tree / "build"
    configure = subprocess.run(
        ["cmake", "-S", str(tree), "-B", str(build), "-G", "Ninja", "-DBOOTSTRAP_TESTS=OFF",
         "-DBOOTSTRAP_PCH=OFF", "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_FLAGS_DEBUG=-O0"],
        capture_output=True, text=True, timeout=300)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    obj = "CMakeFiles/bs_recipe.dir/src/recipe/recipe.cpp.o"

    def compile_recipe() -> subprocess.CompletedProcess:
        return subprocess.run(["ninja", "-C", str(build), obj], capture_output=True, text=True,
                              timeout=300)

    ok = compile_recipe()
    assert ok.returncode == 0, ok.stdout + ok.stderr  # the include path works as it is
    plant(source, '#include "steps/executor.hpp"')
    r = compile_recipe()
    assert r.returncode != 0, r.stdout
    assert "steps/executor.hpp: No such file or directory" in r.stdout
