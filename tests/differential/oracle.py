"""The reference side of the differential test (run.py): what packaging and pip answer for a
case, and how a driver answer is compared with it (run.py's header says what "agree" means).

`expect(case)` gives the reference answer: a dict of fields, or {"error": ...} when the
reference rejects the input. `differences(case, expected, got)` names the fields where the
driver's answer `got` disagrees ([] when the two agree).
"""

from __future__ import annotations

import json
import re

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidName, InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version
from pip._internal.index.collector import IndexContent, parse_links
from pip._internal.models.link import Link

# A requirement's marker is compared by what it says in these environments.
REQUIREMENT_ENVS = [
    {"python_version": "3.11", "python_full_version": "3.11.2", "implementation_version": "3.11.2",
     "platform_release": "6.1.0-18-amd64", "os_name": "posix", "sys_platform": "linux", "platform_machine": "x86_64",
     "platform_system": "Linux", "platform_version": "#1 SMP", "platform_python_implementation": "CPython",
     "implementation_name": "cpython", "extra": "", "extras": [], "dependency_groups": []},
    {"python_version": "2.7", "python_full_version": "2.7.18", "implementation_version": "7.3.13",
     "platform_release": "10.0.19041", "os_name": "nt", "sys_platform": "win32", "platform_machine": "AMD64",
     "platform_system": "Windows", "platform_version": "10.0.19041", "platform_python_implementation": "PyPy",
     "implementation_name": "pypy", "extra": "test", "extras": ["test"], "dependency_groups": ["doc"]},
    {"python_version": "3.13", "python_full_version": "3.13.0rc1", "implementation_version": "3.13.0rc1",
     "platform_release": "22.6.0", "os_name": "posix", "sys_platform": "darwin", "platform_machine": "arm64",
     "platform_system": "Darwin", "platform_version": "Darwin Kernel Version 22.6.0",
     "platform_python_implementation": "CPython", "implementation_name": "cpython", "extra": "Foo_Bar",
     "extras": ["dev-tools", "lint"], "dependency_groups": []},
]
UNDEFINED = "undefined"  # a marker comparison packaging leaves undefined (it raises)


def error(exc: BaseException) -> dict:
    return {"error": f"{type(exc).__name__}: {exc}"}


# --- PEP 440 ----------------------------------------------------------------------------------


def expect_version_parse(case: dict) -> dict:
    try:
        v = Version(case["v"])
    except (InvalidVersion, ValueError) as e:
        return error(e)
    return {"str": str(v), "public": v.public, "base": v.base_version, "local": v.local or "", "epoch": v.epoch,
            "release": list(v.release), "is_prerelease": v.is_prerelease, "is_postrelease": v.is_postrelease,
            "is_devrelease": v.is_devrelease}


def expect_version_compare(case: dict) -> dict:
    try:
        a, b = Version(case["a"]), Version(case["b"])
    except (InvalidVersion, ValueError) as e:
        return error(e)
    return {"cmp": (a > b) - (a < b)}


def spec_list(specifiers: SpecifierSet) -> list[str]:
    return sorted({str(s) for s in specifiers})


def expect_specifier_parse(case: dict) -> dict:
    try:
        specs = SpecifierSet(case["spec"])
    except InvalidSpecifier as e:
        return error(e)
    return {"specs": spec_list(specs), "prereleases": bool(specs.prereleases)}


def expect_specifier_contains(case: dict) -> dict:
    try:
        specs = SpecifierSet(case["spec"])
        Version(case["v"])
    except (InvalidSpecifier, InvalidVersion) as e:
        return error(e)
    # The version goes in as text: `===` compares the text as written.
    return {"contains": specs.contains(case["v"], prereleases=bool(specs.prereleases)),
            "contains_pre": specs.contains(case["v"], prereleases=True)}


# --- PEP 508 ----------------------------------------------------------------------------------


def packaging_env(env: dict) -> dict:
    return {k: frozenset(v) if isinstance(v, list) else v for k, v in env.items()}


def evaluate(marker: Marker, env: dict):
    try:
        return marker.evaluate(packaging_env(env), context="lock_file")
    except (UndefinedComparison, UndefinedEnvironmentName):
        return UNDEFINED


def expect_marker_evaluate(case: dict) -> dict:
    try:
        marker = Marker(case["marker"])
    except InvalidMarker as e:
        return error(e)
    return {"results": [evaluate(marker, env) for env in case["envs"]]}


def marker_results(text: str | None, envs: list[dict]):
    """What the marker `text` says in each env; "unparsable" when packaging rejects it."""
    if text is None:
        return None
    try:
        marker = Marker(text)
    except InvalidMarker:
        return "unparsable"
    return [evaluate(marker, env) for env in envs]


def requirement_fields(req: Requirement) -> dict:
    return {"name": req.name, "normalized_name": canonicalize_name(req.name),
            "extras": sorted({canonicalize_name(e) for e in req.extras}), "specs": spec_list(req.specifier),
            "url": req.url or "", "marker": marker_results(str(req.marker) if req.marker else None, REQUIREMENT_ENVS)}


def expect_requirement_parse(case: dict) -> dict:
    try:
        return requirement_fields(Requirement(case["req"]))
    except InvalidRequirement as e:
        return error(e)


# --- PEP 427, PEP 503 names -------------------------------------------------------------------


def expect_wheel_name(case: dict) -> dict:
    try:
        name, version, build, tags = parse_wheel_filename(case["filename"])
    except (InvalidWheelFilename, ValueError) as e:
        return error(e)
    return {"name": name, "version": str(version), "build": list(build) if build else None,
            "tags": sorted(str(t) for t in tags)}


def expect_normalize(case: dict) -> dict:
    try:
        canonicalize_name(case["name"], validate=True)
        valid = True
    except InvalidName:
        valid = False
    return {"normalized": canonicalize_name(case["name"]), "valid": valid}


# --- PEP 503 / PEP 691 pages (pip) ------------------------------------------------------------

def quoted(url: str) -> str:
    """`url` as pip spells a link to it (its _ensure_quoted_url), without the fragment."""
    return Link.from_element({"href": url}, page_url=url, base_url=url).url_without_fragment


def expect_index_page(case: dict) -> dict:
    page = IndexContent(case["body"].encode(), case["content_type"], None, case["url"], cache_link_parsing=False)
    try:
        links = list(parse_links(page))
    except ValueError as e:  # a JSON page that does not parse
        return error(e)
    names = [link.filename for link in links]
    if case["op"] == "index_page_json":
        # pip names the file after its URL; PEP 691 gives it a name of its own. pip skips an
        # entry without a url, so the two lists pair up once those are left out.
        entries = [e for e in json.loads(case["body"]).get("files", []) if e.get("url") is not None]
        names = [e.get("filename") for e in entries]
    files = []
    for link, name in zip(links, names):
        if link.path.endswith("/"):
            continue  # a directory (or the page itself, for "#top"), not a file
        files.append({"filename": name, "url": link.url_without_fragment,
                      "sha256": link._hashes.get("sha256", "").lower(), "yanked": link.is_yanked})
    return {"files": files}


EXPECT = {
    "version_parse": expect_version_parse,
    "version_compare": expect_version_compare,
    "specifier_parse": expect_specifier_parse,
    "specifier_contains": expect_specifier_contains,
    "marker_evaluate": expect_marker_evaluate,
    "requirement_parse": expect_requirement_parse,
    "wheel_name": expect_wheel_name,
    "normalize": expect_normalize,
    "index_page_html": expect_index_page,
    "index_page_json": expect_index_page,
}


def expect(case: dict) -> dict:
    try:
        return EXPECT[case["op"]](case)
    except Exception as e:  # the reference itself failed: an answer of its own, never a crash here
        return {"error": f"reference raised {type(e).__name__}: {e}"}


# --- comparison -------------------------------------------------------------------------------


def same_results(expected: list, got: list) -> bool:
    """Marker results agree where packaging defines them."""
    if not isinstance(got, list) or len(got) != len(expected):
        return False
    return all(e == UNDEFINED or e == g for e, g in zip(expected, got))


def canonical_got(case: dict, got: dict) -> dict:
    """The driver's answer in the reference's terms."""
    op = case["op"]
    got = dict(got)
    if op == "wheel_name" and "build" in got:
        m = re.match(r"(\d+)(.*)\Z", got["build"], re.S | re.ASCII)
        got["build"] = [int(m.group(1)), m.group(2)] if m else (None if got["build"] == "" else got["build"])
    if op in ("index_page_html", "index_page_json") and "files" in got:
        got["files"] = [{**f, "url": quoted(f["url"])} for f in got["files"]]
    if op == "requirement_parse" and "marker" in got:
        got["marker"] = marker_results(got["marker"], REQUIREMENT_ENVS)
    return got


def differences(case: dict, expected: dict, got: dict) -> list[str]:
    """The fields where `got` (the driver's answer) and `expected` disagree."""
    if "error" in expected or "error" in got:
        if "error" in expected and "error" in got:
            return []
        return ["accepted by bootstrap only" if "error" in expected else "rejected by bootstrap only"]
    got = canonical_got(case, got)
    diffs = []
    for key, want in expected.items():
        have = got.get(key, "<missing>")
        if key in ("results", "marker") and isinstance(want, list):
            if not same_results(want, have):
                diffs.append(key)
        elif have != want:
            diffs.append(key)
    op = case["op"]
    # bootstrap's canonical text must mean the same to the reference.
    if op == "marker_evaluate" and not same_results(expected["results"], marker_results(got.get("str"), case["envs"])):
        diffs.append("str (re-read by packaging)")
    if op == "requirement_parse":
        try:
            again = requirement_fields(Requirement(got.get("str", "")))
        except InvalidRequirement:
            again = None
        if again is None or any(again[k] != expected[k] for k in ("name", "extras", "specs", "url")) or (
            isinstance(expected["marker"], list) and not same_results(expected["marker"], again["marker"])
        ):
            diffs.append("str (re-read by packaging)")
    if op == "specifier_parse":
        try:
            again = SpecifierSet(got.get("str", ""))
        except InvalidSpecifier:
            again = None
        if again is None or again != SpecifierSet(case["spec"]):
            diffs.append("str (re-read by packaging)")
    return diffs
