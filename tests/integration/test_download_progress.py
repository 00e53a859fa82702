"""Byte progress of an install step's downloads: the installer (uv or pip) runs on a
pseudo-terminal, so it draws its progress bars; bootstrap reads them and shows bytes done, the
total and the rate on its live line (a terminal) or in its heartbeat lines (plain stderr), and
the step log gets the installer's lines without the bars' redraws. The wheel is served slowly
(the index server's `trickle` fault), so the download lasts a few seconds."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest

import recipes as R
from conftest import make_wheelhouse
from recipes import steps_by_id
from test_progress_verify import Tmux

WHEEL = r"demo_big-1\.0\.0-py3-none-any\.whl$"
RATE = 100_000  # bytes a second: the ~400 KB wheel takes about 4 s


@pytest.fixture(scope="module")
def big_wheels(tmp_path_factory) -> Path:
    """One wheel of about 400 KB (random hex), over pip's 40 kB threshold for drawing a bar."""
    blob = random.Random(7).randbytes(200_000).hex()
    packages = ('[[package]]\nname = "demo-big"\nversions = ["1.0.0"]\n'
                f'files = {{ "demo_big/blob.txt" = "{blob}" }}\n')
    return make_wheelhouse(tmp_path_factory.mktemp("big") / "wheels", packages)


@pytest.fixture
def big_index(index_factory, big_wheels):
    return index_factory(root=big_wheels)


def wheel_size(big_index) -> int:
    return next(Path(big_index.root).rglob("demo_big-1.0.0-py3-none-any.whl")).stat().st_size


BYTES = r"(\d+(?:\.\d)?) (B|KB|MB)"


def to_bytes(number: str, unit: str) -> float:
    return float(number) * {"B": 1, "KB": 1e3, "MB": 1e6}[unit]


def recipe_for(world, big_index, installer: str) -> Path:
    world.env["PIP_CACHE_DIR"] = str(world.root / "pip-cache")  # a fresh node's: nothing cached
    return R.write_recipe(world.root, installer=installer,
                          steps=[R.venv(), R.install("big", ["demo-big==1.0.0"], index_url=big_index.url())])


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_plain_heartbeats_count_the_bytes_downloaded(world, big_index, installer):
    big_index.set_faults([{"match": WHEEL, "kind": "trickle", "rate": RATE}])
    recipe = recipe_for(world, big_index, installer)
    proc, doc = world.run_json([recipe], env={"BOOTSTRAP_HEARTBEAT": "0.7"})
    assert proc.returncode == 0, proc.stderr
    beats = re.findall(rf"^  \[2/2\] big: [\d.]+s, downloading {BYTES} of {BYTES}(, [\d.]+ (?:B|KB|MB)/s)?, demo",
                       proc.stderr, re.M)
    assert len(beats) >= 2, proc.stderr
    done = [to_bytes(b[0], b[1]) for b in beats]
    totals = {to_bytes(b[2], b[3]) for b in beats}
    assert done == sorted(done) and done[-1] > done[0], proc.stderr  # the bytes move
    # The installer's rounded size of the wheel: pip's "Downloading … (401 kB)" line gives it
    # first, its bar then to a tenth of a kB ("401.3 kB"); a heartbeat may fall between the two.
    assert 1 <= len(totals) <= 2, proc.stderr
    assert all(abs(t - wheel_size(big_index)) / wheel_size(big_index) < 0.02 for t in totals), proc.stderr
    assert any(b[4] for b in beats), proc.stderr  # a rate once there are two samples
    # The log holds the installer's lines, not its bars' redraws or escape sequences.
    log = Path(steps_by_id(doc)["big"]["log"]).read_text()
    assert "\x1b" not in log and "\r" not in log, log
    assert not re.search(r"\d+(\.\d+)? ?(KiB|kB)/\d", log), log
    assert re.search(r"^bootstrap: the installer's bars showed [\d.]+ KB of [\d.]+ KB downloaded, 1 of 1 file\(s\)$",
                     log, re.M), log
    if installer == "uv":
        assert re.search(r"^ \+ demo-big==1\.0\.0$", log, re.M), log
    else:
        assert "Successfully installed demo-big-1.0.0" in log, log
    assert world.version_of("demo-big") == "1.0.0"


def test_live_line_shows_bytes_done_total_and_rate(world, big_index):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install tmux)")
    big_index.set_faults([{"match": WHEEL, "kind": "trickle", "rate": RATE}])
    recipe = recipe_for(world, big_index, "uv")
    tmux = Tmux(world.root, world.cmd(["run", recipe]), world.full_env(), 100)
    try:
        line = tmux.wait_line(rf"^\[2/2\] big  install  0:\d\d  downloading {BYTES} of {BYTES}, [\d.]+ \S+/s, "
                              r"demo-big$", timeout=120)
        done = re.search(rf"downloading {BYTES}", line)
        first = to_bytes(done.group(1), done.group(2))
        later = tmux.wait_line(rf"downloading (?!{re.escape(done.group(0)[12:])} of)", timeout=30)
        assert "downloading" in later
        tmux.wait_line(r"^exit=0$", timeout=120)
        screen = "\n".join(tmux.screen())
        assert re.search(r"^\[2/2\] big  install  ran: first run", screen, re.M), screen
        assert "downloading" not in screen  # the live line went with the step
        assert first < wheel_size(big_index)
    finally:
        tmux.kill()
