"""`{ import = M, attr = A, equals = V }`: str(M.A) must be exactly V (the reference recipe
checks torch.version.cuda == "13.0" instead of trusting a version's local label)."""

from __future__ import annotations

import recipes as R
from recipes import steps_by_id


def test_equals_passes_on_the_value_and_fails_naming_both(world):
    good = R.write_recipe(world.root, steps=[
        R.venv(), R.check("platform", [{"import": "sys", "attr": "platform", "equals": "linux"}])])
    proc, doc = world.run_json([good])
    assert proc.returncode == 0, proc.stderr
    assert steps_by_id(doc)["platform"]["result"] == "ran"

    bad = R.write_recipe(world.root, filename="bad.toml", steps=[
        R.venv(), R.check("platform", [{"import": "sys", "attr": "platform", "equals": "win32"}])])
    proc, doc = world.run_json([bad])
    assert proc.returncode == 1
    err = steps_by_id(doc)["platform"]["error"]
    assert "sys.platform is 'linux', the recipe wants 'win32'" in err["message"], err


def test_equals_needs_import_and_attr(world):
    bad = R.write_recipe(world.root, steps=[
        R.venv(), R.check("c", [{"import": "sys", "equals": "x"}])])
    proc = world.run(["plan", bad])
    assert proc.returncode == 2
    assert "'equals' needs 'import' and 'attr' in a verify clause" in proc.stderr
