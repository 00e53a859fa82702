"""Issue 42, item 5: an image's recipe checked where it runs, without a container runtime.

The image build is reproduced in place: `containerfile` writes the context, then the RUN of its
Dockerfile (the `bootstrap run` argv it holds, its exports, compileall, snapshot, seal) runs here
with the context's bootstrap/etc/ standing for /etc/bootstrap/ (BOOTSTRAP_IMAGE_ENV names its
env file) and the venv at the path the image would have it. Then, as in a fresh container: an
environment without the recipe's variables, the build secret or SOURCE_DATE_EPOCH.

Before: `plan --check` exited 2 (`BS_MEGATRON_DIR is not set`: the values were exported only in
the RUN), and, with the variable given, 1 (every step with verify clauses "would re-verify" once
`seal` had reset the journal's stat states); the first run re-verified and wrote into the venv.
test_image.py builds real images (buildah, docker) and checks the same inside them."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import recipes as R

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_plan_writes import changes, tree_state  # noqa: E402

SECRET_VALUE = "bs-in-place-token-4242"
EPOCH = "0"  # the Containerfile's default: a naive reader would say 1970-01-01


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"rc={proc.returncode}\nargv={proc.args}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def image_recipe(world, megatron: Path) -> Path:
    steps = [
        R.venv(),
        R.install("torch", ["demo-torch==2.11.0+cu130"], index_url=world.index.url("main"),
                  extra_index_urls=[world.index.url("cu130")], verify=[R.imp("demo_torch")]),
        R.run("megatron", ["test", "-d", "{env.BS_MEGATRON_DIR}"]),
        R.run("uses-token", ["sh", "-c", 'test -n "$HF_TOKEN"'], env={"HF_TOKEN": "{env.HF_TOKEN}"}),
        R.run("slow", ["sh", "-c", "exit 1"]),  # the build skips it (--skip slow), as the image must
        R.check("check", [R.imp("demo_torch")]),
    ]
    (world.root / "src").mkdir()
    return R.write_recipe(world.root / "src", "image.toml", name="in-place", steps=steps,
                          venv_path="/tmp/unused-venv")


def run_line(dockerfile: str) -> str:
    """The RUN instruction's shell text (its continuation lines joined)."""
    m = re.search(r"^RUN (.*?[^\\])\n", dockerfile, re.S | re.M)
    assert m, dockerfile
    return m.group(1).replace("\\\n", " ")


def build_in_place(world, ctx: Path, venv: Path, home: Path) -> dict:
    """The Dockerfile's RUN, here: its exports, then each bootstrap command with /etc/bootstrap
    read as ctx/bootstrap/etc. Returns the build's environment."""
    etc = ctx / "bootstrap" / "etc"
    run = run_line((ctx / "Dockerfile").read_text())
    exports = shlex.split(re.search(r"export (.*?); ", run).group(1))
    env = dict(w.split("=", 1) for w in exports)
    env.update({"BOOTSTRAP_HOME": str(home), "UV_CACHE_DIR": str(world.uv_cache), "SOURCE_DATE_EPOCH": EPOCH,
                "HF_TOKEN": SECRET_VALUE, "BOOTSTRAP_IMAGE_ENV": str(etc / "env")})
    commands = [shlex.split(c.strip().removesuffix("</dev/null").strip()) for c in run.split(";")
                if c.strip().startswith("bootstrap ")]
    assert [c[1] for c in commands] == ["run", "snapshot", "seal"], commands
    for argv in commands:
        argv = [a.replace("/etc/bootstrap", str(etc)) for a in argv[1:]]
        ok(world.run(argv, env=env, timeout=300))
        if argv[0] == "run":  # then compileall, as the RUN does
            ok(subprocess.run([str(venv / "bin/python"), "-m", "compileall", "-q", "-f", "-j0", "--invalidation-mode",
                               "checked-hash", str(venv / "lib")], capture_output=True, text=True))
    return env


def container_env(ctx: Path) -> dict:
    """A fresh container's environment: none of the build's variables, only the image's file."""
    return {"BOOTSTRAP_IMAGE_ENV": str(ctx / "bootstrap/etc/env"), "BS_MEGATRON_DIR": None, "HF_TOKEN": None,
            "SOURCE_DATE_EPOCH": None, "BOOTSTRAP_HOME": str(ctx.parent / "container-home")}


def test_an_image_is_checkable_in_place_and_its_first_run_writes_nothing(world, tmp_path):
    megatron = tmp_path / "megatron"
    megatron.mkdir()
    recipe = image_recipe(world, megatron)
    ctx, venv, home = tmp_path / "ctx", tmp_path / "opt" / "venv", tmp_path / "build-home"
    proc = ok(world.run(["containerfile", recipe, "--no-device", "--venv", venv, "-o", ctx, "--uv", world.uv,
                         "--secret", "HF_TOKEN", "--skip", "slow"], env={"BS_MEGATRON_DIR": str(megatron)}))
    dockerfile = (ctx / "Dockerfile").read_text()
    assert re.search(r"bootstrap run /etc/bootstrap/recipe\.toml --venv \S+ --no-device --skip slow </dev/null",
                     dockerfile), dockerfile
    defaults = (ctx / "bootstrap/etc/env").read_text()
    print("\n/etc/bootstrap/env:\n" + defaults)
    assert f"BS_MEGATRON_DIR='{megatron}'\n" in defaults
    assert "\nsecret HF_TOKEN uses-token\n" in defaults and "\nskip slow\n" in defaults
    assert f"\nvenv {venv}\n" in defaults and "\nno-device\n" in defaults
    assert SECRET_VALUE not in defaults and SECRET_VALUE not in dockerfile
    assert "/etc/bootstrap/{recipe.toml,manifest.json,env}" in ok(world.run(["containerfile", "--help"])).stdout
    assert "the build reads HF_TOKEN from a build secret" in proc.stdout

    build_in_place(world, ctx, venv, home)
    assert (venv / ".bootstrap/sealed").read_text().endswith("build_time 1970-01-01T00:00:00Z\n")
    image_recipe_file = ctx / "bootstrap/etc/recipe.toml"
    env = container_env(ctx)

    # The command, in the container: exit 0, every step up to date.
    check = world.run(["plan", image_recipe_file, "--venv", venv, "--check"], env=env)
    print(f"plan --check: rc={check.returncode}\n{check.stdout}{check.stderr}")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "would re-verify" not in check.stdout
    assert "step 'uses-token' needs HF_TOKEN, a secret this image does not keep" in check.stdout + check.stderr
    # The recorded venv and --skip apply to the image's recipe: the same plan without options.
    assert world.run(["plan", image_recipe_file, "--check"], env=env).returncode == 0

    # The first run in the container is a no-op that writes nothing into the venv.
    before = tree_state(venv)
    first = world.run(["run", image_recipe_file, "--venv", venv], env=env)
    print(f"first run: rc={first.returncode}\n{first.stdout}{first.stderr}")
    ok(first)
    changed = changes(before, tree_state(venv))
    print(f"files the first run changed in the venv: {len(changed)} {sorted(changed)}")
    assert changed == set()
    assert world.run(["plan", image_recipe_file, "--venv", venv, "--check"], env=env).returncode == 0

    # Dates the build recorded (SOURCE_DATE_EPOCH=0) read as the build's, not 1970.
    history = ok(world.run(["history", "--venv", venv], env=env)).stdout
    assert "during the image build" in history and "1970-01-01" not in history, history
    ok(world.run(["doctor", "--venv", venv, "--recipe", image_recipe_file], env=env))

    # The container's own environment overrides the image's defaults: another checkout changes
    # the step that reads it.
    other = tmp_path / "other-megatron"
    other.mkdir()
    moved = world.run(["plan", image_recipe_file, "--venv", venv, "--check"], env={**env, "BS_MEGATRON_DIR": str(other)})
    assert moved.returncode == 1, moved.stdout + moved.stderr
    assert re.search(r"\] megatron \(run\)\n +would run: step changed: argv", moved.stdout), moved.stdout

    # A step that needs the secret is refused before it runs, naming the variable.
    refused = world.run(["run", image_recipe_file, "--venv", venv, "--only", "uses-token", "--force"], env=env)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "step 'uses-token' needs HF_TOKEN" in refused.stderr
    # Given in the container, it runs.
    ok(world.run(["run", image_recipe_file, "--venv", venv, "--only", "uses-token", "--force"],
                 env={**env, "HF_TOKEN": SECRET_VALUE}))


def test_a_malformed_image_defaults_file_is_an_error_naming_its_line(world, tmp_path):
    recipe = R.write_recipe(world.root, steps=[R.venv()])
    bad = tmp_path / "env"
    bad.write_text("# image defaults\nBS_X=unquoted\n")
    proc = world.run(["plan", recipe], env={"BOOTSTRAP_IMAGE_ENV": str(bad)})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{bad}:2: the value of BS_X is not single-quoted" in proc.stderr
