"""No secret reaches a file, a log or the screen.

A recipe whose index URL carries `user:PASSWORD@` and whose [env] sets a token from the
caller's environment is run, re-run, planned (text, --json, --explain), locked, snapshotted,
made to fail, and built from source; then every file under the venv's `.bootstrap/`,
`$BOOTSTRAP_HOME`, the lockfile, the saved snapshot and every stdout/stderr are searched for
the password and the token. The real values must still reach the children that need them.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

import recipes as R
from test_build import build_step

PASSWORD = "Pa55w0rdXyZ"
TOKEN = "hf_T0k3nQwErTy"
CALLER_PASSWORD = "CallerSecretQq"


def files_under(*roots: Path):
    for root in roots:
        if root.is_file():
            yield root
        elif root.exists():
            yield from (p for p in root.rglob("*") if p.is_file())


def test_no_secret_in_files_logs_or_output(world, sources):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    home = world.root / "home"
    world.env["BOOTSTRAP_HOME"] = str(home)
    world.env["MY_TOKEN"] = TOKEN
    # The caller's own installer configuration carries a password too (plan --explain used to
    # print inherited PIP_* values).
    world.env["PIP_INDEX_URL"] = world.index.url().replace("http://", f"http://ci:{CALLER_PASSWORD}@")
    url = world.index.url().replace("http://", f"http://deploy:{PASSWORD}@")
    tree = world.root / "fastext"
    shutil.copytree(sources["tree"], tree)
    world.build_log = world.root / "builds.log"
    steps = [
        R.venv(),
        R.install("core", ["demo-core"], index_url=url, verify=[R.imp("demo_core")]),
        # The child gets the real token.
        R.run("uses-token", ["python", "-c",
                             "import hashlib, os, sys; sys.exit(0 if hashlib.sha256(os.environ['HF_TOKEN'].encode())"
                             f".hexdigest() == {hashlib.sha256(TOKEN.encode()).hexdigest()!r} else 7)"]),
        build_step(world, {"path": str(tree)}, env={"API_KEY": "{env.MY_TOKEN}"}),
    ]
    env = {"set": {"HF_TOKEN": "{env.MY_TOKEN}"}, "secret": ["MY_TOKEN"]}
    recipe = R.write_recipe(world.root, steps=steps, env=env)

    outputs = []

    def run(args, rc=0):
        proc = world.run(args)
        outputs.append(proc.stdout + proc.stderr)
        assert proc.returncode == rc, f"{args}: {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    run([recipe])
    run([recipe])
    plan = run(["plan", recipe])
    assert "deploy:***@" in plan.stdout and "HF_TOKEN=***" in plan.stdout
    run(["plan", recipe, "--json"])
    run(["plan", recipe, "--explain"])
    run([recipe, "--json", "--force", "--only", "core"])
    lockfile = world.root / "itest.lock.json"
    run(["lock", recipe, "-o", lockfile])
    saved = world.root / "saved.json"
    run(["snapshot", "--venv", world.venv, "-o", saved])
    run(["history", "--venv", world.venv])
    run(["diff", "1", "last", "--venv", world.venv])

    # A failing install through the same credentialed index: the error, its command line and
    # its log tail, in text and --json.
    failing = R.write_recipe(world.root, "failing.toml",
                             steps=[R.venv(), R.install("bad", ["no-such-dist"], index_url=url)], env=env)
    run([failing], rc=1)
    run([failing, "--json"], rc=1)
    run([recipe, "--rollback-on-failure", "--only", "core", "--force"])

    searched = 0
    for path in files_under(world.venv / ".bootstrap", home, lockfile, saved):
        data = path.read_bytes()
        searched += 1
        for secret in (PASSWORD, TOKEN, CALLER_PASSWORD):
            assert secret.encode() not in data, f"{secret} found in {path}"
    assert searched > 20
    for text in outputs:
        for secret in (PASSWORD, TOKEN, CALLER_PASSWORD):
            assert secret not in text, f"{secret} in output:\n{text}"
    # The credentialed index was recorded, without its password.
    journal = world.journal()
    assert journal["steps"]["core"]["index_urls"] == [url.replace(PASSWORD, "***")]
    # The build's key names the secret variable but not its value.
    [inputs] = list((home / "builds").glob("*/inputs.txt"))
    assert "API_KEY=***" in inputs.read_text() and "HF_TOKEN=***" in inputs.read_text()
