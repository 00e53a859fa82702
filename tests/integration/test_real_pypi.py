"""The real-index tier: bootstrap's promises on real PyPI packages, with no index_url anywhere.

The fixture world (a loopback index of synthetic wheels) is where faults are injected; this
tier is where the real world is met: PyPI's own file names (lower-case, capitalised projects,
compressed tag sets), its PEP 691 pages, real uv resolving against it. The recipe is the one
the README walks through, recipes/pypi-small.toml, run with --venv.

Downloads are a few MB, kept in a uv cache under the build tree (build/real-pypi-cache), so a
second run of the suite needs the network only for index pages. A command that fails with a
network error is tried again (three times); when PyPI cannot be reached at all, every test here
is reported as skipped, never passed. No test asserts a duration.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, hermetic_env

RECIPE = REPO / "recipes" / "pypi-small.toml"
PYPI_PROBE = "https://pypi.org/simple/six/"
NETWORK_ERROR = re.compile(
    r"(?i)(failed to fetch|error sending request|connection (reset|refused|closed|aborted)|"
    r"timed out|operation timed out|dns error|name resolution|network is unreachable|"
    r"could not connect|tcp connect error|\b50[234]\b|request failed after)")

# The installed set as the venv's own Python reads it: normalised name -> [version, digest of
# RECORD's rows]. uv's uv_cache.json row (the source wheel's ctime) is left out, as bootstrap
# does; with portable=True so are scripts in bin/ (their shebang names the venv's path), for
# comparing two venvs in different directories.
STATE = r"""
import hashlib, json, pathlib, re, sys, sysconfig
portable = sys.argv[1] == "1"
site = pathlib.Path(sysconfig.get_paths()["purelib"])
out = {}
for d in sorted(site.glob("*.dist-info")):
    fields = {}
    for line in (d / "METADATA").read_text(errors="replace").splitlines():
        if not line.strip():
            break
        k, _, v = line.partition(":")
        fields.setdefault(k.strip(), v.strip())
    rows = []
    for row in (d / "RECORD").read_text().splitlines():
        path = row.split(",", 1)[0]
        if not row or path.endswith("/uv_cache.json"):
            continue
        if portable and path.startswith("../../../bin/"):
            continue
        rows.append(row)
    name = re.sub(r"[-_.]+", "-", fields["Name"]).lower()
    out[name] = [fields["Version"], hashlib.sha256("\n".join(rows).encode()).hexdigest()]
print(json.dumps(out, sort_keys=True))
"""


def pypi_unreachable() -> str | None:
    """None when PyPI answers; else why not (after three tries)."""
    last = ""
    for attempt in range(3):
        try:
            req = urllib.request.Request(PYPI_PROBE, headers={
                "Accept": "application/vnd.pypi.simple.v1+json"})
            with urllib.request.urlopen(req, timeout=20) as r:
                if r.status == 200:
                    return None
                last = f"HTTP {r.status}"
        except (urllib.error.URLError, OSError) as e:
            last = str(e)
        time.sleep(2 * (attempt + 1))
    return last or "no answer"


class Real:
    """Runs bootstrap and uv against real PyPI with a persistent uv cache."""

    def __init__(self, root: Path, uv: Path, bootstrap: Path):
        self.root = root
        self.uv = uv
        self.bootstrap = bootstrap
        cache = REPO / "build" / "real-pypi-cache"
        cache.mkdir(parents=True, exist_ok=True)
        self.env = {
            "UV_CACHE_DIR": str(cache / "uv"),
            "UV_PYTHON_DOWNLOADS": "never",
            "BOOTSTRAP_HOME": str(root / "home"),
            "BOOTSTRAP_BACKOFF_BASE": "1",
            "PATH": f"{uv.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "NO_COLOR": "1",
        }

    def full_env(self, extra: dict | None = None) -> dict:
        return hermetic_env({**self.env, **(extra or {})})

    def run(self, args, expect_ok: bool = True, retry: bool = True,
            timeout: float = 600) -> subprocess.CompletedProcess:
        """bootstrap ARGS; a failure that looks like the network is tried again (3 tries)."""
        cmd = [str(self.bootstrap), *[str(a) for a in args]]
        for attempt in range(3):
            proc = subprocess.run(cmd, env=self.full_env(), cwd=self.root, timeout=timeout,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True)
            if proc.returncode == 0 or not retry or not NETWORK_ERROR.search(proc.stderr + proc.stdout):
                break
            time.sleep(5 * (attempt + 1))
        else:
            if why := pypi_unreachable():
                pytest.skip(f"PyPI became unreachable: {why}")
        if expect_ok:
            assert proc.returncode == 0, f"{cmd}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def state(self, venv: Path, portable: bool = False) -> dict:
        r = subprocess.run([str(venv / "bin" / "python"), "-c", STATE, "1" if portable else "0"],
                           env=self.full_env(), capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    def freeze(self, venv: Path) -> list[str]:
        r = subprocess.run([str(self.uv), "pip", "freeze", "--python", str(venv / "bin" / "python")],
                           env=self.full_env(), capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return sorted(r.stdout.split())

    def recipe(self, name: str = "pypi-small.toml", **replace: str) -> Path:
        """A copy of the README's recipe with text replaced."""
        text = RECIPE.read_text()
        for old, new in replace.items():
            old = old.replace("__", " ")
            assert old in text, old
            text = text.replace(old, new)
        path = self.root / name
        path.write_text(text)
        return path

    def uv_pip(self, venv: Path, *args: str) -> None:
        """uv pip SUBCOMMAND --python VENV ARGS: changing a venv behind bootstrap's back."""
        cmd = [str(self.uv), "pip", args[0], "--python", str(venv / "bin" / "python"), *args[1:]]
        r = subprocess.run(cmd, env=self.full_env(), capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr

    def history(self, venv: Path) -> list[Path]:
        return sorted((venv / ".bootstrap" / "history").glob("*.json"))


@pytest.fixture(scope="module")
def real(tmp_path_factory, uv_bin, bootstrap_bin) -> Real:
    if why := pypi_unreachable():
        pytest.skip(f"PyPI unreachable: {why}")
    return Real(tmp_path_factory.mktemp("real"), uv_bin, bootstrap_bin)


@pytest.fixture(scope="module")
def base_venv(real) -> Path:
    """The README recipe, run once: the venv the later tests start from (copied, not changed)."""
    venv = real.root / "base-venv"
    real.run([RECIPE, "--venv", venv])
    return venv


def clone_venv(real: Real, base: Path, name: str) -> Path:
    """A venv of its own for a test: the base recipe run again into a new directory (a copy
    would keep the base's paths in its scripts)."""
    venv = real.root / name
    real.run([RECIPE, "--venv", venv])
    assert real.state(venv, portable=True) == real.state(base, portable=True)
    return venv


def recipe_text(name: str, venv_path: str) -> str:
    """A recipe's head for a test of its own: Python 3.11, the README recipe's [network], a venv step."""
    return f"""schema = 1
name = "{name}"

[venv]
path = "{venv_path}"
python = "3.11"

[network]
timeout = 60
retries = 5
attempts = 3

[[step]]
id = "venv"
kind = "venv"
"""


def steps_of(proc: subprocess.CompletedProcess) -> dict:
    doc = json.loads(proc.stdout)
    return {s["id"]: s for s in doc["steps"]}


def test_run_noop_upgrade_then_check_runs_again(real, base_venv):
    venv = base_venv
    freeze = real.freeze(venv)
    for pin in ("packaging==24.2", "six==1.16.0", "idna==3.7", "jinja2==3.1.4", "pygments==2.18.0",
                "charset-normalizer==3.4.0"):
        assert pin in [f.lower() for f in freeze], freeze
    assert any(f.lower().startswith("markupsafe==") for f in freeze)

    # The run step ran inside the venv: a bare `python` was the venv's, VIRTUAL_ENV was set.
    log = next((venv / ".bootstrap" / "logs").glob("*/05-tool.log")).read_text()
    assert f"packaging 24.2 in {venv} {venv}" in log, log

    # Every origin is recorded, with the default index: the newest history entry says so.
    newest = json.loads(real.history(venv)[-1].read_text())
    for name in ("six", "pygments", "markupsafe", "charset-normalizer"):
        origin = newest["packages"][name]["origin"]
        assert origin["index_urls"] == ["https://pypi.org/simple"], (name, origin)
        assert origin["step"] in ("base", "text"), (name, origin)

    # No-op: every step skipped, nothing written to history.
    n_history = len(real.history(venv))
    steps = steps_of(real.run([RECIPE, "--venv", venv, "--json"]))
    assert {s["result"] for s in steps.values()} == {"skipped"}, steps
    assert steps["check"]["reason"] == "up to date"
    assert len(real.history(venv)) == n_history

    # The venv drifts (someone installs an older packaging by hand): the upgrade step runs
    # again, and the checks after it must not be "up to date".
    real.uv_pip(venv, "install", "packaging==23.2")
    steps = steps_of(real.run([RECIPE, "--venv", venv, "--json"]))
    assert steps["newer-packaging"]["result"] == "ran", steps["newer-packaging"]
    assert steps["newer-packaging"]["reason"] == "packaging is now 23.2 (was 24.2)"
    assert steps["check"]["result"] == "verified", steps["check"]
    assert steps["base"]["result"] == "skipped"
    assert real.state(venv)["packaging"][0] == "24.2"
    # ... and the next run is a no-op again.
    steps = steps_of(real.run([RECIPE, "--venv", venv, "--json"]))
    assert {s["result"] for s in steps.values()} == {"skipped"}, steps

    # A package removed by hand: the step that installed it runs again.
    real.uv_pip(venv, "uninstall", "markupsafe")
    steps = steps_of(real.run([RECIPE, "--venv", venv, "--json"]))
    assert steps["text"]["result"] == "ran", steps["text"]
    assert steps["text"]["reason"] == "markupsafe is no longer installed"
    assert steps["check"]["result"] == "verified"

    # A change no step owns (a package added by hand): no step runs, but every verify clause
    # could observe it, so each runs again once.
    real.uv_pip(venv, "install", "attrs==24.2.0")
    steps = steps_of(real.run([RECIPE, "--venv", venv, "--json"]))
    assert steps["base"]["result"] == "skipped"
    assert steps["check"]["result"] == "verified", steps["check"]
    assert steps["check"]["reason"] == "the venv changed since it was verified"
    assert steps["text"]["result"] == "verified", steps["text"]
    steps = steps_of(real.run([RECIPE, "--venv", venv, "--json"]))
    assert {s["result"] for s in steps.values()} == {"skipped"}, steps
    real.uv_pip(venv, "uninstall", "attrs")
    real.run([RECIPE, "--venv", venv])


def test_plan_says_what_would_run(real, base_venv):
    venv = clone_venv(real, base_venv, "plan-venv")
    real.uv_pip(venv, "install", "packaging==23.2")
    changed = real.recipe("plan.toml", **{'"Pygments==2.18.0"': '"Pygments==2.18.0", "attrs==24.2.0"'})
    proc = real.run(["plan", changed, "--venv", venv, "--json"])
    steps = {s["id"]: s for s in json.loads(proc.stdout)["steps"]}
    assert steps["base"]["would"] == {"action": "skip", "reason": "up to date"}
    assert steps["text"]["would"] == {"action": "run", "reason": "step changed: argv: +attrs==24.2.0",
                                      "changes": ["argv: +attrs==24.2.0"]}
    assert steps["base"]["index_urls"] == ["https://pypi.org/simple"]
    # Unchanged recipe: the drift is what makes the upgrade run, and the check re-verify.
    proc = real.run(["plan", RECIPE, "--venv", venv, "--json"])
    steps = {s["id"]: s for s in json.loads(proc.stdout)["steps"]}
    assert steps["newer-packaging"]["would"] == {"action": "run", "reason": "packaging is now 23.2 (was 24.2)"}
    assert steps["check"]["would"]["action"] == "verify", steps["check"]
    assert steps["tool"]["would"]["action"] == "skip"
    text = real.run(["plan", RECIPE, "--venv", venv]).stdout
    assert "would run: packaging is now 23.2 (was 24.2)" in text and "would skip: up to date" in text
    # `plan` changed nothing.
    assert real.state(venv)["packaging"][0] == "23.2"


def test_lock_then_locked_fresh_venv_equals_the_locked_one(real, base_venv):
    lockfile = real.root / "pypi-small.lock.json"
    real.run(["lock", RECIPE, "--venv", base_venv, "-o", lockfile])
    lock = json.loads(lockfile.read_text())
    pkgs = lock["packages"]
    # Real file names from the index, never rebuilt from metadata.
    assert pkgs["pygments"]["wheel"] == "pygments-2.18.0-py3-none-any.whl"
    assert "manylinux" in pkgs["charset-normalizer"]["wheel"]
    assert "manylinux" in pkgs["markupsafe"]["wheel"]
    for name in ("six", "pygments", "charset-normalizer", "markupsafe", "jinja2", "packaging"):
        assert re.fullmatch(r"[0-9a-f]{64}", pkgs[name]["sha256"]), (name, pkgs[name])
    # The lockfile never carries a secret or a local path of this machine's user.
    assert "***" not in lockfile.read_text()

    fresh = real.root / "locked-venv"
    real.run([RECIPE, "--venv", fresh, "--lockfile", lockfile])
    assert real.freeze(fresh) == real.freeze(base_venv)
    assert real.state(fresh, portable=True) == real.state(base_venv, portable=True)


def test_rollback_last_and_to_a_saved_snapshot_are_exact(real, base_venv):
    venv = clone_venv(real, base_venv, "rollback-venv")
    saved = real.root / "saved.json"
    real.run(["snapshot", "--venv", venv, "-o", saved])
    before_state, before_freeze = real.state(venv), real.freeze(venv)

    # A run that changes three things: an upgrade, a downgrade, a new package.
    changed = real.recipe(
        "more.toml",
        **{'packages = ["packaging==24.2"]': 'packages = ["packaging==24.1", "six==1.17.0", "attrs==24.2.0"]'})
    real.run([changed, "--venv", venv])
    assert real.state(venv)["six"][0] == "1.17.0" and "attrs" in real.state(venv)

    # rollback --last: back to the state before that run, with no flags.
    real.run(["rollback", "--last", "--venv", venv])
    assert real.freeze(venv) == before_freeze
    assert real.state(venv) == before_state

    # Change again, then roll back to the manifest saved with `snapshot -o`.
    real.run([changed, "--venv", venv])
    assert real.state(venv) != before_state
    real.run(["rollback", "--to", saved, "--venv", venv])
    assert real.freeze(venv) == before_freeze
    assert real.state(venv) == before_state


def test_rollback_on_failure_restores_exactly(real, base_venv):
    venv = clone_venv(real, base_venv, "failing-venv")
    before_state = real.state(venv)
    failing = real.root / "failing.toml"
    failing.write_text(RECIPE.read_text() + """
[[step]]
id = "upgrade-six"
kind = "install"
packages = ["six==1.17.0", "attrs==24.2.0"]
upgrade = true

[[step]]
id = "fails"
kind = "run"
argv = ["python", "-c", "raise SystemExit('deliberate failure')"]
""")
    proc = real.run([failing, "--venv", venv, "--rollback-on-failure"], expect_ok=False)
    assert proc.returncode == 1, proc.stderr
    assert "rolling the venv back" in proc.stderr, proc.stderr
    assert "did not complete" not in proc.stderr, proc.stderr
    assert real.state(venv) == before_state


def test_locked_into_an_empty_path_after_a_reinstall_of_a_dependency(real):
    """Issue 20 on real PyPI: step `web` installs requests (which needs idna, urllib3, certifi,
    charset-normalizer); a later step reinstalls idna, which a lock of schema 1 then credited to
    that step alone. A locked run into an empty path must still give `web` its whole closure:
    the fresh venv equals the locked one (freeze and RECORD rows)."""
    recipe = real.root / "reinstall.toml"
    recipe.write_text(recipe_text("reinstall", "reinstall-venv") + """
[[step]]
id = "web"
kind = "install"
packages = ["requests==2.32.3"]
verify = [{ import = "requests" }]

[[step]]
id = "idna"
kind = "install"
packages = ["idna"]
reinstall = true
verify = [{ import = "idna" }]
""")
    venv = real.root / "reinstall-venv"
    real.run([recipe])
    lockfile = real.root / "reinstall.lock.json"
    real.run(["lock", recipe, "-o", lockfile])
    lock = json.loads(lockfile.read_text())
    assert lock["packages"]["idna"]["origin"]["step"] == "idna"
    assert {"requests", "idna", "urllib3", "certifi", "charset-normalizer"} <= set(lock["steps"]["web"]["packages"])

    fresh = real.root / "reinstall-fresh"
    assert not fresh.exists()
    proc = real.run([recipe, "--venv", fresh, "--lockfile", lockfile, "--json"])
    assert {s["id"]: s["result"] for s in json.loads(proc.stdout)["steps"]} == \
        {"venv": "ran", "web": "ran", "idna": "skipped"}
    assert real.freeze(fresh) == real.freeze(venv)
    assert real.state(fresh, portable=True) == real.state(venv, portable=True)


def test_an_optional_step_pypi_cannot_satisfy_fails_once_then_is_skipped(real, base_venv):
    """Issue 20 on real PyPI (as nvrx on glibc < 2.39): an optional step whose requirement has no
    solution fails once, not [network] attempts times, and the next run skips it with its reason
    and writes no history."""
    venv = clone_venv(real, base_venv, "optional-venv")
    recipe = real.root / "optional.toml"
    recipe.write_text(RECIPE.read_text() + """
[[step]]
id = "impossible"
kind = "install"
packages = ["six>=999"]
optional = true
""")
    proc = real.run([recipe, "--venv", venv, "--json"])
    step = steps_of(proc)["impossible"]
    assert step["result"] == "failed (optional)" and step["attempts"] == 1, step
    entries = real.history(venv)
    proc = real.run([recipe, "--venv", venv, "--json"])
    step = steps_of(proc)["impossible"]
    assert step["result"] == "skipped", step
    assert step["reason"].startswith("optional step failed on ") and "six>=999" in step["reason"], step
    assert all(s["result"] == "skipped" for s in json.loads(proc.stdout)["steps"])
    assert real.history(venv) == entries


def test_a_command_only_run_leaves_history_alone_and_rollback_last_undoes_the_upgrade(real, base_venv):
    """Issue 22 on real PyPI: install, upgrade a package in a later step, then a run that only
    runs a command; `rollback --last` undoes the upgrade (the command-only run wrote no history
    entry, so it is not the "last" one)."""
    venv = clone_venv(real, base_venv, "history-venv")
    before_state = real.state(venv)
    upgrade = RECIPE.read_text() + """
[[step]]
id = "newer-six"
kind = "install"
packages = ["six==1.17.0"]
upgrade = true
"""
    upgraded = real.root / "upgraded.toml"
    upgraded.write_text(upgrade)
    real.run([upgraded, "--venv", venv])
    assert real.state(venv)["six"][0] == "1.17.0"
    entries = real.history(venv)

    with_command = real.root / "with-command.toml"
    with_command.write_text(upgrade + """
[[step]]
id = "report"
kind = "run"
argv = ["python", "-c", "import six; print('six', six.__version__)"]
""")
    proc = real.run([with_command, "--venv", venv, "--json"])
    steps = steps_of(proc)
    assert steps["report"]["result"] == "ran" and steps["newer-six"]["result"] == "skipped", steps
    assert json.loads(proc.stdout)["history"] == {"before": None, "after": None}
    assert real.history(venv) == entries

    real.run(["rollback", "--last", "--venv", venv])
    assert real.state(venv) == before_state
    assert real.state(venv)["six"][0] == "1.16.0"


def test_doctor_checks_real_wheels_against_their_record_and_its_fix_repairs_them(real, base_venv):
    """doctor's RECORD check on wheels uv installed from PyPI: clean as installed (no false
    positive on real RECORDs, console scripts included), an edited file is named, and the fix
    as printed (the installer's reinstall of that version, from PyPI) makes it clean again."""
    venv = clone_venv(real, base_venv, "files-venv")
    clean = real.run(["doctor", "--venv", venv], expect_ok=False)
    assert "match their RECORD hashes" in clean.stdout, clean.stdout
    assert "installed-files" not in clean.stdout, clean.stdout

    (site,) = list(venv.glob("lib/python*/site-packages"))
    six = site / "six.py"
    six.write_text(six.read_text() + "\n# edited by hand\n")
    proc = real.run(["doctor", "--venv", venv], expect_ok=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "six 1.16.0: 1 of its installed files differs from its RECORD" in proc.stdout, proc.stdout
    fix = next(line.strip()[len("fix: "):] for line in proc.stdout.splitlines()
               if line.strip().startswith("fix: ") and "six==1.16.0" in line)
    fixed = subprocess.run(fix, shell=True, env=real.full_env(), capture_output=True, text=True, timeout=600)
    assert fixed.returncode == 0, fixed.stderr
    again = real.run(["doctor", "--venv", venv], expect_ok=False)
    assert "match their RECORD hashes" in again.stdout and "installed-files" not in again.stdout, again.stdout


MANY = recipe_text("pypi-many", "unused") + """
[[step]]
id = "sympy"
kind = "install"
packages = ["sympy==VERSION"]
verify = [{ import = "sympy.physics.quantum" }]
"""


def test_an_upgrade_of_a_real_package_stopped_mid_copy_resumes_to_the_exact_venv(real):
    """Issue 27: Ctrl-C while uv upgrades sympy (about 1,500 files, copied: UV_LINK_MODE=copy)
    from 1.13.2 to 1.13.3. uv removes the old dist-info's files first, then the package's, so a
    stop leaves an unusable dist-info and old modules no RECORD names; the next run removes
    both and installs 1.13.3 again: the venv equals one made without a stop."""
    recipe = {v: real.root / f"many-{v}.toml" for v in ("1.13.2", "1.13.3")}
    for version, path in recipe.items():
        path.write_text(MANY.replace("VERSION", version))
    reference, venv = real.root / "many-reference", real.root / "many-stopped"
    real.run([recipe["1.13.3"], "--venv", reference])
    real.run([recipe["1.13.2"], "--venv", venv])
    site = next(venv.glob("lib/python*/site-packages"))
    record = next(site.glob("sympy-1.13.2.dist-info")) / "RECORD"
    sample = [site / row.split(",")[0] for row in record.read_text().splitlines()[::100]
              if row.startswith("sympy/")]
    env = real.full_env({"UV_LINK_MODE": "copy"})
    proc = subprocess.Popen([str(real.bootstrap), str(recipe["1.13.3"]), "--venv", str(venv)], env=env,
                            cwd=real.root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline and all(p.exists() for p in sample):
        time.sleep(0.002)
    if proc.poll() is not None:
        out, err = proc.communicate()
        if NETWORK_ERROR.search(err):
            pytest.skip("PyPI failed the download before the upgrade began")
        pytest.fail(f"the upgrade ended before a stop could land (exit {proc.returncode}):\n{err}")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    resumed = real.run([recipe["1.13.3"], "--venv", venv])
    assert "was stopped while it changed the venv" in resumed.stderr, resumed.stderr
    assert real.state(venv, portable=True) == real.state(reference, portable=True)
    assert not (site / "sympy-1.13.2.dist-info").exists()
    left = [p for p in sample if p.exists() and not any(
        row.startswith(str(p.relative_to(site)) + ",")
        for row in (site / "sympy-1.13.3.dist-info" / "RECORD").read_text().splitlines())]
    assert not left, left  # no module of 1.13.2 that 1.13.3 does not have
