#!/usr/bin/env python3
"""Fail on test names that hide each other, so no test silently never runs.

    scripts/check-test-names.py [ROOT]      ROOT: the repository (default: this script's)

Checks, under ROOT/tests:
  pytest (test_*.py, *_test.py, conftest.py): a test function, test class or fixture defined
    twice in one module (the later `def` replaces the earlier, which never runs), a test method
    or fixture defined twice in one class, and a fixture in a test module that has the name of
    a conftest.py fixture above it (an override; say it is meant with a
    `# check-test-names: override` comment on its `def` line).
  Catch2 (tests/unit/<module>/*.cpp form the binary unit_<module>): a TEST_CASE,
    TEST_CASE_METHOD, SCENARIO or TEMPLATE_TEST_CASE name used twice in one binary, and a
    name with ';' or '\\' (catch_discover_tests turns it into ctest tests that match nothing)
    or starting with '~' or 'exclude:' (Catch2 then runs every case but that one).

Each finding names both places as file:line. Exit status 1 with findings, 2 when ROOT has no
tests/ directory or a file cannot be read or parsed; otherwise 0 and one line with the counts.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

OVERRIDE_MARK = "check-test-names: override"


class Unreadable(Exception):
    """A test file that cannot be read or parsed."""


@dataclass(frozen=True)
class Place:
    path: Path
    line: int

    def show(self, root: Path) -> str:
        try:
            rel = self.path.relative_to(root)
        except ValueError:
            rel = self.path
        return f"{rel}:{self.line}"


class Findings:
    def __init__(self, root: Path):
        self.root = root
        self.lines: list[str] = []

    def duplicate(self, what: str, name: str, first: Place, again: Place, why: str) -> None:
        self.lines.append(f"{again.show(self.root)}: {what} '{name}' is defined again "
                          f"(first at {first.show(self.root)}); {why}")

    def bad_name(self, what: str, name: str, place: Place, why: str) -> None:
        self.lines.append(f"{place.show(self.root)}: {what} '{name}': {why}")


# --------------------------------------------------------------------------- pytest

def is_pytest_file(path: Path) -> bool:
    return path.suffix == ".py" and (path.name == "conftest.py" or path.name.startswith("test_")
                                     or path.stem.endswith("_test"))


def fixture_name(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The fixture name when `fn` is decorated with pytest.fixture / fixture (name= wins)."""
    for deco in fn.decorator_list:
        call = deco if isinstance(deco, ast.Call) else None
        target = call.func if call else deco
        if (isinstance(target, ast.Attribute) and target.attr == "fixture") or (
                isinstance(target, ast.Name) and target.id == "fixture"):
            if call:
                for kw in call.keywords:
                    if kw.arg == "name" and isinstance(kw.value, ast.Constant) \
                            and isinstance(kw.value.value, str):
                        return kw.value.value
            return fn.name
    return None


def check_scope(body: list[ast.stmt], path: Path, in_class: bool, findings: Findings,
                counts: dict[str, int]) -> dict[str, Place]:
    """Check one module or class body; returns its fixtures (name -> place)."""
    tests: dict[str, Place] = {}
    classes: dict[str, Place] = {}
    fixtures: dict[str, Place] = {}
    scope = "class" if in_class else "module"
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            place = Place(path, node.lineno)
            fixture = fixture_name(node)
            if fixture is not None:
                if fixture in fixtures:
                    findings.duplicate("fixture", fixture, fixtures[fixture], place,
                                       f"the first is replaced in its {scope}")
                fixtures[fixture] = place
            elif node.name.startswith("test"):
                counts["pytest"] += 1
                if node.name in tests:
                    findings.duplicate("test function", node.name, tests[node.name], place,
                                       f"the first never runs (same {scope})")
                tests[node.name] = place
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            place = Place(path, node.lineno)
            if node.name in classes:
                findings.duplicate("test class", node.name, classes[node.name], place,
                                   f"the first never runs (same {scope})")
            classes[node.name] = place
            check_scope(node.body, path, True, findings, counts)
    return fixtures


def conftest_fixtures(path: Path, parsed: dict[Path, ast.Module]) -> dict[str, Place]:
    """Fixtures of conftest.py files in `path`'s directory and above, nearest last."""
    out: dict[str, Place] = {}
    chain = [d / "conftest.py" for d in reversed(path.parent.parents)] + [path.parent / "conftest.py"]
    for conftest in chain:
        tree = parsed.get(conftest)
        if tree is None or conftest == path:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = fixture_name(node)
                if name is not None:
                    out[name] = Place(conftest, node.lineno)
    return out


def check_pytest(tests_dir: Path, findings: Findings, counts: dict[str, int]) -> None:
    files = sorted(p for p in tests_dir.rglob("*.py") if is_pytest_file(p))
    parsed: dict[Path, ast.Module] = {}
    sources: dict[Path, list[str]] = {}
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
            parsed[path] = ast.parse(text, filename=str(path))
        except (OSError, UnicodeDecodeError, SyntaxError) as e:
            raise Unreadable(f"check-test-names: cannot read {path}: {e}") from None
        sources[path] = text.splitlines()
    for path in files:
        counts["pytest_modules"] += 1
        fixtures = check_scope(parsed[path].body, path, False, findings, counts)
        if path.name == "conftest.py":
            continue
        above = conftest_fixtures(path, parsed)
        for name, place in fixtures.items():
            if name in above and OVERRIDE_MARK not in sources[path][place.line - 1]:
                findings.duplicate("fixture", name, above[name], place,
                                   "it overrides the conftest.py fixture for this module (mark "
                                   f"the def line '# {OVERRIDE_MARK}' if that is meant)")


# --------------------------------------------------------------------------- Catch2

# The macros whose first string argument (second for TEST_CASE_METHOD) names a test case.
_CATCH_MACRO = re.compile(r"\b(TEST_CASE_METHOD|TEMPLATE_TEST_CASE|TEST_CASE|SCENARIO)\s*\(")
_STRING = re.compile(r'\s*"((?:[^"\\\n]|\\.)*)"')


def blank_comments(text: str) -> str:
    """`text` with comments replaced by spaces (newlines kept, so offsets and lines hold);
    string and character literals are left as they are."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [ch if ch == "\n" else " " for ch in text[i:j]]
            i = j
        else:
            i += 1
    return "".join(out)


def unescape(literal: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), literal)


def catch_test_names(path: Path) -> list[tuple[str, int]]:
    """(name, line) of each test case declared in `path`, as Catch2 registers it."""
    try:
        text = blank_comments(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise Unreadable(f"check-test-names: cannot read {path}: {e}") from None
    names = []
    for m in _CATCH_MACRO.finditer(text):
        at = m.end()
        if m.group(1) == "TEST_CASE_METHOD":  # (Fixture, "name", "tags")
            comma = text.find(",", at)
            if comma < 0:
                continue
            at = comma + 1
        parts = []
        while (s := _STRING.match(text, at)):  # adjacent literals concatenate
            parts.append(unescape(s.group(1)))
            at = s.end()
        if not parts:
            continue  # the macro's own #define, or a name built another way
        name = "".join(parts)
        if m.group(1) == "SCENARIO":
            name = "Scenario: " + name
        names.append((name, text.count("\n", 0, m.start()) + 1))
    return names


def check_catch2(tests_dir: Path, findings: Findings, counts: dict[str, int]) -> None:
    unit = tests_dir / "unit"
    if not unit.is_dir():
        return
    for module in sorted(p for p in unit.iterdir() if p.is_dir()):
        sources = sorted(module.glob("*.cpp"))
        if not sources:
            continue
        counts["catch_binaries"] += 1
        seen: dict[str, Place] = {}
        for path in sources:
            for name, line in catch_test_names(path):
                counts["catch"] += 1
                place = Place(path, line)
                if ";" in name:
                    findings.bad_name("Catch2 test case", name, place,
                                      "ctest's discovery (CatchAddTests.cmake) splits a name at "
                                      "';' into tests that match nothing, so it never runs")
                if name.startswith("~") or name.lower().startswith("exclude:"):
                    findings.bad_name("Catch2 test case", name, place,
                                      "Catch2 reads a leading '~' or 'exclude:' as 'every test "
                                      "but this one', so ctest runs all the others instead")
                if "\\" in name:
                    findings.bad_name("Catch2 test case", name, place,
                                      "ctest's discovery passes '\\' unescaped and Catch2 reads "
                                      "it as an escape, so the name matches nothing")
                if name in seen:
                    findings.duplicate(f"Catch2 test case (binary unit_{module.name})", name,
                                       seen[name], place, "Catch2 refuses to register both")
                else:
                    seen[name] = place


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = Path(argv[1] if len(argv) == 2 else Path(__file__).resolve().parents[1]).resolve()
    tests_dir = root / "tests"
    if not tests_dir.is_dir():
        print(f"check-test-names: {tests_dir} is not a directory", file=sys.stderr)
        return 2
    findings = Findings(root)
    counts = {"pytest": 0, "pytest_modules": 0, "catch": 0, "catch_binaries": 0}
    try:
        check_pytest(tests_dir, findings, counts)
        check_catch2(tests_dir, findings, counts)
    except Unreadable as e:
        print(e, file=sys.stderr)
        return 2
    for line in findings.lines:
        print(line, file=sys.stderr)
    summary = (f"{counts['pytest']} pytest tests in {counts['pytest_modules']} modules, "
               f"{counts['catch']} Catch2 test cases in {counts['catch_binaries']} binaries")
    if findings.lines:
        print(f"check-test-names: {len(findings.lines)} problem(s) among {summary}",
              file=sys.stderr)
        return 1
    print(f"check-test-names: no duplicate names among {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
