#!/usr/bin/env python3
"""Differential test: bootstrap's PEP 440/508/427/503/691 code against the reference
implementations, packaging (26.x) and pip, as scripts/setup.sh pins them in .tools/venv.

    .tools/venv/bin/python tests/differential/run.py [--seed N] [--cases N] [--driver PATH]

The cases are the hand-written vectors of vectors.py (from the PEP texts) and --cases random
ones (gen.py) from a seed, printed first (a new one per run unless --seed gives it). Each case
goes to build/differential_driver (tests/differential/driver.cpp: bootstrap's public API) and
to the reference (oracle.py); any disagreement prints the smallest variant of the case that
still disagrees the same way, with both answers, and the exit status is 1 (2: cannot run).

What "agree" means, per op (either side's {"error": ...} is a rejection; both rejecting agree):
  version_parse       both reject, or both accept with equal str() (the normal form), public,
                      base_version, local, epoch, release and is_pre/post/devrelease.
  version_compare     both reject one of the two, or the same order (<, ==, >).
  specifier_parse     both reject, or the same set of specifiers (each as str(), duplicates
                      once), the same "a specifier names a pre-release" (packaging's
                      SpecifierSet.prereleases), and bootstrap's str() read back by packaging
                      is a SpecifierSet equal to the input's.
  specifier_contains  the same bool for contains(v, prereleases=True), and for bootstrap's
                      contains(v) (pre-releases only when a specifier names one, as pip and uv
                      pick candidates: specifier.hpp) the same bool as packaging's
                      contains(v, prereleases=bool(SpecifierSet.prereleases)). packaging 26's
                      own default (prereleases=None) takes any matching pre-release, which is
                      the prereleases=True answer. The candidate goes to packaging as text
                      (`===` compares text); one that is not a version is rejected by both.
  marker_evaluate     both reject, or in each environment the same bool, where packaging
                      evaluates in the "lock_file" context (PEP 751's extras and
                      dependency_groups are sets). A comparison packaging leaves undefined
                      (UndefinedComparison: `~=` between strings, a set on the left) agrees
                      with any bool. bootstrap's str() read back by packaging says the same.
  requirement_parse   both reject, or the same name as written, normalised name, set of
                      normalised extras, set of specifiers, URL and marker (compared by what
                      it says in oracle.REQUIREMENT_ENVS); bootstrap's str() read back by
                      packaging gives the same.
  wheel_name          both reject, or the same normalised name, version str(), build tag (as
                      packaging's (number, rest)) and expanded tag set.
  normalize           the same canonicalize_name() and the same validity (validate=True).
  index_page_html/json  the same list of files, in order: (filename, url without fragment,
                      sha256 lower-cased, yanked). pip's parse_links is the reference; a link
                      to a directory (a path ending in '/') is no file; URLs compare after
                      pip's quoting of both (it re-quotes what it reads, bootstrap keeps the
                      index's spelling: the same resource); a PEP 691 file is named by its
                      "filename" (pip names it after its URL). bootstrap does not read
                      data-requires-python (IndexFile has no such field), so it is not compared.

Not generated (gen.known_difference() says which; hand-written cases of them are left out
and counted): classes where bootstrap and the reference differ knowingly, each reported for a
decision or a deliberate, documented choice of bootstrap's:
  - a version number beyond 64 bits (bootstrap: "a number is too large"; version.cpp), and
    `===` against a candidate with whitespace around it (" 0.9" in "===0.9": bootstrap compares
    the trimmed text, Version::text() in version.hpp; packaging the string as given);
  - an empty item in a specifier list (">=1,,<2", ",>=1": packaging's SpecifierSet drops it,
    bootstrap follows PEP 440/508's grammar), a trailing comma in a requirement's specifiers
    ("foo>=1.0,": packaging's grammar takes it), and a newline as PEP 508 whitespace (bootstrap
    takes it, packaging only space and tab);
  - a requirement name or extra ending in '_' ("foo_": packaging's IDENTIFIER regex ends in \b,
    which '_' satisfies; its own canonicalize_name(validate=True) calls the name invalid), and
    `===` text beyond ASCII in a requirement ("foo===\u00e91": packaging's requirement grammar
    takes printable ASCII only, its SpecifierSet any text; bootstrap takes it in both);
  - wheel names: a name part with "__", a leading or trailing '_' or '.', or letters beyond
    ASCII (packaging: [\w._]+ without "__"; bootstrap: a PEP 508 name), a tag character beyond
    [A-Za-z0-9_] (packaging takes any in abi and platform tags), a python tag that is no
    identifier ("1": packaging 26.3 rejects it);
  - normalize: letters beyond ASCII (bootstrap lower-cases ASCII only; name.cpp);
  - index pages, by construction of gen.py: a relative `<base href>` (bootstrap resolves it
    against the page as HTML does; pip keeps it relative), trailing whitespace in an href
    (bootstrap strips it as WHATWG URL parsing does; pip keeps and quotes it), a data-yanked
    without a value (HTML: the empty string, so yanked; html.parser gives None and pip says not
    yanked), a sha256 that is not 64 hex digits (bootstrap refuses the page; pip keeps the link),
    HTML character references beyond &amp; &lt; &gt; &quot; &apos; and numeric ones with ';'
    (pip decodes HTML5's whole table), a duplicate href (HTML and bootstrap take the first, pip
    the last), "&sha256=" in a query (pip reads it as the hash), and PEP 691 pages missing
    "files", "url" or "filename" or with a yanked that is neither bool nor string (bootstrap
    refuses the page, pip skips or ignores);
  - markers comparing two variables or two literals (packaging reads the right-hand variable
    as its own name, or looks a literal up as a variable).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

SHRINK_SECONDS = 10  # per kind of disagreement shown
SHRINK_BUDGET = 30  # for all of them, so a failing run still ends within the stage's minute
SHOWN = 8  # kinds of disagreement shown in full (the smallest case of each); the rest are counted


def run_driver(driver: str, cases: list[dict]) -> list[dict]:
    """The driver's answers, one per case. A case that kills the driver is answered
    {"crash": ...} and the driver restarts after it."""
    answers: list[dict] = []
    while len(answers) < len(cases):
        rest = cases[len(answers):]
        text = "".join(json.dumps(c) + "\n" for c in rest)
        try:
            proc = subprocess.run([driver], input=text.encode(), capture_output=True, timeout=120)
        except subprocess.TimeoutExpired:
            sys.exit(f"differential: {driver} answered none of {len(rest)} cases in 120 s (a hang?); "
                     f"the first: {json.dumps(rest[0])[:300]}")
        lines = proc.stdout.decode("utf-8", "replace").splitlines()
        for line in lines[: len(rest)]:
            try:
                answers.append(json.loads(line))
            except json.JSONDecodeError:
                answers.append({"crash": f"not JSON: {line[:200]!r}"})
        if len(lines) < len(rest):
            stderr = proc.stderr.decode(errors="replace")[-300:]
            answers.append({"crash": f"exit status {proc.returncode}; stderr: {stderr}"})
    return answers


def verdict(case: dict, got: dict) -> tuple[dict, list[str]]:
    """The reference's answer and the differences ([] when they agree)."""
    import oracle

    expected = oracle.expect(case)
    if "crash" in got:
        return expected, ["driver crashed"]
    return expected, oracle.differences(case, expected, got)


# --- shrinking --------------------------------------------------------------------------------

TEXT_FIELDS = {"version_parse": ["v"], "version_compare": ["a", "b"], "specifier_parse": ["spec"],
               "specifier_contains": ["spec", "v"], "marker_evaluate": ["marker"], "requirement_parse": ["req"],
               "wheel_name": ["filename"], "normalize": ["name"], "index_page_html": ["body"],
               "index_page_json": ["body"]}


def smaller_texts(text: str):
    """`text` with one chunk removed: whole lines first, then halves, quarters ... characters."""
    lines = text.split("\n")
    if len(lines) > 2:
        for i in range(len(lines)):
            yield "\n".join(lines[:i] + lines[i + 1:])
    size = len(text) // 2
    while size >= 1:
        for start in range(0, len(text), size):
            yield text[:start] + text[start + size:]
        size //= 2


def smaller_json_pages(body: str):
    """A PEP 691 page with one file, or one key of a file, left out (the text stays JSON)."""
    try:
        doc = json.loads(body)
        files = doc["files"]
    except (ValueError, KeyError, TypeError):
        return
    for i in range(len(files)):
        yield json.dumps({**doc, "files": files[:i] + files[i + 1:]})
    for i, entry in enumerate(files):
        for key in [k for k in entry if k not in ("filename", "url")]:
            smaller = {k: v for k, v in entry.items() if k != key}
            yield json.dumps({**doc, "files": files[:i] + [smaller] + files[i + 1:]})
    for key in [k for k in doc if k != "files"]:
        yield json.dumps({k: v for k, v in doc.items() if k != key})


def candidates(case: dict):
    """Simpler variants of `case`, the biggest cuts first."""
    if case["op"] == "marker_evaluate" and len(case["envs"]) > 1:
        for env in case["envs"]:
            yield {**case, "envs": [env]}
    if case["op"] == "index_page_json":
        for body in smaller_json_pages(case["body"]):
            yield {**case, "body": body}
    for field in TEXT_FIELDS[case["op"]]:
        for text in smaller_texts(case[field]):
            yield {**case, field: text}


def shrink(driver: str, case: dict, kind: list[str], seconds: float) -> dict:
    """The smallest variant of `case` found within `seconds` that disagrees as `kind` does."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        batch = list(candidates(case))
        found = None
        for start in range(0, len(batch), 500):
            chunk = batch[start:start + 500]
            for cand, got in zip(chunk, run_driver(driver, chunk)):
                if verdict(cand, got)[1] == kind:
                    found = cand
                    break
            if found or time.monotonic() > deadline:
                break
        if found is None:
            break
        case = found
    return case


# --- the run ----------------------------------------------------------------------------------


def size(case: dict) -> int:
    return len(json.dumps(case))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, help="random seed (default: a new one, printed)")
    parser.add_argument("--cases", type=int, default=4000, help="random cases besides the hand-written ones")
    parser.add_argument("--driver", default=str(ROOT / "build" / "differential_driver"))
    parser.add_argument("--list", action="store_true", help="print every disagreeing case, not shrunk")
    parser.add_argument("--only", help="comma-separated ops to generate (default: all)")
    args = parser.parse_args()

    try:
        import packaging
        import pip
    except ImportError as e:
        print(f"differential: {e}; run with .tools/venv/bin/python (scripts/setup.sh --test-tools)", file=sys.stderr)
        return 2
    if not packaging.__version__.startswith("26."):
        print(f"differential: packaging {packaging.__version__} is not the pinned 26.x (scripts/setup.sh)",
              file=sys.stderr)
        return 2
    if not os.access(args.driver, os.X_OK):
        print(f"differential: no driver at {args.driver} (ninja -C build differential_driver)", file=sys.stderr)
        return 2

    import gen
    import vectors

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    print(f"differential: seed {seed} (again: --seed {seed}), packaging {packaging.__version__}, "
          f"pip {pip.__version__}", flush=True)
    started = time.monotonic()
    hand = vectors.hand_cases()
    left_out = Counter(gen.known_difference(c) for c in hand)
    del left_out[None]
    hand = [c for c in hand if gen.known_difference(c) is None]
    only = set(args.only.split(",")) if args.only else None
    if only:
        hand = [c for c in hand if c["op"] in only]
    cases = hand + gen.generate(random.Random(seed), args.cases, only)
    answers = run_driver(args.driver, cases)

    failures: dict[tuple, list[tuple[dict, dict, dict]]] = {}
    for case, got in zip(cases, answers):
        expected, diffs = verdict(case, got)
        if diffs:
            failures.setdefault((case["op"], tuple(diffs)), []).append((case, got, expected))

    counts = Counter(c["op"] for c in cases)
    hand_counts = Counter(c["op"] for c in hand)
    print("differential: " + ", ".join(f"{op} {n} ({hand_counts[op]} by hand)" for op, n in sorted(counts.items())))
    for why, n in sorted(left_out.items()):
        print(f"differential: left out {n} hand-written case(s) of a known difference: {why}")
    shrinking_since = time.monotonic()
    for shown, ((op, diffs), group) in enumerate(sorted(failures.items(), key=lambda kv: -len(kv[1]))):
        if shown >= SHOWN and not args.list:
            print(f"DISAGREE {op} ({', '.join(diffs)}): {len(group)} case(s), not shrunk")
            continue
        if args.list:
            print(f"DISAGREE {op} ({', '.join(diffs)}): {len(group)} case(s)")
            for case, got, expected in group:
                print(f"  case: {json.dumps(case)}")
                print(f"    bootstrap: {json.dumps(got)}\n    reference: {json.dumps(expected)}")
            continue
        first = min(group, key=lambda g: size(g[0]))[0]
        budget = min(SHRINK_SECONDS, SHRINK_BUDGET - (time.monotonic() - shrinking_since))
        small = shrink(args.driver, first, list(diffs), budget) if budget > 0 else first
        got = run_driver(args.driver, [small])[0]
        expected = verdict(small, got)[0]
        print(f"DISAGREE {op} ({', '.join(diffs)}): {len(group)} case(s); the smallest found:")
        if small != first:
            print(f"  shrunk from: {json.dumps(first)}")
        print(f"  case:      {json.dumps(small)}")
        print(f"  bootstrap: {json.dumps(got)}")
        print(f"  reference: {json.dumps(expected)}")
    total = sum(len(g) for g in failures.values())
    print(f"differential: {len(cases)} cases, {total} disagreement(s), {time.monotonic() - started:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
