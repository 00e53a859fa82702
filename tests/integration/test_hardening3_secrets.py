"""Hardening, round three (issue 41), items 1 and 9: each case reproduces what the issue found.

1. A declared secret in a run step's argv (`{env.MY_TOKEN}`, whole or inside "--token=VALUE") is
   `***` in `plan` (text, --json, --explain), `-vv` stderr, the journal's key inputs,
   bootstrap.log, the step log's `$ argv` line, a failure's message, the `pack` archive and a
   sealed venv; the child still gets the value, and rotating it re-runs nothing.
9. `unpack` refuses a pack with a changed file or a duplicate entry, naming it; `relocate` refuses
   a directory that is not a venv; a `{env.PORT}` port is shown as it is.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import recipes as R
from test_secrets import files_under

TOKEN = "tok-Xy7Qm2Lp9Zr"
ROTATED = "tok-Rotated5Kw"

# The child checks it got the real value, whole and inside a longer word, and prints it (masked).
CHECK_ARGV = (
    "import hashlib, sys; tok = sys.argv[1]; print('child saw', tok); "
    "ok = hashlib.sha256(tok.encode()).hexdigest() == sys.argv[3] and sys.argv[2] == '--token=' + tok; "
    "sys.exit(0 if ok else 7)")


def token_recipe(world, name: str = "secret-argv.toml", fail: bool = False) -> Path:
    script = CHECK_ARGV.replace("sys.exit(0 if ok", "sys.exit(3 if ok") if fail else CHECK_ARGV
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    steps = [R.venv(), R.run("uses-token", ["python3", "-c", script, "{env.MY_TOKEN}", "--token={env.MY_TOKEN}",
                                            digest])]
    return R.write_recipe(world.root, name, steps=steps, env={"secret": ["MY_TOKEN"]})


def test_a_declared_secret_in_a_run_steps_argv_is_never_shown_or_stored(world):
    """Item 1."""
    home = world.root / "home"
    world.env["BOOTSTRAP_HOME"] = str(home)
    world.env["MY_TOKEN"] = TOKEN
    recipe = token_recipe(world)
    outputs = []

    def run(args, rc=0, env=None):
        proc = world.run(args, env=env)
        outputs.append(proc.stdout + proc.stderr)
        assert proc.returncode == rc, f"{args}: {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    plan = run(["plan", recipe])
    assert "*** --token=***" in plan.stdout, plan.stdout
    run(["plan", recipe, "--json"])
    run(["plan", recipe, "--explain"])
    proc = run([recipe, "-vv"])  # the child checks it got the value
    assert "--token=***" in proc.stderr, proc.stderr
    journal = world.journal()
    key = journal["steps"]["uses-token"]["key"]
    assert "--token=***" in str(journal["steps"]["uses-token"]), journal["steps"]["uses-token"]
    [step_log] = [p for p in (world.venv / ".bootstrap" / "logs").rglob("*uses-token*") if p.is_file()]
    log_text = step_log.read_text()
    assert "$ " in log_text and "--token=***" in log_text and "child saw ***" in log_text, log_text

    # Rotating the token re-runs nothing: the key holds "***", not the value.
    proc = run([recipe, "-v"], env={"MY_TOKEN": ROTATED})
    assert world.journal()["steps"]["uses-token"]["key"] == key
    run(["plan", recipe, "--explain"], env={"MY_TOKEN": ROTATED})

    # A failing step's error shows its command line.
    failing = token_recipe(world, "failing.toml", fail=True)
    proc = run([failing, "--force"], rc=1)
    assert "--token=***" in proc.stderr, proc.stderr
    run([failing, "--force", "--json"], rc=1)

    pack = world.root / "env.tar.zst"
    run(["pack", "--venv", world.venv, "-o", pack])
    unpacked = world.root / "packed"
    unpacked.mkdir()
    subprocess.run(["tar", "--zstd", "-xf", pack, "-C", unpacked], check=True)
    run(["seal", "--venv", world.venv])

    searched = 0
    for path in files_under(world.venv / ".bootstrap", home, unpacked):
        searched += 1
        for secret in (TOKEN, ROTATED):
            assert secret.encode() not in path.read_bytes(), f"{secret} found in {path}"
    assert searched > 5
    for text in outputs:
        for secret in (TOKEN, ROTATED):
            assert secret not in text, f"{secret} in output:\n{text}"


def test_a_port_is_shown_while_a_real_secret_stays_masked(world):
    """Item 9: `{env.PORT}` given to a child as AUTH_SERVER_PORT (a secret-looking name) made
    every "127.0.0.1:8080" it printed read "127.0.0.1:***"; a token beside it stays ***."""
    secret = "auth-tok-5Hq8Zm"
    script = 'echo "listening on 127.0.0.1:$AUTH_SERVER_PORT with $AUTH_TOKEN"'
    recipe = R.write_recipe(world.root, "port.toml", steps=[R.venv(), R.run("serve", ["sh", "-c", script])],
                            env={"set": {"AUTH_SERVER_PORT": "{env.PORT}", "AUTH_TOKEN": "{env.REAL_TOKEN}"}})
    env = {"PORT": "8080", "REAL_TOKEN": secret}
    plan = world.run(["plan", recipe], env=env)
    assert plan.returncode == 0, plan.stderr
    assert "AUTH_SERVER_PORT=8080" in plan.stdout and "AUTH_TOKEN=***" in plan.stdout, plan.stdout
    proc = world.run([recipe, "-v"], env=env)
    assert proc.returncode == 0, proc.stderr
    [step_log] = [p for p in (world.venv / ".bootstrap" / "logs").rglob("*serve*") if p.is_file()]
    assert "listening on 127.0.0.1:8080 with ***" in step_log.read_text(), step_log.read_text()
    assert "listening on 127.0.0.1:8080 with ***" in proc.stdout + proc.stderr
    assert secret not in proc.stdout + proc.stderr + step_log.read_text()


def test_unpack_refuses_a_pack_with_a_changed_file_naming_it(world):
    """Item 9: a file changed inside a pack (its RECORD, hence the manifest's digest, untouched)
    was unpacked as "N packages match the manifest"; now refused, naming package and file."""
    from test_pack import assert_nothing_left, packed_venv, repack

    pack = packed_venv(world)

    def change_a_byte(d: Path):
        (init,) = list(d.glob("venv/lib/python*/site-packages/regex/__init__.py"))
        data = bytearray(init.read_bytes())
        data[0] = ord("#") if data[0] != ord("#") else ord(" ")
        init.write_bytes(bytes(data))

    dest = world.root / "dest"
    proc = world.run(["unpack", repack(world, pack, change_a_byte), dest])
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "does not match its manifest" in proc.stderr, proc.stderr
    assert "regex" in proc.stderr and "regex/__init__.py (content differs)" in proc.stderr, proc.stderr
    assert "pack the venv again" in proc.stderr
    assert "match the manifest" not in proc.stdout
    assert_nothing_left(dest)

    # The untouched pack still unpacks, every file checked.
    proc = world.run(["unpack", pack, dest])
    assert proc.returncode == 0, proc.stderr
    assert "file(s) match the manifest and RECORDs" in proc.stdout, proc.stdout


def test_unpack_refuses_a_pack_with_a_duplicate_entry_naming_it(world):
    """Item 9: a tar member listed twice was extracted twice (the later copy won, unseen)."""
    from test_pack import assert_nothing_left, packed_venv

    pack = packed_venv(world)
    d = world.root / "dup"
    d.mkdir()
    subprocess.run(["tar", "--zstd", "-xf", pack, "-C", d], check=True)
    plain = world.root / "dup.tar"
    subprocess.run(["tar", "-cf", plain, "-C", d, "."], check=True)
    subprocess.run(["tar", "-rf", plain, "-C", d, "./venv/pyvenv.cfg"], check=True)  # a second copy
    dup = world.root / "dup.tar.zst"
    subprocess.run(["zstd", "-q", plain, "-o", dup], check=True)

    dest = world.root / "dest"
    proc = world.run(["unpack", dup, dest])
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "refusing unsafe entry './venv/pyvenv.cfg'" in proc.stderr, proc.stderr
    assert "a second entry for the same path" in proc.stderr
    assert_nothing_left(dest)


def test_relocate_refuses_a_directory_that_is_not_a_venv(world):
    """Item 9: `relocate --venv DIR` rewrote the shebangs of any bin/ with an activate script."""
    tools = world.root / "tools"
    (tools / "bin").mkdir(parents=True)
    (tools / "bin" / "activate").write_text("VIRTUAL_ENV=/old/place\n")
    script = tools / "bin" / "tool"
    script.write_text("#!/old/place/bin/python\nprint('hi')\n")
    proc = world.run(["relocate", "--venv", tools])
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert f"{tools} is not a venv (it has no pyvenv.cfg)" in proc.stderr, proc.stderr
    assert "the one that holds pyvenv.cfg" in proc.stderr
    assert script.read_text() == "#!/old/place/bin/python\nprint('hi')\n"
