"""scripts/check-test-names.py: duplicate test names (which hide a test) are found, with both
places named; the repository's own tests pass it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "check-test-names.py"


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True,
                          text=True, timeout=60)


def plant(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_repository_has_no_duplicate_test_names():
    proc = check(REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = proc.stdout.strip()
    assert out.startswith("check-test-names: no duplicate names among ")
    # Both kinds were looked at: this file's tests and the unit tests are counted.
    pytest_count = int(out.split(" among ")[1].split(" pytest tests")[0])
    catch_count = int(out.split(" modules, ")[1].split(" Catch2")[0])
    assert pytest_count > 100 and catch_count > 100, out


def test_a_clean_tree_passes_with_its_counts(tmp_path):
    plant(tmp_path, {
        "tests/integration/test_a.py": "def test_one():\n    pass\n\ndef test_two():\n    pass\n",
        "tests/integration/test_b.py": "def test_one():\n    pass\n",  # other module: fine
        "tests/unit/core/test_x.cpp": 'TEST_CASE("x one") {}\nTEST_CASE("x two", "[t]") {}\n',
        "tests/unit/net/test_y.cpp": 'TEST_CASE("x one") {}\n',  # other binary: fine
    })
    proc = check(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ("check-test-names: no duplicate names among 3 pytest tests in 2 "
                           "modules, 3 Catch2 test cases in 2 binaries\n")


def test_a_duplicate_pytest_function_names_both_lines(tmp_path):
    plant(tmp_path, {"tests/integration/test_dup.py": (
        "import pytest\n"
        "\n"
        "def test_same(world):\n"           # line 3
        "    assert False\n"
        "\n"
        "def helper():\n"
        "    pass\n"
        "\n"
        "async def test_same():\n"          # line 9
        "    pass\n")})
    proc = check(tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert ("tests/integration/test_dup.py:9: test function 'test_same' is defined again (first "
            "at tests/integration/test_dup.py:3); the first never runs (same module)"
            in proc.stderr)
    assert proc.stderr.endswith("check-test-names: 1 problem(s) among 2 pytest tests in 1 "
                                "modules, 0 Catch2 test cases in 0 binaries\n")


def test_duplicate_methods_and_classes(tmp_path):
    plant(tmp_path, {"tests/integration/test_cls.py": (
        "class TestA:\n"                    # 1
        "    def test_m(self):\n"           # 2
        "        pass\n"
        "    def test_m(self):\n"           # 4
        "        pass\n"
        "\n"
        "class TestB:\n"                    # 7
        "    def test_m(self):\n"           # 8: other class, fine
        "        pass\n"
        "\n"
        "class TestA:\n"                    # 11
        "    def test_n(self):\n"
        "        pass\n")})
    proc = check(tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert ("tests/integration/test_cls.py:4: test function 'test_m' is defined again (first at "
            "tests/integration/test_cls.py:2); the first never runs (same class)") in lines
    assert ("tests/integration/test_cls.py:11: test class 'TestA' is defined again (first at "
            "tests/integration/test_cls.py:1); the first never runs (same module)") in lines
    assert len(lines) == 3, proc.stderr


def test_duplicate_fixtures_in_a_module_and_over_a_conftest(tmp_path):
    plant(tmp_path, {
        "tests/integration/conftest.py": (
            "import pytest\n"
            "\n"
            "@pytest.fixture\n"
            "def world():\n"                # 4
            "    return 1\n"),
        "tests/integration/test_fix.py": (
            "import pytest\n"
            "from pytest import fixture\n"
            "\n"
            "@pytest.fixture(scope='session')\n"
            "def thing():\n"                # 5
            "    return 1\n"
            "\n"
            "@fixture(name='thing')\n"
            "def other_thing():\n"          # 9
            "    return 2\n"
            "\n"
            "@pytest.fixture\n"
            "def world():\n"                # 13: overrides conftest's
            "    return 3\n"
            "\n"
            "def test_it(thing, world):\n"
            "    pass\n"),
        "tests/integration/test_meant.py": (
            "import pytest\n"
            "\n"
            "@pytest.fixture\n"
            "def world():  # check-test-names: override\n"
            "    return 4\n")})
    proc = check(tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert ("tests/integration/test_fix.py:9: fixture 'thing' is defined again (first at "
            "tests/integration/test_fix.py:5); the first is replaced in its module") in lines
    assert ("tests/integration/test_fix.py:13: fixture 'world' is defined again (first at "
            "tests/integration/conftest.py:4); it overrides the conftest.py fixture for this "
            "module (mark the def line '# check-test-names: override' if that is meant)") in lines
    assert len(lines) == 3, proc.stderr  # test_meant.py's marked override is fine


def test_duplicate_catch2_names_within_one_binary(tmp_path):
    plant(tmp_path, {
        "tests/unit/engine/test_a.cpp": (
            '#include <catch2/catch.hpp>\n'
            '// TEST_CASE("in a comment") is not a test\n'
            'TEST_CASE("plan keys "\n'                     # line 3: concatenated literals
            '          "differ", "[plan]") {}\n'
            '/* TEST_CASE("in a comment") */\n'
            'TEST_CASE("in a comment") {}\n'
            'SCENARIO("journeys") {}\n'),
        "tests/unit/engine/test_b.cpp": (
            '#include <catch2/catch.hpp>\n'
            '\n'
            'TEST_CASE_METHOD(Fixture, "plan keys differ", "[plan]") {}\n'   # line 3
            'TEST_CASE("Scenario: journeys") {}\n'                         # line 4
            'TEST_CASE("a \\"quoted\\" name") {}\n'
            'TEST_CASE("this; that") {}\n'                # line 6: ctest splits it
            'TEST_CASE("a \'\\\\r\' ends it") {}\n'     # line 7: a backslash in the name
            'TEST_CASE("~= expands") {}\n'),              # line 8: Catch2's exclusion
        "tests/unit/steps/test_c.cpp": 'TEST_CASE("plan keys differ") {}\n',  # other binary
    })
    proc = check(tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert ("tests/unit/engine/test_b.cpp:3: Catch2 test case (binary unit_engine) 'plan keys "
            "differ' is defined again (first at tests/unit/engine/test_a.cpp:3); Catch2 refuses "
            "to register both") in lines
    assert ("tests/unit/engine/test_b.cpp:4: Catch2 test case (binary unit_engine) 'Scenario: "
            "journeys' is defined again (first at tests/unit/engine/test_a.cpp:7); Catch2 "
            "refuses to register both") in lines
    assert ("tests/unit/engine/test_b.cpp:6: Catch2 test case 'this; that': ctest's discovery "
            "(CatchAddTests.cmake) splits a name at ';' into tests that match nothing, so it "
            "never runs") in lines
    assert ("tests/unit/engine/test_b.cpp:7: Catch2 test case 'a '\\r' ends it': ctest's "
            "discovery passes '\\' unescaped and Catch2 reads it as an escape, so the name "
            "matches nothing") in lines
    assert ("tests/unit/engine/test_b.cpp:8: Catch2 test case '~= expands': Catch2 reads a "
            "leading '~' or 'exclude:' as 'every test but this one', so ctest runs all the "
            "others instead") in lines
    assert lines[-1] == ("check-test-names: 5 problem(s) among 0 pytest tests in 0 modules, "
                         "10 Catch2 test cases in 2 binaries")
    assert len(lines) == 6, proc.stderr


def test_an_unparsable_test_file_or_no_tests_dir_is_named(tmp_path):
    plant(tmp_path, {"tests/integration/test_bad.py": "def test_x(:\n"})
    proc = check(tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        f"check-test-names: cannot read {tmp_path / 'tests/integration/test_bad.py'}: ")
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = check(empty)
    assert proc.returncode == 2
    assert proc.stderr == f"check-test-names: {empty / 'tests'} is not a directory\n"
