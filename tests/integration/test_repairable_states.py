"""Every state a user can reach is named and repairable (issue 27): an install cut short mid-copy
(SIGINT, SIGKILL) is found and installed again; rollback keeps each distribution's owning step,
so a lock made after it reproduces the venv; `lock` refuses a venv off the recipe's fixed point
or holding extras no step installs; `plan`/`doctor --recipe` name extras and pins two steps
disagree on; `run --exact` removes extras; `plan --check` is a drift gate; history, snapshot,
diff, rollback and pack take the recipe; literal braces are doubled."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import signal
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

import recipes as R


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def freeze(world, venv: Path) -> list[str]:
    proc = subprocess.run([str(world.uv), "pip", "freeze", "--python", str(venv / "bin" / "python")],
                          capture_output=True, text=True, env=world.full_env(), check=True)
    return sorted(proc.stdout.splitlines())


def site_packages(venv: Path) -> Path:
    return next(venv.glob("lib/python*/site-packages"))


def incomplete(venv: Path) -> dict[str, int]:
    """{dist-info: files its RECORD names that are missing or of another size}."""
    site = site_packages(venv)
    out = {}
    for record in site.glob("*.dist-info/RECORD"):
        bad = 0
        for row in record.read_text().splitlines():
            path, digest, size = row.rsplit(",", 2)
            if not digest:
                continue
            f = (site / path)
            if not f.exists() or (size and f.stat().st_size != int(size)):
                bad += 1
        if bad:
            out[record.parent.name] = bad
    return out


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def many_files_wheel(directory: Path, files: int, version: str = "1.0.0", prefix: str = "m") -> Path:
    """demo-many: a py3-none-any wheel of `files` small modules `demo_many/partNNN/<prefix>NNNNN.py`
    (an install long enough to stop in the middle of its copy)."""
    directory.mkdir(parents=True, exist_ok=True)
    wheel = directory / f"demo_many-{version}-py3-none-any.whl"
    if wheel.exists():
        return wheel
    entries: list[tuple[str, bytes]] = [("demo_many/__init__.py", f"__version__ = '{version}'\n".encode())]
    for i in range(files):
        entries.append((f"demo_many/part{i // 500:03d}/{prefix}{i:05d}.py", (f"VALUE = {i}\n" + "#" * 1500).encode()))
    for d in sorted({p.rsplit("/", 1)[0] for p, _ in entries if p.count("/") == 2}):
        entries.append((f"{d}/__init__.py", b""))
    info = f"demo_many-{version}.dist-info"
    entries.append((f"{info}/METADATA", f"Metadata-Version: 2.1\nName: demo-many\nVersion: {version}\n".encode()))
    entries.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    record = "".join(f"{p},{_record_hash(b)},{len(b)}\n" for p, b in entries) + f"{info}/RECORD,,\n"
    entries.append((f"{info}/RECORD", record.encode()))
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as z:
        for p, b in entries:
            z.writestr(zipfile.ZipInfo(p, (1980, 1, 1, 0, 0, 0)), b)
    return wheel


def children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


# ------------------------------------------------------------------- installs cut short

def test_a_step_stopped_while_it_changed_the_venv_is_found_named_and_installed_again(world):
    """Deterministic: a step deletes part of an installed package and is interrupted (as an
    installer stopped mid-copy leaves it: dist-info whole, files missing). `plan` and `doctor`
    name it, `plan --check` says 1, and the next run removes it and installs it again."""
    wheels = world.root / "wheels"
    many_files_wheel(wheels, 200)
    mark = world.root / "stopped-once"
    stop = (f"import os, pathlib, signal, sys, glob\n"
            f"m = pathlib.Path({str(mark)!r})\n"
            f"if not m.exists():\n"
            f"    m.write_text('x')\n"
            f"    site = glob.glob({str(world.venv)!r} + '/lib/python*/site-packages')[0]\n"
            f"    for p in sorted(pathlib.Path(site, 'demo_many').rglob('m*.py'))[::3]: p.unlink()\n"
            f"    os.kill(os.getppid(), signal.SIGINT)\n"
            f"    import time; time.sleep(30)\n")
    steps = [R.venv(),
             R.install("many", ["demo-many==1.0.0"], index_url=world.index.url("main"), find_links=[str(wheels)]),
             R.run("copy", ["{venv.python}", "-c", stop])]
    recipe = R.write_recipe(world.root, steps=steps)
    proc = world.run([recipe])
    assert proc.returncode == 130, proc.stderr
    assert "step `copy` was stopped while it changed the venv: the next run checks the installed files first" \
        in proc.stderr
    assert incomplete(world.venv) == {"demo_many-1.0.0.dist-info": 67}
    assert (world.venv / ".bootstrap" / "changing").exists()

    plan = world.run(["plan", recipe, "--check"])
    assert plan.returncode == 1, plan.stderr
    assert "step `copy` (run " in plan.stdout and "was stopped while it changed the venv" in plan.stdout
    doctor = world.run(["doctor", "--venv", world.venv])
    assert doctor.returncode == 3, doctor.stdout
    assert re.search(r"demo-many 1\.0\.0 is a broken install: 67 of the \d+ files its RECORD names are missing",
                     doctor.stdout), doctor.stdout
    doctor = world.run(["doctor", "--recipe", recipe])
    assert "install-cut-short" in doctor.stdout and f"bootstrap run {recipe}" in doctor.stdout

    proc = ok(world.run([recipe]))
    assert re.search(r"removed the incomplete install of demo-many 1\.0\.0 \(67 of the \d+ files its RECORD names "
                     r"are missing, e\.g\. demo_many/part000/m00000\.py \(missing\)\): its dist-info and the \d+ "
                     r"file\(s\) it had", proc.stderr), proc.stderr
    assert incomplete(world.venv) == {}
    assert not (world.venv / ".bootstrap" / "changing").exists()
    ok(world.python("import demo_many.part000.m00003 as m; assert m.VALUE == 3"))
    assert world.run(["plan", recipe, "--check"]).returncode == 0


def started_changing(site: Path, sample: list[Path], proc) -> bool:
    """Wait until the installer has begun on demo-many: a file of the installed version is gone
    (an upgrade removes the old files first) or the package appears."""
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if sample and not all(p.exists() for p in sample):
            return True
        if not sample and list(site.glob("demo_many/part*")):
            return True
        time.sleep(0.002)
    return False


@pytest.mark.parametrize("how,delays", [("SIGINT", (0.0, 0.05, 0.3)), ("SIGKILL", (0.0, 0.2))])
def test_an_install_killed_mid_copy_resumes_to_the_exact_venv(world, how, delays):
    """uv upgrading demo-many, a wheel of 4,000 files (UV_LINK_MODE=copy), is stopped at several
    points after it began: by Ctrl-C (bootstrap stops uv), or by SIGKILL of bootstrap and uv (a
    killed job). An upgrade removes the old files first, so a stop leaves the old dist-info with
    files missing, which uv would take at its word; whatever it left, the next run ends in the
    venv an uninterrupted run makes."""
    wheels = world.root / "wheels"
    many_files_wheel(wheels, 4000, "1.0.0")
    many_files_wheel(wheels, 4000, "2.0.0", prefix="n")
    env = {"UV_LINK_MODE": "copy"}

    def recipe_for(version: str) -> Path:
        steps = [R.venv(),
                 R.install("many", [f"demo-many=={version}", "demo-utils==1.0.0"], index_url=world.index.url("main"),
                           find_links=[str(wheels)],
                           verify=[R.imp("demo_many.part007." + ("m" if version == "1.0.0" else "n") + "03999")])]
        return R.write_recipe(world.root, steps=steps)

    reference = world.root / "reference"
    ok(world.run([recipe_for("2.0.0"), "--venv", reference], env=env, timeout=300))
    expected = freeze(world, reference)
    repaired = 0
    for delay in delays:
        ok(world.run([recipe_for("1.0.0")], env=env, timeout=300))
        site = site_packages(world.venv)
        sample = [site / f"demo_many/part{i // 500:03d}/m{i:05d}.py" for i in range(0, 4000, 250)]
        proc = world.popen([recipe_for("2.0.0")], env=env)
        if started_changing(site, sample, proc):
            time.sleep(delay)
        if proc.poll() is None:
            if how == "SIGINT":
                proc.send_signal(signal.SIGINT)
            else:
                for child in children(proc.pid):
                    try:
                        os.killpg(child, signal.SIGKILL)  # uv runs in its own process group
                    except ProcessLookupError:
                        pass
                proc.kill()
        proc.communicate(timeout=120)
        resumed = ok(world.run([recipe_for("2.0.0")], env=env, timeout=300))
        # uv 0.13 removes the old dist-info's files first, then the package's: a stop leaves an
        # empty dist-info (a broken install) and old files no RECORD names any more.
        repaired += "file(s) demo_many-1.0.0 had installed: its uninstall was cut short" in resumed.stderr
        # No module of 1.0.0 is left behind (2.0.0's are named n*.py).
        assert not list(site.glob("demo_many/part*/m*.py"))
        assert incomplete(world.venv) == {}
        assert freeze(world, world.venv) == expected
        ok(world.python("import demo_many.part007.n03999 as m; assert m.VALUE == 3999"))
    print(f"{how}: {repaired} of {len(delays)} stops left an install the resume repaired")
    # A stop right after the upgrade began leaves the 1.0.0 dist-info with files missing.
    assert repaired >= 1


# ------------------------------------------------------------- rollback, then lock

def test_a_lock_after_a_rollback_reproduces_the_venv_in_a_fresh_path(world):
    """A rollback that reinstalls demo-utils leaves demo-core alone; the step then runs again
    (its key changed) and finds its requirements satisfied, so it owns demo-utils only. The
    rollback's history entry used to carry no origins, so the lock held demo-core by version
    only and a `--locked` run into a fresh path failed `No module named 'demo_core'`."""
    index = world.index.url("main")
    steps = [R.venv(), R.install("utils", ["demo-utils>=0.9"], index_url=index)]
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe]))
    after_run = json.loads(ok(world.run(["history", "--recipe", recipe, "--json"])).stdout)["entries"][-1]["number"]
    subprocess.run([str(world.uv), "pip", "install", "--python", str(world.venv / "bin" / "python"),
                    "--index-url", index, "demo-utils==0.9.0"], env=world.full_env(), check=True,
                   capture_output=True)
    ok(world.run(["rollback", "--recipe", recipe, "--to", str(after_run)]))
    newest = sorted((world.venv / ".bootstrap" / "history").glob("*.json"))[-1]
    packages = json.loads(newest.read_text())["packages"]
    assert {n: p["origin"].get("step") for n, p in packages.items()} == {"demo-core": "utils", "demo-utils": "utils"}

    steps[1]["verify"] = [R.imp("demo_utils")]  # a new key: the step runs again, satisfied
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe]))
    lockfile = world.root / "after-rollback.lock.json"
    ok(world.run(["lock", recipe, "-o", lockfile]))
    lock = json.loads(lockfile.read_text())
    assert lock["packages"]["demo-core"]["origin"]["step"] == "utils"
    assert lock["packages"]["demo-core"]["sha256"]
    fresh = world.root / "fresh"
    ok(world.run([recipe, "--venv", fresh, "--lockfile", lockfile]))
    assert freeze(world, fresh) == freeze(world, world.venv)
    ok(world.python("import demo_utils, demo_core", venv=fresh))


# ------------------------------------------------ lock only at a fixed point, extras

def test_lock_refuses_a_venv_off_the_fixed_point_and_one_with_extras(world):
    index = world.index.url("main")
    steps = [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=index)]
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe, "--only", "venv"]))
    before = world.root / "before.json"
    ok(world.run(["snapshot", "--recipe", recipe, "-o", before]))
    ok(world.run([recipe]))
    lockfile = world.root / "l.json"

    # Rolled back to before the run (the README walkthrough's `rollback --to before.json`): the
    # step would run again.
    ok(world.run(["rollback", "--recipe", recipe, "--to", before]))
    proc = world.run(["lock", recipe, "-o", lockfile])
    assert proc.returncode == 1, proc.stderr
    assert f"cannot lock itest: {world.venv} is not at the recipe's fixed point (a step would run again)" \
        in proc.stderr
    assert "step 'core' would run: " in proc.stderr
    assert not lockfile.exists()
    assert world.run(["plan", recipe, "--check"]).returncode == 1
    ok(world.run([recipe]))

    # A hand-installed extra: named by plan and doctor, refused by lock, removed by --exact.
    subprocess.run([str(world.uv), "pip", "install", "--python", str(world.venv / "bin" / "python"),
                    "--index-url", index, "click"], env=world.full_env(), check=True, capture_output=True)
    click = next(line for line in freeze(world, world.venv) if line.startswith("click=="))
    version = click.split("==")[1]
    plan = ok(world.run(["plan", recipe]))
    assert f"extras: click {version} (no step installs it: `run --exact` removes it; `lock` refuses it)" \
        in plan.stdout
    assert world.run(["plan", recipe, "--check"]).returncode == 0  # nothing would run
    assert world.run(["plan", recipe, "--check", "--exact"]).returncode == 1
    doctor = world.run(["doctor", "--recipe", recipe])
    assert "unowned-extras" in doctor.stdout and f"click {version}" in doctor.stdout
    assert f"bootstrap run {recipe} --exact" in doctor.stdout

    proc = world.run(["lock", recipe, "-o", lockfile])
    assert proc.returncode == 1, proc.stderr
    assert f"holds a distribution no step of the recipe installs: click {version}" in proc.stderr
    assert f"bootstrap lock {recipe} --allow-extras" in proc.stderr
    proc = ok(world.run(["lock", recipe, "-o", lockfile, "--allow-extras"]))
    assert f"left out: click {version} (no step of the recipe installs it)" in proc.stderr
    assert "click" not in json.loads(lockfile.read_text())["packages"]

    ok(world.run([recipe]))  # a run without --exact settles the venv, click and all
    proc = ok(world.run([recipe, "--exact"]))
    assert f"--exact: removing click {version}: no step of the recipe installs it" in proc.stderr
    assert not any(line.startswith("click==") for line in freeze(world, world.venv))
    ok(world.run(["lock", recipe, "-o", lockfile]))
    assert world.run(["plan", recipe, "--check", "--exact"]).returncode == 0


# ---------------------------------------------------------------- conflicting pins

def test_pins_two_steps_disagree_on_are_an_error_unless_the_later_step_overrides(world):
    index = world.index.url("main")
    steps = [R.venv(),
             R.install("first", ["demo-core==1.0.0"], index_url=index),
             R.install("second", ["demo-core==1.1.0"], index_url=index)]
    recipe = R.write_recipe(world.root, steps=steps)
    line, col = R.line_of(recipe, '"demo-core==1.1.0"')
    first_line, first_col = R.line_of(recipe, '"demo-core==1.0.0"')
    for args in (["plan", recipe], [recipe]):
        proc = world.run(args)
        assert proc.returncode == 2, proc.stderr
        assert (f"{recipe}:{line}:{col}: step 'second' asks for demo-core==1.1.0, but step 'first' "
                f"({recipe}:{first_line}:{first_col}) asks for demo-core==1.0.0: no version is both") in proc.stderr
        assert "set `upgrade = true` on step 'second'" in proc.stderr
    assert not world.venv.exists()

    steps[2]["upgrade"] = True
    recipe = R.write_recipe(world.root, steps=steps)
    plan = ok(world.run(["plan", recipe]))
    assert ("step 'first' asks for demo-core==1.0.0 and step 'second' for demo-core==1.1.0: the later one wins "
            "(upgrade = true)") in plan.stdout
    ok(world.run([recipe]))
    assert "demo-core==1.1.0" in freeze(world, world.venv)

    # doctor --recipe reports what the plan refuses.
    steps[2].pop("upgrade")
    recipe = R.write_recipe(world.root, steps=steps)
    doctor = world.run(["doctor", "--recipe", recipe])
    assert doctor.returncode == 3
    assert "pin-conflict" in doctor.stdout and "no version is both" in doctor.stdout


# ------------------------------------------------------------ plan --check, recipes

def test_plan_check_is_a_drift_gate(world):
    steps = [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url("main"))]
    recipe = R.write_recipe(world.root, steps=steps)
    assert world.run(["plan", recipe, "--check"]).returncode == 1  # nothing there yet
    ok(world.run([recipe]))
    assert world.run(["plan", recipe, "--check"]).returncode == 0
    proc, doc = world.run_json(["plan", recipe, "--check"])
    assert proc.returncode == 0 and doc["extras"] == [] and doc["cut_short"] is None
    subprocess.run([str(world.uv), "pip", "install", "--python", str(world.venv / "bin" / "python"),
                    "--index-url", world.index.url("main"), "demo-core==1.1.0"], env=world.full_env(),
                   check=True, capture_output=True)
    assert world.run(["plan", recipe, "--check"]).returncode == 1


def test_history_snapshot_diff_rollback_and_pack_take_the_recipe(world):
    steps = [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url("main"))]
    recipe = R.write_recipe(world.root, steps=steps)
    ok(world.run([recipe, "--only", "venv"]))
    empty = world.root / "empty.json"
    ok(world.run(["snapshot", "--recipe", recipe, "-o", empty]))
    ok(world.run([recipe]))
    by_recipe = ok(world.run(["history", "--recipe", recipe])).stdout
    assert by_recipe == ok(world.run(["history", "--venv", world.venv])).stdout
    snap = json.loads(ok(world.run(["snapshot", "--recipe", recipe])).stdout)
    assert snap["packages"]["demo-core"]["version"] == "1.0.0"
    assert "demo-core" in ok(world.run(["diff", empty, "last", "--recipe", recipe])).stdout
    ok(world.run(["rollback", "--recipe", recipe, "--to", "1", "--dry-run"]))
    ok(world.run(["pack", "--recipe", recipe, "-o", world.root / "env.tar.zst"]))
    proc = world.run(["history", "--recipe", recipe, "--venv", world.venv])
    assert proc.returncode == 2 and "excludes" in proc.stderr
    proc = world.run(["history", "--recipe", world.root / "missing.toml"])
    assert proc.returncode == 2 and "missing.toml" in proc.stderr


def test_literal_braces_are_doubled_and_the_error_shows_how(world):
    code = "import demo_core as x; print(f'{x.__version__}')"
    steps = [R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=world.index.url("main")),
             R.run("show", ["{venv.python}", "-c", code])]
    recipe = R.write_recipe(world.root, steps=steps)
    proc = world.run(["plan", recipe])
    assert proc.returncode == 2
    assert "unknown placeholder '{x.__version__}' (known: {env.NAME}, {vars.NAME}, " in proc.stderr
    assert "for the literal text, as in a Python f-string, double the braces: '{{x.__version__}}'" in proc.stderr
    assert "env.__version__" not in proc.stderr
    steps[2]["argv"][2] = code.replace("{x.__version__}", "{{x.__version__}}")
    recipe = R.write_recipe(world.root, steps=steps)
    proc = ok(world.run([recipe, "-v"]))
    log = next((world.venv / ".bootstrap" / "logs").rglob("*-show.log")).read_text()
    assert "1.0.0" in log
