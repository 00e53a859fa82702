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


def containerfile(world, recipe: Path, out, cwd=None, env=None):
    return world.run(["containerfile", recipe, "--no-device", "--uv", world.uv, "-o", out], cwd=cwd, env=env)


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
