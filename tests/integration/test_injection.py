"""A recipe's values never become options or commands of the tools bootstrap runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import recipes as R


def git_recipe(world, git: str, **extra) -> Path:
    step = {"id": "src", "kind": "build", "source": {"git": git, "rev": "0" * 40}}
    return R.write_recipe(world.root, steps=[R.venv(), step], **extra)


@pytest.mark.parametrize("url", ["--upload-pack=touch {marker}", "ext::sh -c touch% {marker}",
                                 "fd::17", "https://host/repo with space"])
def test_git_url_that_git_would_run_is_refused_at_validation(world, url):
    marker = world.root / "pwned"
    recipe = git_recipe(world, url.format(marker=marker))
    line, col = R.line_of(recipe, "source = ")
    for args in (["plan", recipe], [recipe]):
        proc = world.run(args)
        assert proc.returncode == 2, proc.stderr
        assert f"{recipe}:{line}:" in proc.stderr and "'source.git' cannot be" in proc.stderr, proc.stderr
    assert not marker.exists()


def test_git_url_from_a_placeholder_is_checked_when_expanded(world):
    marker = world.root / "pwned"
    recipe = git_recipe(world, "{env.GIT_URL}")
    proc = world.run([recipe], env={"GIT_URL": f"--upload-pack=touch {marker}"})
    assert proc.returncode == 2, proc.stderr
    assert "'source.git' cannot be '--upload-pack" in proc.stderr
    assert not marker.exists()


def test_a_local_repository_path_still_builds_its_source(world, sources):
    """The check refuses options, not ordinary repositories: scp-like and file URLs pass."""
    if not sources.get("repo_url"):
        pytest.skip("git is missing")
    for url in (sources["repo_url"], "git@github.com:NVIDIA/apex.git", "ssh://git@host/x.git", "../relative/repo"):
        recipe = git_recipe(world, url)
        proc = world.run(["plan", recipe])
        assert proc.returncode == 0, (url, proc.stderr)


@pytest.mark.parametrize("where", ["argv", "env", "venv"])
def test_nul_bytes_are_refused_at_validation(world, where):
    """TOML lets a string hold \\u0000; C strings end there, so a path or argument would be cut."""
    venv_path = "venv\\u0000/../elsewhere" if where == "venv" else "venv"
    steps = [R.venv(), R.run("r", ["echo", "a\\u0000b"] if where == "argv" else ["echo", "ok"],
                               **({"env": {"X": "a\\u0000b"}} if where == "env" else {}))]
    text = R.render_recipe(steps=steps, venv_path="VENVPATH").replace("\\\\u0000", "\\u0000")
    text = text.replace('"VENVPATH"', '"' + venv_path + '"')
    recipe = world.root / "nul.toml"
    recipe.write_text(text)
    assert "\\u0000" in recipe.read_text()
    proc = world.run(["plan", recipe])
    assert proc.returncode == 2, proc.stderr
    assert "NUL byte" in proc.stderr and f"{recipe}:" in proc.stderr, proc.stderr
    assert not (world.root / "elsewhere").exists()
