"""[network] timeout/retries change how installers fetch, not what they install: changing them
between two runs re-runs nothing (they are not in the step keys)."""

from __future__ import annotations

import recipes as R
from recipes import steps_by_id


def test_changed_network_timeout_is_a_noop(world):
    project = R.uv_project(world)
    steps = [R.venv(),
             R.install("click", ["click"], index_url=world.index.url()),
             R.sync("sync", "proj", args=["--inexact"], env_unset=["UV_NO_CONFIG"])]
    recipe = R.write_recipe(world.root, steps=steps, network={"timeout": 30, "retries": 3})
    proc, doc = world.run_json([recipe])
    assert proc.returncode == 0, proc.stderr
    assert {s["result"] for s in doc["steps"]} == {"ran"}

    R.write_recipe(world.root, steps=steps, network={"timeout": 45, "retries": 1})
    plan = world.run(["plan", recipe])
    assert plan.returncode == 0, plan.stderr
    assert "  env set: UV_HTTP_TIMEOUT=45\n" in plan.stdout  # the installer still gets it
    world.index.reset()
    proc2, doc2 = world.run_json([recipe])
    assert proc2.returncode == 0, proc2.stderr
    for sid, step in steps_by_id(doc2).items():
        assert step["result"] == "skipped" and step["reason"] == "up to date", (sid, step)
    assert world.index.stats() == {}
