"""scripts/fuzz.sh: it fuzzes for the time it is given, keeps what it finds out of the
repository, fails with a reproducer and a stack when a target crashes, and lets through only the
crashes that tests/fuzz/known_crashes.txt (or FUZZ_KNOWN_CRASHES) names.

The crash comes from tests/fuzz/selftest.cpp, a target that overflows a heap buffer for exactly
one input, planted here in the scratch corpus. These tests build build-fuzz/ with clang++-14
(scripts/setup.sh installs it) the first time; scripts/fuzz.sh reuses that build in CI.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FUZZ_SH = REPO / "scripts" / "fuzz.sh"
PLANTED = b"planted crash\n"

pytestmark = pytest.mark.skipif(
    shutil.which(os.environ.get("FUZZ_CXX", "clang++-14")) is None,
    reason="clang++-14 missing (scripts/setup.sh installs clang-14 and libclang-rt-14-dev)")


def run_fuzz(scratch: Path, *targets: str, seconds: int = 2,
             known: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, FUZZ_SECONDS=str(seconds), FUZZ_SCRATCH=str(scratch))
    if known is not None:
        env["FUZZ_KNOWN_CRASHES"] = str(known)
    return subprocess.run(["bash", str(FUZZ_SH), *targets], env=env, capture_output=True,
                          text=True, timeout=1800)


def plant(scratch: Path) -> Path:
    """The crashing input in the scratch corpus, named by its SHA-1 as libFuzzer names entries."""
    corpus = scratch / "selftest" / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    path = corpus / hashlib.sha1(PLANTED).hexdigest()
    path.write_bytes(PLANTED)
    return path


def repo_corpus_files() -> set[str]:
    out = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=all",
                          "tests/fuzz/corpus"], capture_output=True, text=True, check=True)
    return set(out.stdout.splitlines())


def test_fuzzing_runs_and_keeps_new_entries_out_of_the_repository(tmp_path):
    before = repo_corpus_files()
    r = run_fuzz(tmp_path / "scratch", "pep440", "selftest", seconds=3)
    assert r.returncode == 0, r.stderr
    for target in ("pep440", "selftest"):
        m = re.search(rf"^fuzz: {target}: (\d+) execs, max_len \d+, corpus (\d+) in (\S+): "
                      r"no crash$", r.stderr, re.M)
        assert m, r.stderr
        assert int(m.group(1)) > 100
        assert Path(m.group(3)) == tmp_path / "scratch" / target / "corpus"
        if target == "pep440":
            assert int(m.group(2)) > 0  # what it found is kept there
    assert "fuzz: passed" in r.stderr
    assert repo_corpus_files() == before


def test_a_crash_fails_with_its_reproducer_and_stack(tmp_path):
    scratch = tmp_path / "scratch"
    plant(scratch)
    r = run_fuzz(scratch, "selftest", known=tmp_path / "none.txt")
    assert r.returncode == 1, r.stderr
    m = re.search(r"^fuzz: selftest: FINDING \(exit \d+\); reproduce: "
                  r"build-fuzz/fuzz_selftest (\S+)$", r.stderr, re.M)
    assert m, r.stderr
    reproducer = Path(m.group(1))
    assert reproducer.read_bytes() == PLANTED
    assert reproducer.is_relative_to(scratch)
    assert "AddressSanitizer: heap-buffer-overflow" in r.stderr
    assert re.search(r"#\d+ 0x[0-9a-f]+ in LLVMFuzzerTestOneInput .*tests/fuzz/selftest.cpp",
                     r.stderr)
    assert re.search(r"^fuzz: FAILED: selftest$", r.stderr, re.M), r.stderr


def test_a_known_crash_is_reported_and_fuzzing_goes_on(tmp_path):
    scratch = tmp_path / "scratch"
    planted = plant(scratch)
    known = tmp_path / "known.txt"
    known.write_text("# target, what, patterns\n"
                     "selftest\tthe planted overflow\theap-buffer-overflow\tselftest\\.cpp\n")
    r = run_fuzz(scratch, "selftest", known=known)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^fuzz: selftest: known crash \(the planted overflow\): \S+crash-"
                     + hashlib.sha1(PLANTED).hexdigest() + "$", r.stderr, re.M), r.stderr
    assert not planted.exists()  # dropped from the scratch corpus, so the restart goes on
    m = re.search(r"^fuzz: selftest: (\d+) execs, .*: no new crash \(1 known, see ", r.stderr, re.M)
    assert m and int(m.group(1)) > 100, r.stderr


def test_a_known_pattern_that_does_not_match_still_fails(tmp_path):
    scratch = tmp_path / "scratch"
    plant(scratch)
    known = tmp_path / "known.txt"
    # Right target, one pattern of two matches: not this crash.
    known.write_text("selftest\tsomething else\theap-buffer-overflow\tsome_other_function\n"
                     "pep440\tanother target\theap-buffer-overflow\n")
    r = run_fuzz(scratch, "selftest", known=known)
    assert r.returncode == 1, r.stderr
    assert "known crash" not in r.stderr
    assert "fuzz: selftest: FINDING" in r.stderr


def test_an_unknown_target_is_a_usage_error(tmp_path):
    r = run_fuzz(tmp_path / "scratch", "no_such_target")
    assert r.returncode == 2
    assert "fuzz: no target 'no_such_target'" in r.stderr
