"""`bootstrap fleet diff`: manifests of real venvs (one per "node", each at its own path, as on
node-local disk) grouped by environment; the odd node and package are named."""

from __future__ import annotations

import json
import subprocess

import recipes as R


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def bring_up_nodes(world, names):
    """Run the same recipe into one venv per node and write each node's manifest."""
    recipe = R.write_recipe(world.root, steps=R.pipeline(world.index))
    manifests = world.root / "manifests"
    manifests.mkdir()
    for name in names:
        venv = world.root / "nodes" / name / "venv"
        ok(world.run([recipe, "--venv", venv]))
        ok(world.run(["snapshot", "--venv", venv, "-o", manifests / f"{name}.json"]))
    return manifests


def test_same_recipe_on_four_nodes_has_no_drift_and_an_upgraded_node_is_named(world):
    names = ["n1", "n2", "n3", "n10"]
    manifests = bring_up_nodes(world, names)

    proc = ok(world.run(["fleet", "diff", manifests]))
    assert proc.stdout == "4 nodes, 1 environment: no drift\n"

    # One node drifts: cublas downgraded behind bootstrap's back, and a package added.
    odd = world.root / "nodes" / "n3" / "venv"
    world.uv_pip("install", "--index-url", world.index.url("main"), "nvidia-cublas==13.1.0.3", venv=odd)
    ok(world.run(["snapshot", "--venv", odd, "-o", manifests / "n3.json"]))

    proc = world.run(["fleet", "diff", manifests])
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "4 nodes, 2 environments"
    assert "  3 nodes: n1, n2, n10" in lines
    assert "  1 node: n3" in lines
    assert "n3: nvidia-cublas 13.1.0.3, the other 3 nodes 13.4.1.1" in lines

    proc, = [world.run(["fleet", "diff", *sorted(manifests.glob("*.json")), "--json"])]
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["same"] is False and doc["nodes"] == 4
    assert doc["groups"] == [["n1", "n2", "n10"], ["n3"]]
    (cublas,) = [d for d in doc["drift"] if d["what"] == "nvidia-cublas"]
    assert cublas["kind"] == "package"
    assert cublas["values"] == [{"value": "13.4.1.1", "nodes": ["n1", "n2", "n10"]},
                                {"value": "13.1.0.3", "nodes": ["n3"]}]


def test_fleet_diff_refuses_too_few_or_ambiguous_manifests(world):
    manifests = bring_up_nodes(world, ["n1"])
    proc = world.run(["fleet", "diff", manifests])
    assert proc.returncode == 2
    assert "two or more manifests" in proc.stderr

    other = world.root / "other"
    other.mkdir()
    (other / "n1.json").write_text((manifests / "n1.json").read_text())
    proc = world.run(["fleet", "diff", manifests, other])
    assert proc.returncode == 2
    assert "two manifests for node n1" in proc.stderr

    proc = world.run(["fleet", "diff", manifests / "n1.json", world.root / "missing.json"])
    assert proc.returncode == 2
    assert "no such manifest or directory" in proc.stderr and "missing.json" in proc.stderr

    (other / "n2.json").write_text("{ not json")
    proc = world.run(["fleet", "diff", manifests / "n1.json", other / "n2.json"])
    assert proc.returncode == 1
    assert "n2.json" in proc.stderr
