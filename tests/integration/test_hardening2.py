"""Hardening, round two (issue 23): each case reproduced what the issue found on the code before
it, and now gets a clear error naming what and where, with nothing lost.

1. `--recreate` never replaces the contents of `/`, the home directory (a fake $HOME here), the
   recipe's directory or an ancestor of one of them, nor a directory that is not a venv;
   an empty venv path is an error at its line.
4. Exponential `[vars]` expansion stops with a file:line error, in a run bounded by prlimit.
5. A recipe that is a device (or a symlink to one) is refused at once, in a bounded run.
3. `containerfile` keeps the recipe's secrets out of the image (refused, or given as build secrets).
6. `containerfile` refuses values with line breaks (they would add Dockerfile instructions).
8. A step timeout of inf, 1e308 or 1e10 is refused at its line.
10. A directory source never reaches /proc, /sys or /dev; a blocking file:// fails at once; `lock`
    has an overall deadline and exits 130 on SIGINT.
11. Secret values are masked in child output, logs and errors.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time
from pathlib import Path

import recipes as R

GIB = 1 << 30


def limited(max_bytes: int):
    """preexec_fn: cap the child's address space (prlimit --as)."""
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))
    return apply


def run_bounded(world, args, max_bytes=2 * GIB, timeout=30) -> subprocess.CompletedProcess:
    return subprocess.run(world.cmd(args), env=world.full_env(), cwd=world.root, timeout=timeout,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          preexec_fn=limited(max_bytes))


def recipe_text(path: str, steps: str = '[[step]]\nid = "venv"\nkind = "venv"\n') -> str:
    return f'schema = 1\nname = "h"\n[venv]\npath = "{path}"\npython = "3.11"\n{steps}'


def test_recreate_refuses_the_home_directory_and_keeps_every_file(world, tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE\n")
    (home / "notes.txt").write_text("mine\n")
    recipe = world.root / "home.toml"
    recipe.write_text(recipe_text("~"))
    env = {"HOME": str(home)}
    for args in (["plan", recipe, "--recreate"], [recipe, "--recreate"]):
        proc = world.run(args, env=env)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert f"refusing to replace the contents of {home}" in proc.stderr, proc.stderr
        assert "it is the home directory" in proc.stderr
        assert "home.toml:" in proc.stderr  # where the venv step is
    assert (home / ".ssh" / "id_rsa").read_text() == "PRIVATE\n"
    assert sorted(p.name for p in home.iterdir()) == [".ssh", "notes.txt"]
    assert not (home / "pyvenv.cfg").exists()


def test_root_the_recipes_directory_and_a_foreign_directory_are_never_replaced(world, tmp_path):
    recipe = world.root / "root.toml"
    recipe.write_text(recipe_text("/"))
    proc = world.run(["plan", recipe, "--recreate"])
    assert proc.returncode == 2 and "it is the root of the file system" in proc.stderr, proc.stderr

    recipe.write_text(recipe_text("."))  # the recipe's own directory
    proc = world.run([recipe, "--recreate"])
    assert proc.returncode == 2 and "it is the recipe's directory" in proc.stderr, proc.stderr
    assert recipe.exists()

    recipe.write_text(recipe_text(".."))  # an ancestor of it
    proc = world.run(["plan", recipe, "--recreate"])
    assert proc.returncode == 2 and "an ancestor of the recipe's directory" in proc.stderr, proc.stderr

    # Someone's directory (no pyvenv.cfg, no bootstrap state): not even --recreate replaces it.
    data = tmp_path / "data"
    data.mkdir()
    (data / "results.csv").write_text("1,2\n")
    recipe.write_text(recipe_text(str(data)))
    proc = world.run([recipe, "--recreate"])
    assert proc.returncode == 2, proc.stderr
    assert "is not a venv (no pyvenv.cfg)" in proc.stderr and "never deletes" in proc.stderr, proc.stderr
    assert (data / "results.csv").read_text() == "1,2\n"


def test_an_empty_venv_path_is_an_error_at_its_line(world):
    recipe = world.root / "empty.toml"
    for value in ("", "{env.BOOTSTRAP_TEST_UNSET:-}"):
        recipe.write_text(recipe_text(value))
        proc = world.run(["plan", recipe])
        assert proc.returncode == 2, proc.stderr
        line, _ = R.line_of(recipe, "path =")
        assert f"empty.toml:{line}:" in proc.stderr and "[venv] path is empty" in proc.stderr, proc.stderr


def test_exponential_vars_stop_at_the_value_cap_in_a_bounded_run(world):
    levels = ['a0 = "xxxxxxxxxxxxxxxx"'] + [f'a{i} = "{{vars.a{i - 1}}}{{vars.a{i - 1}}}"' for i in range(1, 31)]
    recipe = world.root / "bomb.toml"
    recipe.write_text(recipe_text(str(world.venv), '[[step]]\nid = "r"\nkind = "run"\nargv = ["echo", "{vars.a30}"]\n')
                      .replace("[venv]", "[vars]\n" + "\n".join(levels) + "\n[venv]"))
    start = time.monotonic()
    proc = run_bounded(world, ["plan", recipe], max_bytes=1 * GIB)
    assert time.monotonic() - start < 10
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "expands to more than 64 KiB" in proc.stderr, proc.stderr
    assert "bomb.toml:" in proc.stderr


def test_a_device_is_no_recipe_and_is_refused_at_once(world):
    link = world.root / "zero.toml"
    link.symlink_to("/dev/zero")
    for target in ("/dev/zero", link):
        valid = R.write_recipe(world.root, "valid.toml", steps=[R.venv()])
        for command in (["plan"], ["lint", "--recipe", valid], []):
            start = time.monotonic()
            proc = run_bounded(world, [*command, target], max_bytes=1 * GIB, timeout=20)
            assert time.monotonic() - start < 10
            assert proc.returncode in (1, 2), (command, target, proc.returncode, proc.stderr)
            assert "not a regular file (a character device)" in proc.stderr, (command, proc.stderr)
    for command in (["explain"], ["fleet", "diff"]):
        proc = run_bounded(world, [*command, "/dev/zero", *(["/dev/zero"] if command[0] == "fleet" else [])],
                           max_bytes=1 * GIB, timeout=20)
        assert proc.returncode in (1, 2) and "not a regular file" in proc.stderr, (command, proc.stderr)


def test_a_step_timeout_past_30_days_is_refused_at_its_line(world):
    recipe = world.root / "t.toml"
    for value, shown in (("inf", "not inf"), ("1e308", "at most 2592000 (30 days)"), ("1e10", "at most 2592000")):
        recipe.write_text(recipe_text(str(world.venv), f'[[step]]\nid = "r"\nkind = "run"\nargv = ["true"]\n'
                                                        f'timeout = {value}\n'))
        proc = world.run(["plan", recipe])
        assert proc.returncode == 2, proc.stderr
        line, _ = R.line_of(recipe, "timeout =")
        assert f"t.toml:{line}:" in proc.stderr and shown in proc.stderr, proc.stderr


def test_containerfile_refuses_line_breaks_in_what_it_writes(world, tmp_path):
    recipe = world.root / "img.toml"
    recipe.write_text(recipe_text("/opt/venv", '[[step]]\nid = "venv"\nkind = "venv"\n'))
    base = ["containerfile", recipe, "--no-device", "--uv", world.uv]
    cases = [
        (["--base", "debian:12\nRUN touch /PWNED"], "--base"),
        (["--env", "FOO=a\nRUN touch /PWNED"], "--env FOO"),
        (["--venv", "/opt/v\nRUN touch /PWNED"], "--venv"),
    ]
    for i, (extra, named) in enumerate(cases):
        out = tmp_path / f"ctx{i}"
        proc = world.run([*base, "-o", out, *extra])
        assert proc.returncode == 2, (extra, proc.stdout, proc.stderr)
        assert named in proc.stderr and "control character" in proc.stderr, proc.stderr
        assert not (out / "Dockerfile").exists()
    out = tmp_path / "ok"
    proc = world.run([*base, "-o", out, "--venv", "/opt/my venv"])
    assert proc.returncode == 0, proc.stderr
    text = (out / "Dockerfile").read_text()
    assert 'ENV VIRTUAL_ENV="/opt/my venv" PATH="/opt/my venv/bin:' in text
    assert "PWNED" not in text


def test_containerfile_keeps_recipe_secrets_out_of_the_image(world, tmp_path):
    """Item 3: the recipe is copied into the image, so a URL with credentials written in it or a
    secret variable set to a literal value is refused at its line, naming `--secret`; read from
    the environment and given as a build secret, the value reaches neither the context nor the
    Dockerfile, which mounts the secret for the RUN."""
    url = world.index.url().replace("://", "://alice:{}@", 1)
    venv = '[[step]]\nid = "venv"\nkind = "venv"\n'

    def attempt(name, steps, *extra, env=None):
        recipe = world.root / f"{name}.toml"
        recipe.write_text(recipe_text("/opt/venv", venv + steps))
        out = tmp_path / name
        proc = world.run(["containerfile", recipe, "--no-device", "--uv", world.uv, "-o", out, *extra], env=env)
        return recipe, out, proc

    install = '[[step]]\nid = "deps"\nkind = "install"\npackages = ["demo-core"]\nindex_url = "{}"\n'
    recipe, out, proc = attempt("literal-url", install.format(url.format("s3cr3t-pa55")))
    assert proc.returncode == 2 and not out.exists(), proc.stderr
    line = R.line_of(recipe, "index_url")[0]
    assert f"literal-url.toml:{line}: a URL with credentials" in proc.stderr, proc.stderr
    assert "--secret" in proc.stderr and "s3cr3t-pa55" not in proc.stderr

    recipe, out, proc = attempt("literal-env", '[env]\nset = { HF_TOKEN = "hf_abcdef123" }\n')
    assert proc.returncode == 2 and not out.exists(), proc.stderr
    line = R.line_of(recipe, "HF_TOKEN")[0]
    assert f"literal-env.toml:{line}:" in proc.stderr and "sets HF_TOKEN, a secret" in proc.stderr, proc.stderr
    assert "--secret HF_TOKEN" in proc.stderr and "hf_abcdef123" not in proc.stderr

    from_env = install.format(url.format("{env.PYPI_TOKEN}")) + '[env]\nset = { HF_TOKEN = "{env.HF_TOKEN}" }\n'
    secrets = {"PYPI_TOKEN": "s3cr3t-pa55", "HF_TOKEN": "hf_abcdef123"}
    recipe, out, proc = attempt("no-secret-flag", from_env, env=secrets)
    assert proc.returncode == 2 and "--secret" in proc.stderr, proc.stderr
    recipe, out, proc = attempt("given", from_env, "--secret", "PYPI_TOKEN", "--secret", "HF_TOKEN", env=secrets)
    assert proc.returncode == 0, proc.stderr
    assert "--secret id=PYPI_TOKEN,src=FILE --secret id=HF_TOKEN,src=FILE -t IMAGE" in proc.stdout, proc.stdout
    dockerfile = (out / "Dockerfile").read_text()
    assert "--mount=type=secret,id=HF_TOKEN" in dockerfile and 'HF_TOKEN="$(cat /run/secrets/HF_TOKEN)"' in dockerfile
    for path in out.rglob("*"):
        if path.is_file() and path.stat().st_size < (1 << 20):
            text = path.read_text(errors="replace")
            assert "s3cr3t-pa55" not in text and "hf_abcdef123" not in text, path
    recipe, out, proc = attempt("not-secret", from_env, "--secret", "PYPI_TOKEN", "--secret", "HF_TOKEN",
                                "--secret", "MAX_JOBS", env=secrets)
    assert proc.returncode == 2 and "--secret MAX_JOBS: not a secret name" in proc.stderr, proc.stderr


def test_secret_values_are_masked_in_child_output_logs_and_errors(world):
    """Item 11: what a step prints of a secret it was given (a secret-named variable, a name in
    `[env] secret`, a URL's password; also split across writes) is *** on the screen, in its log,
    in bootstrap.log and in the failure's output tail."""
    secrets = {"HF_TOKEN": "hf-live-token-771", "DB_WORD": "plain-but-secret-88"}
    script = ('echo "token $HF_TOKEN word $DB_WORD url $MIRROR"; printf "split hf-live-"; sleep 0.3; '
              'printf "token-771 done\\n"; exit 3')
    steps = [R.run("say", ["sh", "-c", script],
                   env={"HF_TOKEN": "{env.HF_TOKEN}", "MIRROR": "https://bob:pa55-word-99@mirror.example/simple"})]
    recipe = R.write_recipe(world.root, "say.toml", steps=[R.venv(), *steps])
    text = recipe.read_text().replace(
        "[[step]]", '[env]\nsecret = ["DB_WORD"]\nset = { DB_WORD = "{env.DB_WORD}" }\n\n[[step]]', 1)
    recipe.write_text(text)
    proc = world.run([recipe, "-v"], env=secrets)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    shown = proc.stdout + proc.stderr
    assert "token *** word *** url https://bob:***@mirror.example/simple" in shown, shown
    assert "split *** done" in shown, shown
    written = [p.read_text(errors="replace") for p in (world.venv / ".bootstrap").rglob("*")
               if p.is_file() and p.name != "lock"]
    assert any("split *** done" in t for t in written)
    for text in [shown, *written]:
        for value in (*secrets.values(), "pa55-word-99"):
            assert value not in text


def test_a_chain_of_rollbacks_stays_restorable(world):
    """Item 7: a manifest a rollback wrote keeps its packages' index origins, so rolling back to
    it (and to the next one) works at any depth of the chain."""
    url = world.index.url()
    a = R.write_recipe(world.root, "a.toml", steps=[R.venv(), R.install("core", ["demo-core==1.0.0"], index_url=url)])
    b = R.write_recipe(world.root, "b.toml", steps=[R.venv(), R.install("core", ["demo-core==2.0.0"], index_url=url)])
    assert world.run([a]).returncode == 0
    assert world.run([b]).returncode == 0

    def numbers():
        return [int(p.name.split("-")[0]) for p in sorted((world.venv / ".bootstrap" / "history").glob("*.json"))]

    first, second = numbers()[0], numbers()[-1]
    targets = [first, second]
    for _ in range(4):  # to A, to B, then to the entries those rollbacks wrote, twice over
        target = targets[-2]
        proc = world.run(["rollback", "--venv", world.venv, "--to", str(target)])
        assert proc.returncode == 0, (target, proc.stdout, proc.stderr)
        targets.append(numbers()[-1])
        written = json.loads(sorted((world.venv / ".bootstrap" / "history").glob("*.json"))[-1].read_text())
        assert written["packages"]["demo-core"]["origin"]["index_urls"] == [url], written["packages"]["demo-core"]
    proc = world.run(["rollback", "--venv", world.venv, "--to", "last~1"])
    assert proc.returncode == 0, proc.stderr


def test_credentials_in_a_build_sources_url_are_never_shown_or_written(world):
    """Item 2: plan, plan --json, plan --explain, the run's output, its step log and the journal
    show a git source's URL with its password as ***."""
    secret = "s3cr3t-pa55"
    steps = [R.venv(), {"id": "ext", "kind": "build", "abi_packages": [],
                        "source": {"git": f"https://alice:{secret}@127.0.0.1:9/ext.git", "rev": "a" * 40}}]
    recipe = R.write_recipe(world.root, "creds.toml", steps=steps)
    outputs = []
    for args in (["plan", recipe], ["plan", recipe, "--json"], ["plan", recipe, "--explain"]):
        proc = world.run(args)
        assert proc.returncode == 0, (args, proc.stderr)
        outputs.append(proc.stdout + proc.stderr)
    assert "https://alice:***@127.0.0.1:9/ext.git" in outputs[0], outputs[0]
    proc = world.run([recipe], env={"BOOTSTRAP_BACKOFF_BASE": "0"})
    assert proc.returncode != 0  # nothing listens there
    outputs.append(proc.stdout + proc.stderr)
    state = world.venv / ".bootstrap"
    written = [p.read_text(errors="replace") for p in state.rglob("*") if p.is_file() and p.name != "lock"]
    for text in outputs + written:
        assert secret not in text


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_pack_and_unpack_remove_what_a_killed_one_left(world, tmp_path):
    """Item 9: a pack or unpack killed by SIGKILL leaves its temporaries; the next one removes
    those of dead processes (only its own kind, never a live process's)."""
    recipe = R.write_recipe(world.root, steps=[R.venv()])
    assert world.run([recipe]).returncode == 0
    out_dir = tmp_path / "packs"
    out_dir.mkdir()
    pid = dead_pid()
    leftover = out_dir / f"env.tar.zst.tmp-{pid}-AbC123"
    leftover.write_bytes(b"\0" * 4096)
    live = out_dir / f"env.tar.zst.tmp-{os.getpid()}-XyZ789"  # this test's: alive
    live.write_bytes(b"")
    other = out_dir / f"notes.txt.tmp-{pid}-AbC123"  # not a pack's
    other.write_bytes(b"")
    pack = out_dir / "env.tar.zst"
    proc = world.run(["pack", "--venv", world.venv, "-o", pack])
    assert proc.returncode == 0, proc.stderr
    assert not leftover.exists() and live.exists() and other.exists()

    dest = tmp_path / "unpacked"
    staging = tmp_path / f".unpacked.unpack-{dead_pid()}"
    (staging / "tree").mkdir(parents=True)
    (staging.parent / f"{staging.name}.tmp-1").mkdir()
    proc = world.run(["unpack", pack, dest])
    assert proc.returncode == 0, proc.stderr
    assert not staging.exists() and not (staging.parent / f"{staging.name}.tmp-1").exists()
    assert (dest / "pyvenv.cfg").exists()


def test_a_directory_source_never_reaches_proc_sys_or_dev(world):
    """Item 10: a build source whose path climbs to / (and so to /proc/kmsg) is refused at its
    line at once, by plan and by run; nothing hangs."""
    deep = world.root / "a" / "b" / "c"
    deep.mkdir(parents=True)
    steps = [R.venv(), {"id": "ext", "kind": "build", "abi_packages": [], "source": {"path": "../" * 12}}]
    recipe = R.write_recipe(deep, "up.toml", steps=steps)
    for args in (["plan", recipe], [recipe]):
        start = time.monotonic()
        proc = run_bounded(world, args, timeout=60)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert time.monotonic() - start < 30
        line = R.line_of(recipe, "source")[0]
        assert f"up.toml:{line}" in proc.stderr and "step 'ext': source tree / reaches /" in proc.stderr, proc.stderr


def test_plan_rejects_a_subdirectory_outside_the_source_as_run_does(world):
    """Item 11: `plan` refuses what `run` refuses, at the key's line."""
    src = world.root / "src"
    src.mkdir()
    (src / "setup.py").write_text("")
    steps = [R.venv(), {"id": "ext", "kind": "build", "abi_packages": [],
                        "source": {"path": str(src), "subdirectory": "../../../../etc"}}]
    recipe = R.write_recipe(world.root, "sub.toml", steps=steps)
    for args in (["plan", recipe], [recipe]):
        proc = world.run(args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "source.subdirectory '../../../../etc' must stay inside the source tree" in proc.stderr
        assert "sub.toml:" in proc.stderr


def test_a_file_url_that_would_block_fails_at_once(world, tmp_path):
    """Item 10: `file:///proc/kmsg` (blocks forever on read) and a FIFO without a writer are
    refused before anything reads them, well inside the step's timeout."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for url, why in (("file:///proc/kmsg", "/proc/kmsg is a file of the kernel's proc filesystem"),
                     (f"file://{fifo}", f"{fifo} is not a regular file (a FIFO)")):
        steps = [R.venv(), {"id": "ext", "kind": "build", "abi_packages": [], "timeout": 20,
                            "source": {"url": url, "sha256": "0" * 64}}]
        recipe = R.write_recipe(world.root, "kmsg.toml", steps=steps)
        start = time.monotonic()
        proc = run_bounded(world, [recipe], timeout=60)
        assert proc.returncode == 1, proc.stderr
        assert why in proc.stderr, proc.stderr
        assert time.monotonic() - start < 15


def test_lock_has_an_overall_deadline_and_exits_130_on_sigint(world):
    """Item 10: an index page that trickles (20 B/s) stops `lock` at its --timeout with an error
    naming the page and writing nothing; SIGINT stops it with 130."""
    url = world.index.url()
    recipe = R.write_recipe(world.root, "slow.toml", steps=[R.venv(), R.install("core", ["demo-core==1.0.0"],
                                                                                 index_url=url)])
    assert world.run([recipe]).returncode == 0
    out = world.root / "slow.lock.json"
    world.index.set_faults([{"match": "/main/simple/demo-core", "kind": "trickle", "rate": 20}])
    try:
        start = time.monotonic()
        proc = world.run(["lock", recipe, "-o", out, "--timeout", "3"])
        took = time.monotonic() - start
        assert proc.returncode == 1, proc.stderr
        assert "lock ran out of its time (3 s, --timeout) while fetching" in proc.stderr, proc.stderr
        assert "/main/simple/demo-core/" in proc.stderr
        assert took < 20 and not out.exists()

        child = subprocess.Popen(world.cmd(["lock", recipe, "-o", out]), env=world.full_env(), cwd=world.root,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        child.send_signal(2)
        _, err = child.communicate(timeout=30)
        assert child.returncode == 130, err
        assert "interrupted" in err and not out.exists()
    finally:
        world.index.clear_faults()


def test_doctor_names_installed_files_that_differ_from_their_record(world):
    """Item 11: a file edited or removed after the install is an error naming the distribution,
    the file and the fix (the installer's reinstall of that version), which, run as printed,
    makes doctor clean again."""
    recipe = R.write_recipe(world.root, "files.toml", steps=[R.venv(), R.install("core", ["demo-core==1.0.0"],
                                                                                   index_url=world.index.url())])
    assert world.run([recipe]).returncode == 0
    doctor = ["doctor", "--venv", world.venv]
    clean = world.run(doctor)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "match their RECORD hashes" in clean.stdout, clean.stdout
    assert (world.venv / ".bootstrap" / "verified-files.cache").is_file()

    (site,) = list(world.venv.glob("lib/python*/site-packages"))
    module = next(p for p in (site / "demo_core").rglob("*.py"))
    module.write_text(module.read_text() + "\n# edited\n")
    rel = module.relative_to(site).as_posix()
    proc = world.run(doctor)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "demo-core 1.0.0: 1 of its installed files differs from its RECORD" in proc.stdout, proc.stdout
    assert f"{rel} (size" in proc.stdout or f"{rel} (content differs)" in proc.stdout, proc.stdout
    fix = next(line for line in proc.stdout.splitlines() if line.strip().startswith("fix: uv pip install"))
    assert "--reinstall demo-core==1.0.0" in fix, proc.stdout  # the version installed

    module.unlink()
    proc = world.run(doctor)
    assert proc.returncode == 3 and f"{rel} (missing)" in proc.stdout, proc.stdout

    # The fix, run as printed, repairs it.
    fixed = subprocess.run(fix.strip()[len("fix: "):], shell=True, env=world.full_env(), capture_output=True, text=True)
    assert fixed.returncode == 0, fixed.stderr
    again = world.run(doctor)
    assert again.returncode == 0 and "match their RECORD hashes" in again.stdout, again.stdout
