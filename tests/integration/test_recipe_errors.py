"""Invalid recipes: exact messages with file:line:col, exit code 2, nothing touched on disk."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

HEAD = """\
schema = 1
name = "errs"

[venv]
path = "venv"
python = "3.11"

[[step]]
id = "venv"
kind = "venv"
"""
# HEAD is 10 lines; the text appended below starts at line 11.


def write(world, body: str, head: str = HEAD) -> Path:
    path = world.root / "recipe.toml"
    path.write_text(head + textwrap.dedent(body))
    return path


def assert_recipe_error(world, recipe: Path, *expected: tuple[int, int, str]):
    """Run and plan both fail with exit 2; the first problem is the error message, every
    problem is listed (in file order) in the detail."""
    lines = [f"{recipe}:{line}:{col}: {msg}" for line, col, msg in expected]
    for args in ([recipe], ["plan", recipe]):
        proc = world.run(args)
        assert proc.returncode == 2, f"{args}: rc={proc.returncode}\n{proc.stderr}"
        assert proc.stdout == ""
        assert proc.stderr.startswith(f"error: {lines[0]}\n"), proc.stderr
        assert "\n".join(lines) in proc.stderr, proc.stderr
    proc = world.run([recipe, "--json"])
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc == {"schema": 1, "ok": False,
                   "error": {"message": lines[0], "detail": "\n".join(lines), "exit_code": 2}}
    assert not (world.root / "venv").exists()
    assert world.index.stats() == {}


def test_typo_key(world):
    recipe = write(world, """
        [[step]]
        id = "core"
        kind = "install"
        pakages = ["demo-core"]
        """)
    # The typo of a required key is reported once, as a typo (not also as "missing 'packages'").
    assert_recipe_error(world, recipe,
                        (15, 1, "unknown key 'pakages' in step 'core' (did you mean 'packages'?)"))


def test_typo_key_in_section(world):
    head = HEAD.replace('python = "3.11"', 'pyhton = "3.11"')
    recipe = write(world, "", head=head)
    assert_recipe_error(world, recipe, (6, 1, "unknown key 'pyhton' in [venv] (did you mean 'python'?)"))


def test_wrong_type(world):
    recipe = write(world, """
        [[step]]
        id = "core"
        kind = "install"
        packages = ["demo-core"]
        upgrade = "yes"
        """)
    assert_recipe_error(world, recipe, (16, 11, "'upgrade' must be a boolean, not a string"))


def test_wrong_type_in_network(world):
    recipe = write(world, """
        [network]
        timeout = "30"
        retries = -1
        """)
    # [network] comes after the steps in the file: lines 12-14.
    assert_recipe_error(world, recipe,
                        (13, 11, "'network.timeout' must be an integer, not a string"),
                        (14, 11, "'network.retries' must be at least 0, not -1"))


def test_unknown_placeholder(world):
    recipe = write(world, """
        [[step]]
        id = "hello"
        kind = "run"
        argv = ["{venv.python}", "-c", "pass", "{python.ext_sufix}"]
        """)
    assert_recipe_error(world, recipe,
                        (15, 40, "unknown placeholder '{python.ext_sufix}' (did you mean '{python.ext_suffix}'?)"))


def test_unknown_placeholder_transposed_typo(world):
    recipe = write(world, """
        [[step]]
        id = "hello"
        kind = "run"
        argv = ["{venv.pyhton}", "-V"]
        """)
    assert_recipe_error(world, recipe,
                        (15, 9, "unknown placeholder '{venv.pyhton}' (did you mean '{venv.python}'?)"))


def test_unknown_variable(world):
    recipe = write(world, """
        [[step]]
        id = "hello"
        kind = "run"
        argv = ["echo", "{vars.missing}"]
        """)
    assert_recipe_error(world, recipe,
                        (15, 17, "unknown variable '{vars.missing}' (not defined in [vars])"))


def test_duplicate_id(world):
    recipe = write(world, """
        [[step]]
        id = "core"
        kind = "install"
        packages = ["demo-core"]

        [[step]]
        id = "core"
        kind = "install"
        packages = ["click"]
        """)
    assert_recipe_error(world, recipe,
                        (18, 6, f"duplicate step id 'core' (first defined at {world.root / 'recipe.toml'}:13:6)"))


def test_unknown_kind(world):
    recipe = write(world, """
        [[step]]
        id = "core"
        kind = "instal"
        packages = ["demo-core"]
        """)
    assert_recipe_error(world, recipe, (14, 8, "unknown step kind 'instal' (did you mean 'install'?)"))


def test_every_problem_is_reported_in_file_order(world):
    recipe = write(world, """
        [[step]]
        id = "a"
        kind = "run"
        argv = ["{venv.pythn}"]
        tiemout = 5

        [[step]]
        id = "a"
        kind = "check"
        """)
    assert_recipe_error(
        world, recipe,
        (15, 9, "unknown placeholder '{venv.pythn}' (did you mean '{venv.python}'?)"),
        (16, 1, "unknown key 'tiemout' in step 'a' (did you mean 'timeout'?)"),
        (18, 1, "step 'a' (kind check) needs at least one verify clause"),
        (19, 6, f"duplicate step id 'a' (first defined at {recipe}:13:6)"),
    )


def test_unsupported_schema(world):
    recipe = write(world, "", head=HEAD.replace("schema = 1", "schema = 2"))
    assert_recipe_error(world, recipe, (1, 10, "unsupported schema version 2 (this bootstrap reads schema 1)"))


def test_recipe_error_relative_path_is_shown_as_given(world):
    write(world, """
        [[step]]
        id = "core"
        kind = "install"
        pakages = ["demo-core"]
        """)
    proc = world.run(["recipe.toml"])  # cwd is the recipe's directory
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        "error: recipe.toml:15:1: unknown key 'pakages' in step 'core' (did you mean 'packages'?)\n")


def test_usage_errors_exit_2(world):
    proc = world.run(["run"])
    assert proc.returncode == 2
    proc = world.run(["run", "recipe.toml", "--no-such-flag"])
    assert proc.returncode == 2
    assert "--no-such-flag" in proc.stderr


def test_invalid_requirement(world):
    recipe = write(world, """
        [[step]]
        id = "core"
        kind = "install"
        packages = ["click", "demo-core=="]
        """)
    # Found when the plan is made: still an invalid recipe (exit 2) with its location.
    for args in ([recipe], ["plan", recipe]):
        proc = world.run(args)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"error: {recipe}:15:22: invalid requirement 'demo-core==': "), proc.stderr
    assert not (world.root / "venv").exists()


REPO = Path(__file__).resolve().parents[2]


def working_python(version: str, bin_dir: Path) -> str:
    """A PATH on which `pythonX.Y` runs, or is absent: `plan` checks the interpreter a recipe
    asks for, and a pyenv shim for a version the shell has not selected does not run. A real
    interpreter of that version from this machine goes first when there is one."""
    import glob
    import shutil
    candidates = [shutil.which(f"python{version}") or ""]
    candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}*/bin/python{version}")))
    for c in candidates:
        if c and subprocess.run([c, "-c", "pass"], capture_output=True).returncode == 0:
            bin_dir.mkdir(exist_ok=True)
            (bin_dir / f"python{version}").symlink_to(c)
            return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if not os.path.exists(os.path.join(p, f"python{version}")))


def megatron_checkout(root: Path) -> Path:
    """What the reference recipe reads of a Megatron-LM checkout: its project and helpers.cpp."""
    top = root / "Megatron-LM"
    (top / "megatron/core/datasets").mkdir(parents=True)
    (top / "pyproject.toml").write_text('[project]\nname = "megatron-core"\nversion = "0.0.0"\n')
    (top / "megatron/core/datasets/helpers.cpp").write_text("// stand-in\n")
    return top


@pytest.mark.parametrize("name,args", [
    ("demo.toml", []),
    # No GPU here: the apex build's arch comes from the recipe's fallback_arch, said loudly.
    ("h200-te214.toml", ["--no-device"]),
])
def test_shipped_recipes_are_valid(world, name, args):
    env = {"MEGATRON_DIR": str(megatron_checkout(world.root)),
           "PATH": f"{world.uv.parent}{os.pathsep}" + working_python("3.12", world.root / "bin")}
    proc = world.run(["plan", REPO / "recipes" / name, "--venv", world.root / "v", "--json", *args], env=env)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["venv_exists"] is False and plan["steps"]
    assert not (world.root / "v").exists()
