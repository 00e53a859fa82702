"""The build's configuration as the scripts drive it: -Werror only with BOOTSTRAP_WERROR=ON (CI),
-O2 for Release, precompiled headers unless BOOTSTRAP_PCH=OFF; scripts/lib/configure.sh
reconfigures a build directory whose BOOTSTRAP_* options differ from what a script asks for;
scripts/setup.sh rejects what it does not know before installing anything.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CONFIGURE_SH = REPO / "scripts" / "lib" / "configure.sh"

needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ninja") is None,
                                 reason="cmake or ninja missing (scripts/setup.sh installs them)")


def compile_commands(build: Path) -> list[dict]:
    return json.loads((build / "compile_commands.json").read_text())


def configure_repo_copy(tmp_path: Path, *args: str) -> Path:
    root = tmp_path / "repo"
    if not root.exists():
        root.mkdir()
        for name in ("CMakeLists.txt",):
            shutil.copy2(REPO / name, root / name)
        for name in ("cmake", "src", "recipes"):
            shutil.copytree(REPO / name, root / name)
    build = root / "build"
    r = subprocess.run(["cmake", "-S", str(root), "-B", str(build), "-G", "Ninja",
                        "-DBOOTSTRAP_TESTS=OFF", *args], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return build


@needs_cmake
def test_werror_only_when_asked_and_release_is_O2(tmp_path):
    build = configure_repo_copy(tmp_path, "-DCMAKE_BUILD_TYPE=Release")
    commands = compile_commands(build)
    assert commands
    for c in commands:
        assert "-Werror" not in c["command"].split(), c["command"]
        assert " -O2 " in c["command"] and "-O3" not in c["command"], c["command"]
    build = configure_repo_copy(tmp_path, "-DBOOTSTRAP_WERROR=ON")
    assert all("-Werror" in c["command"].split() for c in compile_commands(build))


@needs_cmake
def test_precompiled_headers_and_their_switch(tmp_path):
    build = configure_repo_copy(tmp_path)
    by_file = {Path(c["file"]).name: c["command"] for c in compile_commands(build)}
    # CLI11 and nlohmann in cli's own PCH; recipe reuses the shared one (fmt + std).
    assert "bs_cli.dir/cmake_pch.hxx" in by_file["app.cpp"]
    cli_pch = (build / "CMakeFiles" / "bs_cli.dir" / "cmake_pch.hxx").read_text()
    assert "<CLI/CLI.hpp>" in cli_pch and "<nlohmann/json.hpp>" in cli_pch
    assert "bs_pch.dir/cmake_pch.hxx" in by_file["placeholders.cpp"]
    build = configure_repo_copy(tmp_path, "-DBOOTSTRAP_PCH=OFF")
    assert not any("cmake_pch" in c["command"] for c in compile_commands(build))


@needs_cmake
def test_a_third_party_library_stays_in_its_module(tmp_path):
    # toml++'s defines reach recipe/, and no longer cli/ (they did while every dependency was
    # PUBLIC); each module's include path holds its own headers and its links', not src/.
    build = configure_repo_copy(tmp_path)
    by_file = {Path(c["file"]).name: c["command"] for c in compile_commands(build)}
    assert "TOML_" in by_file["parser.cpp"]
    assert "TOML_" not in by_file["app.cpp"]
    assert "/src " not in by_file["app.cpp"] + " "
    assert "include/recipe" in by_file["parser.cpp"]
    assert "include/steps" not in by_file["parser.cpp"]


def tiny_project(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    root.mkdir()
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\nproject(tiny LANGUAGES NONE)\n"
        'option(BOOTSTRAP_WERROR "" OFF)\nmessage(STATUS "configured")\n')
    return root


def bs_configure(root: Path, *args: str) -> subprocess.CompletedProcess:
    script = f'source "{CONFIGURE_SH}"; bs_configure build "$@"'
    return subprocess.run(["bash", "-c", script, "bs_configure", *args], cwd=root,
                          capture_output=True, text=True, timeout=120)


def cache_value(root: Path, name: str) -> str:
    for line in (root / "build" / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split("=", 1)[1]
    return ""


@needs_cmake
def test_configure_reconfigures_when_an_option_changes(tmp_path):
    root = tiny_project(tmp_path)
    r = bs_configure(root, "-DBOOTSTRAP_WERROR=OFF")
    assert r.returncode == 0, r.stderr
    assert cache_value(root, "BOOTSTRAP_WERROR") == "OFF"
    ninja = root / "build" / "build.ninja"
    before = ninja.stat().st_mtime_ns

    r = bs_configure(root, "-DBOOTSTRAP_WERROR=OFF")  # same value: left alone
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert ninja.stat().st_mtime_ns == before

    r = bs_configure(root, "-DBOOTSTRAP_WERROR=ON")  # CI after a user's build
    assert r.returncode == 0, r.stderr
    assert "configure: reconfiguring build (BOOTSTRAP_WERROR was 'OFF', now 'ON')" in r.stderr
    assert cache_value(root, "BOOTSTRAP_WERROR") == "ON"


def test_setup_rejects_unknown_options_before_doing_anything(tmp_path):
    for args, message in ((["--bogus"], "setup: unknown option '--bogus'"),
                          (["--target"], "setup: --target needs a CMake target name")):
        r = subprocess.run(["bash", str(REPO / "scripts" / "setup.sh"), *args],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, r.stderr
        assert message in r.stderr
