"""Deliberate overrides hold (issue 10 items 1, 9, 10): a later step keeps an earlier step's
upgrade past another package's pin (uv --override, pip --constraint), a step that undoes an
earlier one fails the run naming both, an install step is up to date only while its own
requirements hold, and step keys do not chain through unrelated steps.

The trap needs three synthetic packages: ov-pinner pins ov-base exactly, ov-dependent depends
on ov-pinner, and a step in between upgrades ov-base past the pin on purpose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import recipes as R
from conftest import make_wheelhouse
from recipes import steps_by_id

PACKAGES = """
[[package]]
name = "ov-base"
versions = ["1.0.0", "2.0.0"]

[[package]]
name = "ov-pinner"
[[package.release]]
version = "1.0.0"
requires = ["ov-base==1.0.0"]

[[package]]
name = "ov-dependent"
[[package.release]]
version = "1.0.0"
requires = ["ov-pinner"]

# An upgrade that also raises a second pin of the pinner (cublas raising nvrtc past torch's).
[[package]]
name = "ov-extra"
versions = ["1.0.0", "2.0.0"]

[[package]]
name = "ov-lib"
[[package.release]]
version = "1.0.0"
requires = ["ov-extra>=1"]
[[package.release]]
version = "2.0.0"
requires = ["ov-extra>=2"]

# Depends on ov-extra without a bound: upgrading it needs no newer ov-extra.
[[package]]
name = "ov-app"
[[package.release]]
version = "1.0.0"
requires = ["ov-extra"]
[[package.release]]
version = "2.0.0"
requires = ["ov-extra"]

[[package]]
name = "ov-pinner2"
[[package.release]]
version = "1.0.0"
requires = ["ov-lib==1.0.0", "ov-extra==1.0.0"]
"""


@pytest.fixture(scope="module")
def ov_wheelhouse(tmp_path_factory) -> Path:
    return make_wheelhouse(tmp_path_factory.mktemp("ov") / "wheels", PACKAGES)


@pytest.fixture
def ov(world, index_factory, ov_wheelhouse, request):
    """The world with its own index of the ov-* packages and the installer under test."""
    world.ov_index = index_factory(root=ov_wheelhouse)
    world.installer = getattr(request, "param", "uv")
    if world.installer == "pip":
        world.env["PIP_CACHE_DIR"] = str(world.root.parent / "pip-cache")
    return world


def trap_steps(url: str, extra: list[dict] | None = None) -> list[dict]:
    return [
        R.venv(),
        R.install("pinner", ["ov-pinner==1.0.0"], index_url=url),
        R.install("base", ["ov-base>=2"], index_url=url, upgrade=True, allow_conflicts=["ov-pinner"]),
        *(extra or []),
        R.install("dependent", ["ov-dependent"], index_url=url, optional=True),
    ]


def write(world, steps) -> Path:
    return R.write_recipe(world.root, steps=steps, installer=world.installer)


@pytest.mark.parametrize("ov", ["uv"], indirect=True)
def test_override_holds_with_uv_and_the_next_run_is_a_no_op(ov):
    recipe = write(ov, trap_steps(ov.ov_index.url()))
    plan = ov.run(["plan", recipe, "--explain"])
    assert plan.returncode == 0, plan.stderr
    overrides = ov.venv / ".bootstrap" / "overrides" / "dependent.txt"
    assert f"--override {overrides}" in plan.stdout, plan.stdout
    assert "overrides: [base: ov-base]" in plan.stdout, plan.stdout

    proc, doc = ov.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    assert [s["result"] for s in doc["steps"]] == ["ran"] * 4
    # Without the override, resolving ov-dependent re-resolves ov-pinner's exact pin: 1.0.0.
    assert ov.version_of("ov-base") == "2.0.0"
    assert ov.version_of("ov-dependent") == "1.0.0"
    assert "# step 'base'\nov-base==2.0.0\n" in overrides.read_text()

    proc, doc = ov.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    assert [s["reason"] for s in doc["steps"]] == ["up to date"] * 4


@pytest.mark.parametrize("ov", ["pip"], indirect=True)
def test_pip_refuses_to_undo_the_override_and_names_step_package_and_versions(ov):
    recipe = write(ov, trap_steps(ov.ov_index.url()))
    overrides = ov.venv / ".bootstrap" / "overrides" / "dependent.txt"
    plan = ov.run(["plan", recipe])
    assert f"--constraint {overrides}" in plan.stdout, plan.stdout
    proc, doc = ov.run_json([recipe])
    # The optional step failed; the venv is still what every passed step asked for.
    assert proc.returncode == 0, proc.stderr
    dependent = steps_by_id(doc)["dependent"]
    assert dependent["result"] == "failed (optional)"
    detail = dependent["error"]["detail"]
    assert "ov-pinner 1.0.0 requires ov-base==1.0.0; step 'base' keeps ov-base 2.0.0" in detail, detail
    assert "pip cannot override a dependency's pin" in detail, detail
    assert ov.version_of("ov-base") == "2.0.0"
    assert ov.version_of("ov-dependent") is None
    assert "ov-base==2.0.0\n" in overrides.read_text()


@pytest.mark.parametrize("ov", ["uv", "pip"], indirect=True)
def test_a_pin_pip_cannot_override_fails_naming_step_package_and_versions(ov):
    """The pinner comes after the override: uv installs it and keeps ov-base 2.0.0 (--override);
    pip cannot (a constraint is not an override), and says so."""
    url = ov.ov_index.url()
    recipe = write(ov, [R.venv(),
                        R.install("base", ["ov-base>=2"], index_url=url, upgrade=True, allow_conflicts=["ov-pinner"]),
                        R.install("dependent", ["ov-dependent"], index_url=url)])
    proc, doc = ov.run_json([recipe])
    if ov.installer == "uv":
        assert proc.returncode == 0, proc.stderr
        assert ov.version_of("ov-pinner") == "1.0.0"
        assert ov.version_of("ov-base") == "2.0.0"
        return
    assert proc.returncode != 0
    dependent = steps_by_id(doc)["dependent"]
    assert dependent["result"] == "failed"
    detail = dependent["error"]["detail"]
    assert "keeps what earlier steps chose on purpose: ov-base 2.0.0 (step 'base')" in detail, detail
    assert "pip cannot override a dependency's pin" in detail, detail
    assert "ov-base==1.0.0" in detail, detail  # the pin, in pip's own words (the log's tail)
    # pip refused to resolve: nothing was undone.
    assert ov.version_of("ov-base") == "2.0.0"
    assert ov.version_of("ov-dependent") is None


@pytest.mark.parametrize("ov", ["uv", "pip"], indirect=True)
def test_a_step_that_undoes_an_earlier_one_fails_the_run_even_when_optional(ov):
    url = ov.ov_index.url()
    # A run step that re-installs torch's pin by itself (as a re-synced lock would).
    downgrade = R.run("downgrade", ["uv", "pip", "install", "-q", "--python", "{venv.python}", "--index-url",
                                    url, "ov-base==1.0.0"], optional=True)
    recipe = write(ov, trap_steps(url, [downgrade]))
    proc, doc = ov.run_json([recipe])
    assert proc.returncode != 0
    steps = steps_by_id(doc)
    assert steps["downgrade"]["result"] == "failed"
    message = steps["downgrade"]["error"]["message"]
    assert message == ("step 'downgrade' undid step 'base': ov-base 1.0.0 does not satisfy ov-base>=2 "
                       "(ov-base 2.0.0 -> 1.0.0 when 'downgrade' ran)"), message
    assert steps["dependent"]["result"] == "not reached" or "dependent" not in steps or \
        steps["dependent"]["result"] in ("not reached", "not selected")

    # The next run is not fooled: base runs again (its version changed), the fight repeats.
    proc, doc = ov.run_json([recipe])
    assert proc.returncode != 0
    steps = steps_by_id(doc)
    assert steps["base"]["result"] == "ran"
    assert "undid step 'base'" in steps["downgrade"]["error"]["message"]


@pytest.mark.parametrize("ov", ["uv", "pip"], indirect=True)
def test_install_step_is_up_to_date_only_while_its_own_requirements_hold(ov):
    recipe = write(ov, trap_steps(ov.ov_index.url())[:3])
    proc = ov.run([recipe])
    assert proc.returncode == 0, proc.stderr
    # Ownership of ov-base moved on (as it did to a later step in older runs), and the venv
    # went back to the pinner's pin: the base step owns nothing that changed.
    journal_path = ov.venv / ".bootstrap" / "journal.json"
    journal = json.loads(journal_path.read_text())
    assert "ov-base" in journal["steps"]["base"]["dists"]
    del journal["steps"]["base"]["dists"]["ov-base"]
    journal_path.write_text(json.dumps(journal))
    ov.uv_pip("install", "-q", "--index-url", ov.ov_index.url(), "ov-base==1.0.0")

    # doctor says which step to re-run.
    proc = ov.run(["doctor", "--venv", ov.venv, "--recipe", recipe, "--json"])
    findings = json.loads(proc.stdout)["findings"]
    ours = [f for f in findings if f["rule"] == "step-requirements"]
    assert ours and ours[0]["message"] == "step 'base' asks for ov-base>=2, but ov-base 1.0.0 is installed", findings
    assert f"--from base" in ours[0]["fix"]

    plan = ov.run(["plan", recipe])
    assert plan.returncode == 0, plan.stderr
    assert "ov-base 1.0.0 does not satisfy ov-base>=2" in plan.stdout, plan.stdout

    proc, doc = ov.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    steps = steps_by_id(doc)
    assert steps["base"]["result"] == "ran"
    assert steps["base"]["reason"] == "ov-base 1.0.0 does not satisfy ov-base>=2"
    assert ov.version_of("ov-base") == "2.0.0"


@pytest.mark.parametrize("ov", ["uv", "pip"], indirect=True)
def test_an_upgrade_that_breaks_a_pin_it_does_not_name_is_reported(ov):
    url = ov.ov_index.url()
    steps = [R.venv(), R.install("pinner", ["ov-pinner2==1.0.0"], index_url=url),
             R.install("lib", ["ov-lib>=2"], index_url=url, upgrade=True, allow_conflicts=["ov-pinner2"])]
    recipe = write(ov, steps)
    proc, doc = ov.run_json([recipe])
    assert proc.returncode != 0
    lib = steps_by_id(doc)["lib"]
    assert lib["result"] == "failed"
    assert lib["error"]["message"] == (
        "step 'lib' undid step 'pinner': ov-extra 2.0.0 does not satisfy ov-extra==1.0.0 (required by "
        "ov-pinner2 1.0.0) (ov-extra 1.0.0 -> 2.0.0 when 'lib' ran)"), lib["error"]["message"]

    # Naming it makes the override deliberate: the run passes and the recipe is a fixed point.
    steps[2] = R.install("lib", ["ov-lib>=2", "ov-extra>=2"], index_url=url, upgrade=True,
                         allow_conflicts=["ov-pinner2"])
    recipe = write(ov, steps)
    proc, doc = ov.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    proc, doc = ov.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    assert [s["reason"] for s in doc["steps"]] == ["up to date"] * 3


@pytest.mark.parametrize("ov", ["uv", "pip"], indirect=True)
def test_upgrade_raises_the_named_packages_not_their_satisfied_dependencies(ov):
    url = ov.ov_index.url()
    steps = [R.venv(), R.install("old", ["ov-app==1.0.0", "ov-extra==1.0.0"], index_url=url),
             R.install("app", ["ov-app"], index_url=url, upgrade=True)]
    proc = ov.run([write(ov, steps)])
    assert proc.returncode == 0, proc.stderr
    assert ov.version_of("ov-app") == "2.0.0"
    # uv's --upgrade would raise it too (as cublas's upgrade raised nvrtc past torch's pin).
    assert ov.version_of("ov-extra") == "1.0.0"


def test_end_of_run_check_names_the_step_to_rerun(ov):
    recipe = write(ov, trap_steps(ov.ov_index.url())[:3])
    assert ov.run([recipe]).returncode == 0
    ov.uv_pip("install", "-q", "--index-url", ov.ov_index.url(), "ov-base==1.0.0")
    # base is left out of this run; the venv no longer satisfies it: an error, not a pass.
    proc, doc = ov.run_json([recipe, "--skip", "base"])
    assert proc.returncode != 0
    assert doc["error"]["message"] == "the venv no longer satisfies step 'base': ov-base 1.0.0 does not satisfy ov-base>=2"
    assert "--from base" in doc["error"]["detail"]


def test_an_edited_step_does_not_rerun_unrelated_later_steps(ov):
    url = ov.ov_index.url()
    stamp = "{venv.path}/helpers.stamp"
    helpers = R.run("helpers", ["{venv.python}", "-c", "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('x')",
                                stamp], creates=stamp)
    steps = [*trap_steps(url), helpers]
    recipe = write(ov, steps)
    assert ov.run([recipe]).returncode == 0
    # Only the pinner's verify list changes: it verifies; nothing later is due.
    steps[1] = R.install("pinner", ["ov-pinner==1.0.0"], index_url=url, verify=[R.imp("ov_pinner")])
    recipe = write(ov, steps)
    proc, doc = ov.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    by_id = steps_by_id(doc)
    assert by_id["pinner"]["reason"] == "requirements already satisfied"
    for later in ("base", "dependent", "helpers"):
        assert by_id[later]["reason"] == "up to date", (later, by_id[later])


def test_a_later_step_naming_the_package_supersedes_an_earlier_pin(ov):
    url = ov.ov_index.url()
    recipe = write(ov, [R.venv(), R.install("pin", ["ov-base==1.0.0"], index_url=url),
                        R.install("up", ["ov-base"], index_url=url, upgrade=True)])
    proc = ov.run([recipe])
    assert proc.returncode == 0, proc.stderr
    assert ov.version_of("ov-base") == "2.0.0"
    proc, doc = ov.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    assert [s["reason"] for s in doc["steps"]] == ["up to date"] * 3
    proc = ov.run(["doctor", "--venv", ov.venv, "--recipe", recipe, "--json"])
    findings = json.loads(proc.stdout)["findings"]
    assert not [f for f in findings if f["rule"] == "step-requirements"], findings


@pytest.mark.parametrize("ov", ["uv"], indirect=True)
def test_doctor_warns_of_a_skipped_optional_step_without_an_error(ov):
    """An optional step left out (--skip, or a failure the run went past) is a warning naming
    the step, not an error (realworld.sh skips nvrx where glibc < 2.39)."""
    steps = trap_steps(ov.ov_index.url())
    steps[-1]["verify"] = [R.imp("ov_dependent")]
    recipe = write(ov, steps)
    proc = ov.run([recipe, "--skip", "dependent"])
    assert proc.returncode == 0, proc.stderr
    proc = ov.run(["doctor", "--venv", ov.venv, "--recipe", recipe, "--json"])
    findings = json.loads(proc.stdout)["findings"]
    assert proc.returncode == 0, findings
    ours = {f["rule"]: f for f in findings if "'dependent'" in f["message"]}
    assert ours["step-requirements"]["severity"] == "warning", ours
    assert ours["step-requirements"]["message"] == "optional step 'dependent' is not in this venv: ov-dependent is not installed"
    assert ours["import"]["severity"] == "warning" and "--only dependent" in ours["import"]["fix"], ours


@pytest.mark.parametrize("ov", ["uv"], indirect=True)
def test_an_earlier_step_that_runs_again_keeps_a_later_steps_override(ov):
    """Issue 27 item 6: the pinner running again (it asks for one more package) put ov-base back
    to its pin (2.0.0 -> 1.0.0), and the upgrade step then ran again to raise it (-> 2.0.0): one
    distribution reinstalled twice in a run, where `plan` had said the upgrade step would skip.
    The pinner's resolution now keeps the later step's installed choice (uv --override): nothing
    churns and the upgrade step skips, as `plan` said."""
    url = ov.ov_index.url()
    steps = trap_steps(url)
    recipe = write(ov, steps)
    proc = ov.run([recipe])
    assert proc.returncode == 0, proc.stderr
    assert ov.version_of("ov-base") == "2.0.0"

    steps[1] = R.install("pinner", ["ov-pinner==1.0.0", "ov-app"], index_url=url)
    recipe = write(ov, steps)
    plan = ov.run(["plan", recipe])
    assert plan.returncode == 0, plan.stderr
    assert "[2/4] pinner (install)\n  would run" in plan.stdout
    assert "[3/4] base (install)\n  would skip: up to date" in plan.stdout
    proc, doc = ov.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    by_id = steps_by_id(doc)
    assert by_id["pinner"]["result"] == "ran"
    assert by_id["base"]["reason"] == "up to date", by_id["base"]
    assert ov.version_of("ov-base") == "2.0.0"
    assert "ov-base" not in json.dumps(doc["changes"]), doc["changes"]
    overrides = (ov.venv / ".bootstrap" / "overrides" / "pinner.txt").read_text()
    assert "# step 'base' (later)\nov-base==2.0.0\n" in overrides
