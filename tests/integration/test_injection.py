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
