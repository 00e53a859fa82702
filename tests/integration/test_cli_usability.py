"""What a new user meets in the first hour: usage errors exit 2 with a clear message, a mistyped
command gets "did you mean", `--version` says which build this is, `history` says which run
wrote each entry, `diff` of two venvs ignores the venv path in console scripts, `doctor` on a
plain venv checks what it holds, and `rollback --json` errors have the shape of every other
command's."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import recipes as R
from conftest import REPO


def uv_venv(world, path: Path, *packages: str) -> Path:
    subprocess.run([str(world.uv), "venv", "-q", "--python", "3.11", str(path)],
                   env=world.full_env(), check=True, capture_output=True)
    if packages:
        world.uv_pip("install", "--index-url", world.index.url("main"), *packages, venv=path)
    return path


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, \
        f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def usage_error(proc: subprocess.CompletedProcess, message: str) -> None:
    assert proc.returncode == 2, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert f"error: {message}\n" in proc.stderr, proc.stderr


# ----------------------------------------------------------------------------- usage errors

def test_missing_or_directory_recipe_is_a_usage_error(run_bootstrap, tmp_path):
    missing = tmp_path / "nope.toml"
    for args in ([missing], ["run", missing], ["plan", missing], ["lock", missing]):
        usage_error(run_bootstrap(args), f"{missing}: no such recipe file")
    for args in ([tmp_path], ["run", tmp_path], ["plan", tmp_path]):
        usage_error(run_bootstrap(args), f"{tmp_path}: is a directory, not a recipe file")


def test_unknown_history_references_are_usage_errors(world):
    venv = uv_venv(world, world.venv, "demo-core==1.0.0")
    ok(world.run(["snapshot", "--venv", venv, "--save"]))
    history = venv / ".bootstrap" / "history"
    usage_error(world.run(["diff", "99", "last", "--venv", venv]),
                f"no history entry 99 in {history}: the history holds entry 1")
    usage_error(world.run(["diff", "last~5", "1", "--venv", venv]),
                f"no history entry `last~5` in {history}: the history holds entry 1")
    usage_error(world.run(["rollback", "--to", "99", "--venv", venv]),
                f"no history entry 99 in {history}: the history holds entry 1")
    usage_error(world.run(["diff", "nope.json", "1", "--venv", venv]),
                "nope.json: no such manifest file, and not a history reference (a number, "
                "`last` or `last~N`)")


def test_rollback_json_error_has_the_shape_of_every_other_json_error(world):
    venv = uv_venv(world, world.venv)
    proc, doc = world.run_json(["rollback", "--to", "99", "--venv", venv])
    assert proc.returncode == 2
    assert doc["schema"] == 1 and doc["ok"] is False
    assert doc["error"] == {"message": f"no history entry 99 in {venv}/.bootstrap/history: the "
                                       "history is empty",
                            "detail": "", "exit_code": 2}
    # The same members as a failing `run --json` (or any command's error_json) has.
    proc, other = world.run_json(["run", world.root / "nope.toml"])
    assert proc.returncode == 2
    assert set(other["error"]) == set(doc["error"]) == {"message", "detail", "exit_code"}


# ----------------------------------------------------------------------------- unknown commands

@pytest.mark.parametrize("word, suggestion", [("rn", "run"), ("histroy", "history"),
                                              ("dotcor", "doctor"), ("init", "lint")])
def test_a_mistyped_command_gets_did_you_mean(run_bootstrap, tmp_path, word, suggestion):
    proc = run_bootstrap([word, "--venv", "x"], cwd=tmp_path)
    usage_error(proc, f"unknown command '{word}' (did you mean '{suggestion}'?)")
    assert "no such recipe file" not in proc.stderr


def test_an_unknown_command_without_a_close_one(run_bootstrap, tmp_path):
    usage_error(run_bootstrap(["frobnicate"], cwd=tmp_path),
                "unknown command 'frobnicate' (see bootstrap --help)")


def test_a_recipe_is_still_run_by_its_path(run_bootstrap, tmp_path):
    # An existing file of any name is a recipe (here an invalid one: its error proves it was read).
    (tmp_path / "myrecipe").write_text('schema = 1\nname = "x"\n')
    usage_error(run_bootstrap(["myrecipe"], cwd=tmp_path),
                "myrecipe:1:1: missing required table [venv]")
    # A path with a '/' or ending in .toml is a recipe even when it does not exist.
    usage_error(run_bootstrap(["sub/recipe"], cwd=tmp_path), "sub/recipe: no such recipe file")
    usage_error(run_bootstrap(["rn.toml"], cwd=tmp_path), "rn.toml: no such recipe file")


def test_help_command(run_bootstrap):
    proc = ok(run_bootstrap(["help"]))
    assert "Usage: bootstrap" in proc.stdout and "rollback" in proc.stdout
    proc = ok(run_bootstrap(["help", "diff"]))
    assert "Usage: bootstrap diff" in proc.stdout


def test_every_listed_command_is_built_when_named(run_bootstrap, tmp_path):
    """Only the named command is built (start-up): each one `--help` lists answers its own
    `--help`, with the same one-line description, and a name not listed is unknown."""
    top = ok(run_bootstrap(["--help"])).stdout
    listed = re.findall(r"^  ([a-z]+) {2,}(\S.*)$", top.split("Subcommands:", 1)[1], re.M)
    assert [name for name, _ in listed][:3] == ["run", "plan", "demo"] and len(listed) == 22, listed
    for name, description in listed:
        own = ok(run_bootstrap([name, "--help"])).stdout
        assert own.startswith(description.rstrip()[:60]), (name, own[:200])
        assert f"Usage: bootstrap {name}" in own, name
    usage_error(run_bootstrap(["frobnicate"], cwd=tmp_path), "unknown command 'frobnicate' (see bootstrap --help)")
    # With no command, CLI11 names what is missing and lists every command.
    proc = run_bootstrap([])
    assert proc.returncode == 2 and "A subcommand is required" in proc.stderr + proc.stdout


# ----------------------------------------------------------------------------- --version

def project_version() -> str:
    text = (REPO / "CMakeLists.txt").read_text()
    return re.search(r"project\(bootstrap VERSION ([0-9.]+)", text).group(1)


def git(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def test_version_names_the_project_version_and_the_commit(run_bootstrap):
    short, long = ok(run_bootstrap(["-V"])), ok(run_bootstrap(["--version"]))
    assert short.stdout == long.stdout
    m = re.fullmatch(r"bootstrap (\S+)(?: \((\S+)\))?\n", long.stdout)
    assert m, long.stdout
    assert m.group(1) == project_version()
    if shutil.which("git") is None or git("rev-parse", "--show-toplevel", cwd=REPO).returncode:
        return  # built from a tarball: the project version alone
    described = m.group(2)
    assert described, "built from a git checkout, the version names the commit"
    # `git describe --always --dirty` of the commit the binary was built from (maybe an older one).
    commit = re.sub(r"-dirty$", "", described)
    commit = re.sub(r"^.*-g([0-9a-f]+)$", r"\1", commit)
    assert git("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}", cwd=REPO).returncode == 0


def version_text(source_dir: Path, out: Path) -> str:
    """cmake/version.cmake's version string for `source_dir`, as the build runs it."""
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("no cmake")
    proc = subprocess.run([cmake, f"-DSOURCE_DIR={source_dir}", f"-DOUT={out}",
                           "-DPROJECT_VERSION=1.2.3", "-P", str(REPO / "cmake" / "version.cmake")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return re.search(r'return "([^"]*)";', out.read_text()).group(1)


def test_version_script_tarball_checkout_and_dirty_tree(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("no git")
    out = tmp_path / "version.cpp"
    tarball = tmp_path / "tarball"
    tarball.mkdir()
    assert version_text(tarball, out) == "1.2.3"

    repo = tmp_path / "repo"
    repo.mkdir()
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.org"]
    assert git("init", "-q", cwd=repo).returncode == 0
    (repo / "a.txt").write_text("a\n")
    git("add", "a.txt", cwd=repo)
    assert git(*ident, "commit", "-q", "-m", "one", cwd=repo).returncode == 0
    head = git("rev-parse", "--short", "HEAD", cwd=repo).stdout.strip()
    assert version_text(repo, out) == f"1.2.3 ({head})"
    mtime = out.stat().st_mtime_ns
    assert version_text(repo, out) == f"1.2.3 ({head})"
    assert out.stat().st_mtime_ns == mtime  # unchanged text: not rewritten, nothing rebuilds
    (repo / "a.txt").write_text("changed\n")
    assert version_text(repo, out) == f"1.2.3 ({head}-dirty)"

    # A source tree unpacked inside another repository is not that repository's checkout.
    inner = repo / "unpacked"
    inner.mkdir()
    assert version_text(inner, out) == "1.2.3"


# ----------------------------------------------------------------------------- history

def test_history_rows_name_the_run_recipe_phase_and_result(world):
    good = R.write_recipe(world.root, "good.toml", name="first-recipe", steps=[
        R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url("main"))])
    ok(world.run([good]))
    bad = R.write_recipe(world.root, "bad.toml", name="second-recipe", steps=[
        R.venv(), R.install("utils", ["demo-utils==1.0.0"], index_url=world.index.url("main")),
        R.run("boom", ["false"])])
    assert world.run([bad]).returncode == 1
    ok(world.run(["snapshot", "--venv", world.venv, "--save", "--label", "mine"]))

    proc, doc = world.run_json(["history", "--venv", world.venv])
    ok(proc)
    entries = doc["entries"]
    assert [e["label"] for e in entries] == ["after", "before", "after", "mine"]
    runs = [e["run"] for e in entries]
    assert [r["phase"] for r in runs[:3]] == ["after", "before", "after"]
    assert [r["result"] for r in runs[:3]] == ["ok", "ok", "failed"]
    assert [r["ok"] for r in runs[:3]] == [True, True, False]
    assert [e["recipe"] for e in entries] == ["first-recipe", "second-recipe", "second-recipe", ""]
    first_run, second_run = runs[0]["run_id"], runs[1]["run_id"]
    assert first_run and second_run and first_run != second_run and runs[2]["run_id"] == second_run
    assert runs[3] is None  # `snapshot --save` is no run

    text = ok(world.run(["history", "--venv", world.venv])).stdout.splitlines()
    assert re.split(r"\s+", text[0].strip()) == ["#", "time", "label", "run", "recipe", "phase",
                                                 "result", "packages", "changes"]
    rows = [re.split(r"\s+", line.strip(), maxsplit=8) for line in text[1:]]
    assert [r[3:7] for r in rows] == [
        [first_run, "first-recipe", "after", "ok"],
        [second_run, "second-recipe", "before", "ok"],
        [second_run, "second-recipe", "after", "failed"],
        ["-", "-", "-", "-"]]
    assert rows[2][8] == "1 added"


# ----------------------------------------------------------------------------- diff of two venvs

def drop_portable(manifest: Path) -> Path:
    doc = json.loads(manifest.read_text())
    for pkg in doc["packages"].values():
        pkg.pop("record_sha256_portable")
    old = manifest.with_name("old-" + manifest.name)
    old.write_text(json.dumps(doc))
    return old


def test_diff_of_two_venvs_with_the_same_packages_is_no_change(world, tmp_path):
    packages = ("demo-core==1.0.0", "click")
    a = uv_venv(world, tmp_path / "a" / "venv", *packages)
    b = uv_venv(world, tmp_path / "elsewhere" / "venv", *packages)
    # demo-core's console script names each venv's interpreter: its RECORD rows differ.
    assert (a / "bin" / "demo-core").read_text() != (b / "bin" / "demo-core").read_text()
    ma, mb = tmp_path / "a.json", tmp_path / "b.json"
    ok(world.run(["snapshot", "--venv", a, "-o", ma]))
    ok(world.run(["snapshot", "--venv", b, "-o", mb]))

    proc = world.run(["diff", ma, mb, "--exit-code"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "no change\n"
    proc, doc = world.run_json(["diff", ma, mb])
    assert doc["same"] is True and doc["packages"] == []

    # The exact digest is still the whole RECORD's: rollback and re-runs rely on it.
    pa = json.loads(ma.read_text())["packages"]["demo-core"]
    record = next(a.glob("lib/python*/site-packages/demo_core-1.0.0.dist-info/RECORD"))
    assert pa["record_sha256"] == hashlib.sha256(record.read_bytes()).hexdigest()
    assert pa["record_sha256_portable"] != pa["record_sha256"]

    # A real difference still shows.
    world.uv_pip("install", "--index-url", world.index.url("main"), "demo-core==1.1.0", venv=b)
    ok(world.run(["snapshot", "--venv", b, "-o", mb]))
    assert world.run(["diff", ma, mb]).stdout == "^ demo-core 1.0.0 -> 1.1.0\n"

    # Manifests written before the portable digest load, and diff falls back to the exact one.
    world.uv_pip("install", "--index-url", world.index.url("main"), "demo-core==1.0.0", venv=b)
    ok(world.run(["snapshot", "--venv", b, "-o", mb]))
    assert world.run(["diff", ma, mb]).stdout == "no change\n"
    proc = world.run(["diff", drop_portable(ma), drop_portable(mb)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "~ demo-core 1.0.0 (reinstalled: files differ)\n"


def test_relative_venv_paths_work_for_snapshot_and_history(world):
    uv_venv(world, world.venv, "demo-core==1.0.0")
    proc = ok(world.run(["snapshot", "--venv", "venv", "--save"], cwd=world.root))
    assert json.loads(proc.stdout)["venv"] == str(world.venv)
    rows = ok(world.run(["history", "--venv", "venv"], cwd=world.root)).stdout.splitlines()
    assert len(rows) == 2 and rows[1].split()[:3] == ["1", rows[1].split()[1], "snapshot"]


# ----------------------------------------------------------------------------- doctor

def test_doctor_on_a_plain_venv_checks_what_it_holds_and_says_what_passed(world):
    venv = uv_venv(world, world.venv, "transformers", "demo-core")
    proc = world.run(["doctor", "--venv", venv])
    ok(proc)
    for default in ("torch", "transformer_engine", "amp_C", "megatron"):
        assert default not in proc.stdout, proc.stdout
    lines = proc.stdout.splitlines()
    # transformers, regex, demo_core: each distribution's top-level module.
    assert "imports: 3 modules ok (the top-level modules of 3 distributions installed)" in lines
    assert "dependencies: 3 distributions satisfied" in lines
    assert "venv: pyvenv.cfg's base interpreter and bin/'s paths ok" in lines
    assert "symbols: none checked" in lines
    assert any(line.startswith("files: ") and line.endswith("of 3 distributions match their RECORD hashes")
               for line in lines), lines

    proc, doc = world.run_json(["doctor", "--venv", venv])
    assert doc["scope"] == "venv"
    assert [c["group"] for c in doc["checks"]] == ["venv", "files", "imports", "dependencies", "symbols",
                                                   "cuda code", "built for", "packages", "build cache"]
    assert not [f for f in doc["findings"] if f["rule"] == "import"]

    # A broken install is found through its own modules and requirements.
    world.uv_pip("uninstall", "regex")
    proc, doc = world.run_json(["doctor", "--venv", venv])
    assert proc.returncode == 3
    [imp] = [f for f in doc["findings"] if f["rule"] == "import"]
    assert imp["message"] == ("import transformers fails: distribution regex is missing "
                              "(required by transformers 4.57.1)")
    assert "asked for by: installed: transformers 4.57.1" in imp["evidence"]
    summaries = {c["group"]: c["summary"] for c in doc["checks"]}
    assert summaries["imports"] == ("imports: 1 of 2 modules ok, 1 failed (the top-level modules "
                                    "of 2 distributions installed)")
    assert summaries["dependencies"] == "dependencies: 1 of 2 distributions satisfied"


def test_doctor_keeps_the_training_defaults_with_a_recipe(world):
    venv = uv_venv(world, world.venv, "demo-core")
    recipe = R.write_recipe(world.root, steps=[R.venv()])
    proc, doc = world.run_json(["doctor", "--venv", venv, "--recipe", recipe])
    assert doc["scope"] == "training"
    absent = [f["message"] for f in doc["findings"] if f["rule"] == "import"]
    assert "torch is not installed (a default check; the recipe does not ask for it)" in absent
    summaries = {c["group"]: c["summary"] for c in doc["checks"]}
    assert summaries["imports"] == "imports: 0 modules ok, 5 not installed"


# ----------------------------------------------------------------------------- internal errors

def test_an_escaped_exception_is_one_error_line_and_exit_1(bootstrap_bin, tmp_path):
    """An exception nothing below the CLI turned into an Error (here std::filesystem's
    absolute(), which throws when the working directory was removed) is reported as
    `error: internal error: ...` with exit code 1, not std::terminate's abort (134)."""
    from conftest import hermetic_env

    target = tmp_path / "target.json"
    target.write_text(json.dumps({"schema": 1, "packages": {}}))
    gone = tmp_path / "gone"
    gone.mkdir()
    script = ('cd "$1" && rmdir "$1" && exec "$2" rollback --venv "$3" --to "$4" '
              '--find-links relative/wheels')
    proc = subprocess.run(["sh", "-c", script, "sh", str(gone), str(bootstrap_bin),
                           str(tmp_path / "venv"), str(target)],
                          env=hermetic_env(), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert re.search(r"^error: internal error: filesystem error: cannot make absolute path",
                     proc.stderr, re.M), proc.stderr
    assert "terminate" not in proc.stderr
