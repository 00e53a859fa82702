"""Hardening, round three (issue 41): what `bootstrap containerfile` carries of this machine.

2. A `[vars]` value naming a directory was copied whole into the context (and the image) whether
   or not a step read it: `logdir = "{env.HOME}"` carried ~/.ssh/id_ed25519 and the
   credentials beside it, `logdir = "/etc"` carried /etc (shadow included), exit 0. Now only
   what steps read is carried; `/`, a system directory or the home directory read whole is
   refused at the `[vars]` line (or the step's), and a credential file anywhere in a copy is
   refused, each named. Every HOME here is a fake one the test makes.
10. `-o ctx` (the README's own form, relative) wrote COPY destinations under the stage
   (`/…/.ctx.tmp-PID/bootstrap/etc/src/`) instead of `/etc/bootstrap/src/`.
"""

from __future__ import annotations

from pathlib import Path

VENV = '[[step]]\nid = "venv"\nkind = "venv"\n'


def recipe_text(body: str) -> str:
    return f'schema = 1\nname = "img"\n[venv]\npath = "/opt/venv"\npython = "3.11"\n{body}'


def fake_home(root: Path) -> Path:
    """A home directory holding what a real one does: keys, tokens, a keyring, notes."""
    home = root / "home" / "alice"
    for rel, text in {".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\n", ".ssh/known_hosts": "h\n",
                      ".netrc": "machine x login a password hunter2\n", ".pypirc": "[pypi]\npassword = p\n",
                      ".aws/credentials": "[default]\naws_secret_access_key = k\n",
                      ".docker/config.json": '{"auths": {"r": {"auth": "YTpi"}}}\n',
                      ".local/share/keyrings/login.keyring": "k\n", "notes.txt": "mine\n"}.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    return home


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def context_files(ctx: Path) -> list[str]:
    return sorted(str(p.relative_to(ctx)) for p in ctx.rglob("*"))


def containerfile(world, recipe: Path, out, cwd=None, env=None):
    return world.run(["containerfile", recipe, "--no-device", "--uv", world.uv, "-o", out], cwd=cwd, env=env)


def test_a_vars_value_naming_home_carries_none_of_it(world, tmp_path):
    """Item 2 as written: `logdir = "{env.HOME}"`. No step reads it: nothing of home reaches the
    context. A step that reads it whole: refused at the [vars] line, naming the step."""
    home = fake_home(tmp_path)
    env = {"HOME": str(home)}
    recipe = world.root / "logs.toml"
    recipe.write_text(recipe_text('[vars]\nlogdir = "{env.HOME}"\n' + VENV +
                                  '[[step]]\nid = "train"\nkind = "run"\nargv = ["sh", "-c", "echo {vars.logdir}"]\n'))
    proc = containerfile(world, recipe, tmp_path / "ctx", env=env)
    assert proc.returncode == 0, proc.stderr
    files = context_files(tmp_path / "ctx")
    assert not any(part in f for f in files for part in ("id_ed25519", ".netrc", ".pypirc", "credentials",
                                                          "config.json", "keyring", "notes.txt")), files
    assert not (tmp_path / "ctx" / "sources").exists() and "copied" not in proc.stdout, proc.stdout

    recipe.write_text(recipe_text('[vars]\nlogdir = "{env.HOME}"\n' + VENV +
                                  '[[step]]\nid = "train"\nkind = "run"\nargv = ["cp", "-r", "out", "{vars.logdir}"]\n'))
    proc = containerfile(world, recipe, tmp_path / "ctx2", env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = line_of(recipe, "logdir =")
    assert (f'logs.toml:{line}:10: [vars] logdir = "{home}" is the home directory, which step \'train\' reads whole '
            "(argv[3]): a build context never carries it whole") in proc.stderr, proc.stderr
    assert "name the directory the step reads" in proc.stderr
    assert not (tmp_path / "ctx2").exists()


def test_a_vars_value_naming_etc_is_refused(world, tmp_path):
    """Item 2: `logdir = "/etc"`, read by a step as its working directory and as an argument:
    refused at the [vars] line, nothing written. (/etc is never copied, only refused.)"""
    for n, step in enumerate(['argv = ["true"]\ncwd = "{vars.logdir}"\n', 'argv = ["cp", "x.log", "{vars.logdir}"]\n']):
        recipe = world.root / f"etc{n}.toml"
        recipe.write_text(recipe_text('[vars]\nlogdir = "/etc"\n' + VENV + '[[step]]\nid = "save"\nkind = "run"\n' + step))
        out = tmp_path / f"ctx{n}"
        proc = containerfile(world, recipe, out)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        line = line_of(recipe, "logdir =")
        assert f'etc{n}.toml:{line}:10: [vars] logdir = "/etc" is a system directory (/etc), which step \'save\'' \
            in proc.stderr, proc.stderr
        assert not out.exists() and not list(tmp_path.glob(f".ctx{n}.tmp-*"))


def test_credential_files_in_a_directory_a_step_reads_are_refused_each_named(world, tmp_path):
    """Item 2: a checkout a step runs in that holds credentials: each named (relative to the
    recipe) with its rule and the way out; moved out, the checkout is carried."""
    checkout = world.root / "checkout"
    (checkout / "keys" / ".ssh").mkdir(parents=True)
    (checkout / "train.py").write_text("print()\n")
    (checkout / ".netrc").write_text("machine x password hunter2\n")
    (checkout / "keys" / ".ssh" / "id_rsa").write_text("PRIVATE\n")
    recipe = world.root / "ck.toml"
    recipe.write_text(recipe_text(VENV + '[[step]]\nid = "train"\nkind = "run"\nargv = ["python3", "train.py"]\n'
                                         'cwd = "checkout"\n'))
    proc = containerfile(world, recipe, tmp_path / "ctx")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "2 credential files would be copied into the build context" in proc.stderr, proc.stderr
    assert "checkout/.netrc (.netrc; in step 'train' working directory)" in proc.stderr
    assert "checkout/keys/.ssh/id_rsa (an SSH private key (.ssh/id_*); in step 'train' working directory)" \
        in proc.stderr
    assert "move them out" in proc.stderr and "hunter2" not in proc.stderr
    assert not (tmp_path / "ctx").exists()
    (checkout / ".netrc").unlink()
    (checkout / "keys" / ".ssh" / "id_rsa").unlink()
    proc = containerfile(world, recipe, tmp_path / "ctx")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ctx" / "sources" / "0" / "train.py").exists()
    assert 'COPY ["sources/0/", "/etc/bootstrap/checkout/"]' in (tmp_path / "ctx" / "Dockerfile").read_text()


def recipe_with_relative_source(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "setup.py").write_text("print()\n")
    recipe = root / "r.toml"
    recipe.write_text(recipe_text(VENV + '[[step]]\nid = "src"\nkind = "build"\nabi_packages = []\n'
                                         'source = { path = "src" }\n'))
    return recipe


def test_a_relative_output_directory_writes_the_image_paths(world, tmp_path):
    """Item 10: the README's `-o ctx` from a cwd where it is relative, and `./ctx`, `../x/ctx`,
    a symlinked cwd (PWD as a shell sets it), a path with a space: every COPY goes to
    /etc/bootstrap/src/, and no host path (the stage's) is in the Dockerfile."""
    recipe = recipe_with_relative_source(world.root / "proj")
    work = tmp_path / "work dir"
    (work / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(work, target_is_directory=True)
    (work / "x").mkdir()
    cases = [(work, "ctx"), (work, "./ctx2"), (work / "sub", "../x/ctx"), (tmp_path / "link", "ctx3"),
             (work, "my ctx")]
    for cwd, out in cases:
        proc = containerfile(world, recipe, out, cwd=cwd, env={"PWD": str(cwd)})
        assert proc.returncode == 0, (cwd, out, proc.stderr)
        dockerfile = (Path(cwd) / out / "Dockerfile").read_text()
        assert 'COPY ["sources/0/", "/etc/bootstrap/src/"]' in dockerfile, (cwd, out, dockerfile)
        assert ".tmp-" not in dockerfile and str(tmp_path) not in dockerfile, dockerfile
        assert f"-> /etc/bootstrap/src (step 'src' source directory" in proc.stdout, proc.stdout
        assert (Path(cwd) / out / "sources" / "0" / "setup.py").exists()
    assert not [p for p in tmp_path.rglob(".*.tmp-*")]


def test_a_skipped_step_carries_nothing_only_it_reads(world, tmp_path):
    """`containerfile --skip S` (issue 42): the image's run leaves S out, so what only S reads (a
    local directory, a url source's archive) is not copied into the context. Seen on the reference
    recipe with `--skip apex te-torch`: the apex clone and the TE sdist were carried all the same."""
    kept, skipped = tmp_path / "kept-src", tmp_path / "skipped-src"
    for d in (kept, skipped):
        d.mkdir()
        (d / "data.txt").write_text(d.name + "\n")
    recipe = world.root / "skip.toml"
    recipe.write_text(recipe_text(VENV + f'[[step]]\nid = "kept"\nkind = "run"\nargv = ["ls", "{kept}"]\n'
                                  f'[[step]]\nid = "heavy"\nkind = "run"\nargv = ["ls", "{skipped}"]\n'))
    ctx = tmp_path / "ctx"
    proc = world.run(["containerfile", recipe, "--no-device", "--uv", world.uv, "-o", ctx, "--skip", "heavy"])
    assert proc.returncode == 0, proc.stderr
    carried = [(ctx / f).read_text() for f in context_files(ctx) if f.endswith("data.txt")]
    assert carried == ["kept-src\n"], carried
    assert str(skipped) not in (ctx / "Dockerfile").read_text()
    # Without --skip both are carried: the selection, not the recipe, left it out.
    proc = world.run(["containerfile", recipe, "--no-device", "--uv", world.uv, "-o", tmp_path / "all"])
    assert proc.returncode == 0, proc.stderr
    assert sorted((tmp_path / "all" / f).read_text() for f in context_files(tmp_path / "all")
                  if f.endswith("data.txt")) == ["kept-src\n", "skipped-src\n"]
