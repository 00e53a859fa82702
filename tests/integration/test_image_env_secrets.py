"""Issue 42, item 5 (review): the steps an image's defaults file names as needing a build secret
(`secret NAME STEP...` in /etc/bootstrap/env) are the steps whose values the plan read it in.

Before, `containerfile` found them by scanning the recipe's text between step headers for
`{env.NAME}` (or `{vars.X}` of a [vars] value holding it): a comment counted, a two-level [vars]
chain was missed, a variable the recipe's `[env] key` passes to every step was missed, and the
last step took the rest of the file. No image is built: the file is read from the build context
(bootstrap/etc/env, which the Dockerfile copies to /etc/bootstrap/env)."""

from __future__ import annotations

from pathlib import Path

RECIPE = """schema = 1
name = "img-secrets"

[vars]
auth = "token={env.BS_TOKEN}"
header = "Authorization: {vars.auth}"

[venv]
path = "/opt/venv"
python = "3.11"

[env]
key = ["BS_KEYED_TOKEN"]

[[step]]
id = "venv"
kind = "venv"

[[step]]
id = "commented"
kind = "run"
# reads nothing: the step below reads {env.BS_TOKEN}, through {vars.header}
argv = ["true"]

[[step]]
id = "chained"
kind = "run"
argv = ["sh", "-c", "test -n \\"$PULL_HEADER\\""]
env = { PULL_HEADER = "{vars.header}" }

[[step]]
id = "last"
kind = "run"
argv = ["true"]
# the end of the file: {env.BS_TOKEN} in a comment is no read
"""


def secret_lines(ctx: Path) -> dict[str, list[str]]:
    """The defaults file's `secret NAME STEP...` lines, by name."""
    out = {}
    for line in (ctx / "bootstrap/etc/env").read_text().splitlines():
        words = line.split()
        if words and words[0] == "secret":
            out[words[1]] = words[2:]
    return out


def test_the_steps_needing_a_build_secret_are_those_the_plan_read_it_in(world, tmp_path):
    recipe = tmp_path / "img.toml"
    recipe.write_text(RECIPE)
    ctx = tmp_path / "ctx"
    proc = world.run(["containerfile", recipe, "--no-device", "--uv", world.uv, "-o", ctx,
                      "--secret", "BS_TOKEN", "--secret", "BS_KEYED_TOKEN"],
                     env={"BS_TOKEN": None, "BS_KEYED_TOKEN": None})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    print((ctx / "bootstrap/etc/env").read_text())
    secrets = secret_lines(ctx)
    # Read through a two-level [vars] chain by `chained` only; the comments are no reads.
    assert secrets["BS_TOKEN"] == ["chained"], secrets
    # `[env] key` passes the variable to every step, as an input of its key.
    assert secrets["BS_KEYED_TOKEN"] == ["venv", "commented", "chained", "last"], secrets

    # In the container (the file as /etc/bootstrap/env), the plan says which step needs it.
    image_env = {"BOOTSTRAP_IMAGE_ENV": str(ctx / "bootstrap/etc/env"), "BS_TOKEN": None, "BS_KEYED_TOKEN": None}
    plan = world.run(["plan", ctx / "bootstrap/etc/recipe.toml", "--only", "commented", "chained"], env=image_env)
    out = plan.stdout + plan.stderr
    assert "step 'chained' needs BS_TOKEN" in out, out
    assert "step 'commented' needs BS_TOKEN" not in out, out
