"""Step kind `build`: a Python package built from source (a directory, a git commit, a
checksummed archive on the loopback index) into a wheel with the venv's installer, kept in the
ABI-keyed build cache under $BOOTSTRAP_HOME/builds and installed. The source is the test world's
`fastext` (testworld/make_sources.py): an in-tree PEP 517 backend that compiles a real C
extension, records the build's environment in BUILD_INFO, and appends a line to
$FASTEXT_BUILD_LOG per build, so the tests count real builds."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import recipes as R
from recipes import steps_by_id


def ok(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


@pytest.fixture
def bw(world, sources):
    """The world plus a private BOOTSTRAP_HOME, a copy of the source tree and a build counter."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    world.home = world.root / "home"
    world.build_log = world.root / "builds.log"
    world.env["BOOTSTRAP_HOME"] = str(world.home)
    world.tree = world.root / "fastext"
    shutil.copytree(sources["tree"], world.tree)
    return world


def builds(world) -> int:
    return len(world.build_log.read_text().splitlines()) if world.build_log.exists() else 0


def build_step(world, source: dict, env: dict | None = None, **extra) -> dict:
    """A build step of fastext; its env always names the build counter (bootstrap passes a
    child only the variables the recipe sets, plus a fixed list of system ones)."""
    step = {"id": "fastext", "kind": "build", "source": source,
            "env": {"FASTEXT_BUILD_LOG": str(world.build_log), **(env or {})},
            "verify": [{"import": "fastext", "attr": "answer"}]}
    step.update(extra)
    return step


def build_info(world, venv: Path | None = None) -> dict:
    r = world.python("import fastext, json; assert fastext.answer() == 42; print(json.dumps(fastext.BUILD_INFO))",
                     venv)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def cache_entries(world) -> list[Path]:
    root = world.home / "builds"
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.exists() else []


def leftovers(world) -> list[str]:
    """Staging or source copies a build left behind (there must be none)."""
    root = world.home / "builds"
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".")) if root.exists() else []


def test_directory_build_installs_then_cache_hit_in_another_venv(bw):
    # A path inside the venv (TE's CPLUS_INCLUDE_PATH = "{python.site_packages}/include") is the
    # same input in every venv: another venv still hits the cache (found by realworld.sh).
    env = {"TORCH_CUDA_ARCH_LIST": "9.0", "MAX_JOBS": "{host.cpus}", "FASTEXT_BUILD_SECONDS": "2",
           "CPLUS_INCLUDE_PATH": "{python.site_packages}/include"}
    recipe = R.write_recipe(bw.root, steps=[R.venv(), build_step(bw, {"path": str(bw.tree)}, env=env)])
    # The first build stands for a long one: the backend sleeps 2 s before compiling.
    proc, doc = bw.run_json([recipe])
    ok(proc)
    step = steps_by_id(doc)["fastext"]
    assert step["result"] == "ran" and step["reason"].startswith("built in"), step
    built_seconds = step["seconds"]
    assert builds(bw) == 1
    info = build_info(bw)
    assert info["TORCH_CUDA_ARCH_LIST"] == "9.0" and info["MAX_JOBS"].isdigit()
    [entry] = cache_entries(bw)
    inputs = (entry / "inputs.txt").read_text()
    assert "source: tree " in inputs and "ext_suffix: .cpython-" in inputs
    env_line = next(line for line in inputs.splitlines() if line.startswith("env: ["))
    assert "TORCH_CUDA_ARCH_LIST=9.0" in env_line and "MAX_JOBS" not in inputs
    assert "CPLUS_INCLUDE_PATH=<venv>/lib/python3.11/site-packages/include" in env_line, env_line
    assert "torch: not installed" in inputs and "frontend: uv build" in inputs
    assert (entry / "build.log").exists() and leftovers(bw) == []
    # The installed wheel is kept in the artifact store, so rollback can restore this build.
    newest = sorted((bw.venv / ".bootstrap" / "history").glob("*.json"))[-1]
    origin = json.loads(newest.read_text())["packages"]["fastext"]["origin"]
    assert origin["step"] == "fastext" and len(origin["artifact_sha256"]) == 64
    assert (bw.home / "artifacts" / "sha256").exists()

    # Same venv: the step is up to date, nothing runs.
    proc, doc = bw.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["fastext"]["result"] == "skipped"

    # Another venv sharing the home: installed from the cache, no build.
    other = bw.root / "other"
    proc, doc = bw.run_json([recipe, "--venv", other])
    ok(proc)
    step = steps_by_id(doc)["fastext"]
    assert step["result"] == "ran" and step["reason"].startswith("build cache hit"), step
    assert builds(bw) == 1
    assert build_info(bw, other)["TORCH_CUDA_ARCH_LIST"] == "9.0"
    print(f"\nbuild step: {built_seconds:.2f} s; cache-hit step: {step['seconds']:.2f} s")
    # The reason and the build count above prove the hit; the time only says it was cheaper
    # (bench/build_cache.sh measures it).
    assert step["seconds"] < built_seconds


def test_cache_misses_when_a_key_input_changes(bw):
    def run(extra_env: dict, *args):
        recipe = R.write_recipe(bw.root, steps=[R.venv(), build_step(bw, {"path": str(bw.tree)}, env=extra_env)])
        proc, doc = bw.run_json([recipe, *args])
        ok(proc)
        return steps_by_id(doc)["fastext"]

    base = {"FASTEXT_FLAVOR": "a", "TORCH_CUDA_ARCH_LIST": "{device.torch_arch_list}", "MAX_JOBS": "2"}
    assert run(base, "--arch", "9.0")["reason"].startswith("built in")
    assert builds(bw) == 1
    # Parallelism alone is not part of the build key: the step re-runs, the cache answers.
    step = run({**base, "MAX_JOBS": "7"}, "--arch", "9.0")
    assert step["reason"].startswith("build cache hit") and builds(bw) == 1
    # A build variable, the target arch and the source each make a new build.
    assert run({**base, "FASTEXT_FLAVOR": "b"}, "--arch", "9.0")["reason"].startswith("built in")
    assert builds(bw) == 2
    assert run(base, "--arch", "8.0")["reason"].startswith("built in")
    assert builds(bw) == 3 and build_info(bw)["TORCH_CUDA_ARCH_LIST"] == "8.0"
    (bw.tree / "src" / "native.c").write_text((bw.tree / "src" / "native.c").read_text() + "\n/* changed */\n")
    assert run(base, "--arch", "8.0")["reason"].startswith("built in")
    assert builds(bw) == 4
    # Back to the first inputs: every earlier build is still in the cache.
    assert len(cache_entries(bw)) == 4
    (bw.tree / "src" / "native.c").write_text((bw.tree / "src" / "native.c").read_text().replace("\n/* changed */\n", ""))
    assert run(base, "--arch", "9.0")["reason"].startswith("build cache hit")
    assert builds(bw) == 4


def test_two_concurrent_builders_of_one_key_build_once(bw):
    recipe = R.write_recipe(bw.root, steps=[R.venv(), build_step(bw, {"path": str(bw.tree)},
                                                                  env={"FASTEXT_BUILD_SECONDS": "3"})])
    first = bw.popen([recipe, "--venv", bw.root / "a", "--json"])
    second = bw.popen([recipe, "--venv", bw.root / "b", "--json"])
    outs = [p.communicate(timeout=180) for p in (first, second)]
    for p, (out, err) in zip((first, second), outs):
        assert p.returncode == 0, f"stdout:\n{out}\nstderr:\n{err}"
    reasons = sorted(steps_by_id(json.loads(out))["fastext"]["reason"] for out, _ in outs)
    assert builds(bw) == 1, bw.build_log.read_text()
    assert reasons[0].startswith("build cache hit") and reasons[1].startswith("built in"), reasons
    assert len(cache_entries(bw)) == 1 and leftovers(bw) == []
    for venv in ("a", "b"):
        build_info(bw, bw.root / venv)


def test_failed_or_interrupted_build_publishes_nothing(bw):
    def recipe_with(env: dict | None):
        return R.write_recipe(bw.root, steps=[R.venv(), build_step(bw, {"path": str(bw.tree)}, env=env)])

    proc, doc = bw.run_json([recipe_with({"FASTEXT_FAIL": "1"})])
    assert proc.returncode == 1
    err = steps_by_id(doc)["fastext"]["error"]
    assert "step 'fastext' (build) failed" in err["message"]
    assert "FASTEXT_FAIL='1' is set" in err["detail"]
    assert cache_entries(bw) == [] and leftovers(bw) == []
    assert bw.version_of("fastext") is None

    p = bw.popen([recipe_with({"FASTEXT_BUILD_SECONDS": "30"})])
    deadline = time.time() + 60
    while builds(bw) < 2 and time.time() < deadline:  # the backend has started
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=60)
    assert p.returncode == 130
    assert cache_entries(bw) == [] and leftovers(bw) == []

    ok(bw.run([recipe_with(None)]))  # builds, publishes, installs
    assert len(cache_entries(bw)) == 1 and build_info(bw)["name"] == "fastext"


def test_archive_source_downloads_with_retries_and_resume(bw, index_factory, sources, wheelhouse, tmp_path):
    root = tmp_path / "idx"
    (root / "src").mkdir(parents=True)
    shutil.copy(sources["tarball"], root / "src")
    name = Path(sources["tarball"]).name
    srv = index_factory(root=root, faults=[
        {"match": name, "kind": "status", "status": 503, "times": 1},
        {"match": name, "kind": "truncate", "bytes": 200, "times": 1},
    ])
    url = f"{srv.base_url}/src/files/{name}"
    recipe = R.write_recipe(bw.root, network={"retries": 3},
                            steps=[R.venv(), build_step(bw, {"url": url, "sha256": sources["sha256"]})])
    proc, doc = bw.run_json([recipe])
    ok(proc)
    assert srv.stats()[f"/src/files/{name}"] == 3  # 503, truncated, resumed
    assert build_info(bw)["version"] == "1.0.0"
    log = Path(steps_by_id(doc)["fastext"]["log"]).read_text()
    assert "resumed at 200" in log
    inputs = (cache_entries(bw)[0] / "inputs.txt").read_text()
    assert f"source: sha256 {sources['sha256']}" in inputs


def test_archive_checksum_mismatch_is_not_retried(bw, index_factory, sources, tmp_path):
    root = tmp_path / "idx"
    (root / "src").mkdir(parents=True)
    shutil.copy(sources["tarball"], root / "src")
    name = Path(sources["tarball"]).name
    srv = index_factory(root=root)
    wrong = "0" * 64
    recipe = R.write_recipe(bw.root, network={"retries": 3},
                            steps=[R.venv(), build_step(bw, {"url": f"{srv.base_url}/src/files/{name}", "sha256": wrong})])
    proc, doc = bw.run_json([recipe])
    assert proc.returncode == 1
    message = steps_by_id(doc)["fastext"]["error"]["message"]
    assert "checksum mismatch" in message and wrong in message and sources["sha256"] in message
    assert srv.stats()[f"/src/files/{name}"] == 1
    downloads = bw.home / "sources" / "downloads"
    assert not downloads.exists() or not any(p.is_file() and p.suffix != ".lock" for p in downloads.rglob("*"))


def test_git_source_at_pinned_commits(bw, sources):
    if not sources.get("repo"):
        pytest.skip("git missing")
    first, second = sources["commits"]
    for rev, version, marker in ((first, "1.0.0", "commit-1"), (second, "1.1.0", "commit-2")):
        recipe = R.write_recipe(bw.root, steps=[R.venv(), build_step(bw, {"git": sources["repo_url"], "rev": rev})])
        ok(bw.run([recipe]))
        info = build_info(bw)
        assert (info["version"], info["marker"]) == (version, marker)
    assert builds(bw) == 2
    checkouts = sorted(p.name for p in (bw.home / "sources" / "git").iterdir())
    assert len(checkouts) == 2 and not any(c.startswith(".tmp") for c in checkouts)

    missing = "1" * 40
    recipe = R.write_recipe(bw.root, steps=[R.venv(), build_step(bw, {"git": sources["repo_url"], "rev": missing})])
    proc, doc = bw.run_json([recipe])
    assert proc.returncode == 1
    message = steps_by_id(doc)["fastext"]["error"]["message"]
    assert f"commit {missing} is not in {sources['repo_url']}" in message
    assert not any(p.name.startswith(".tmp") for p in (bw.home / "sources" / "git").iterdir())


def test_plan_explain_shows_build_key_inputs(bw):
    recipe = R.write_recipe(bw.root, steps=[R.venv(), build_step(bw, {"path": str(bw.tree)}, env={"FASTEXT_FLAVOR": "x"})])
    ok(bw.run([recipe, "--only", "venv"]))
    out = ok(bw.run(["plan", recipe, "--explain"])).stdout
    assert f"source: directory {bw.tree} (tree " in out
    assert "build key: " in out and "(not built yet)" in out
    for field in ("source: tree", "python: cpython 3.11", "torch: not installed", "nvcc: ", "compiler: ",
                  "libstdc++: GLIBCXX_", "env: [", "frontend: uv build"):
        assert f"| {field}" in out, field
    assert "FASTEXT_FLAVOR=x]" in out
    proc, plan = bw.run_json(["plan", recipe])
    ok(proc)
    build = [s for s in plan["steps"] if s["id"] == "fastext"][0]["build"]
    assert build["source"] == str(bw.tree) and build["identity"].startswith("tree ")
    assert build["abi_packages"] == ["torch not installed"]
    ok(bw.run([recipe]))
    out = ok(bw.run(["plan", recipe, "--explain"])).stdout
    assert "in the build cache: installs without building" in out


REPO = Path(__file__).resolve().parents[2]
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)


def install_fake_torch(world, version: str):
    """The stand-in torch of tests/fixtures (answers from FAKE_TORCH_* variables) with a
    dist-info, as if installed: what the build's ABI key and pre-build checks read."""
    site = next((world.venv / "lib").glob("python3*/site-packages"))
    shutil.rmtree(site / "torch", ignore_errors=True)
    for old in site.glob("torch-*.dist-info"):
        shutil.rmtree(old)
    shutil.copytree(REPO / "tests" / "fixtures" / "fake_torch" / "torch", site / "torch")
    info = site / f"torch-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    (info / "RECORD").write_text("")


@pytest.mark.skipif(NVCC is None, reason="nvcc missing: the pre-build check compares it with torch")
def test_cuda_build_checks_torch_first_and_keys_on_torch(bw):
    def recipe_with(cuda: str, version: str = "2.11.0+cu130"):
        env = {"TORCH_CUDA_ARCH_LIST": "{device.torch_arch_list}", "FAKE_TORCH_CUDA": cuda,
               "FAKE_TORCH_VERSION": version}
        return R.write_recipe(bw.root, steps=[R.venv(), build_step(bw, {"path": str(bw.tree)}, env=env)])

    ok(bw.run([recipe_with("13.0"), "--only", "venv", "--arch", "9.0"]))
    install_fake_torch(bw, "2.11.0+cu130")
    nvcc_release = subprocess.run([NVCC, "--version"], capture_output=True, text=True).stdout
    assert "release 13.0" in nvcc_release, "this test expects nvcc 13.0 (the machine's CUDA)"

    # torch built for CUDA 12.8 against nvcc 13.0: refused before a minute of building is spent.
    proc, doc = bw.run_json([recipe_with("12.8"), "--arch", "9.0"])
    assert proc.returncode == 1
    message = steps_by_id(doc)["fastext"]["error"]["message"]
    assert message.startswith("step 'fastext': not building for 9.0: nvcc version:"), message
    assert "12.8" in message and "13.0" in message
    assert builds(bw) == 0 and cache_entries(bw) == []

    install_fake_torch(bw, "2.11.0+cu130")  # reinstalled: now a torch built for CUDA 13.0
    proc, doc = bw.run_json([recipe_with("13.0"), "--arch", "9.0"])
    ok(proc)
    assert steps_by_id(doc)["fastext"]["reason"].startswith("built in") and builds(bw) == 1
    inputs = (cache_entries(bw)[0] / "inputs.txt").read_text()
    assert "torch: 2.11.0+cu130 cuda 13.0 cxx11_abi 1" in inputs and "arch_list: 9.0" in inputs
    assert "abi_packages: [torch 2.11.0+cu130]" in inputs
    # The run's manifests say which arch the build targeted, and why.
    newest = sorted((bw.venv / ".bootstrap" / "history").glob("*.json"))[-1]
    device = json.loads(newest.read_text())["device"]
    assert device["cuda_archs"] == "9.0" and device["cuda_archs_from"].startswith("--arch 9.0"), device

    # A new torch makes the step run again, and the build with it.
    install_fake_torch(bw, "2.11.1+cu130")
    proc, doc = bw.run_json([recipe_with("13.0", "2.11.1+cu130"), "--arch", "9.0"])
    ok(proc)
    assert steps_by_id(doc)["fastext"]["reason"].startswith("built in") and builds(bw) == 2


def test_abi_package_installed_earlier_in_the_same_run_keys_the_build_as_the_next_run_does(bw):
    """A build's ABI packages are read when the step runs, after the earlier steps of the same
    run: a key read before them ("not installed") changed on the next run, which then installed
    the build again (TE's torch extension after the TE core step, found by realworld.sh)."""
    url = bw.index.url("main")
    steps = [R.venv(), R.install("core", ["demo-core==2.0.0"], index_url=url),
             build_step(bw, {"path": str(bw.tree)}, abi_packages=["demo-core"])]
    recipe = R.write_recipe(bw.root, steps=steps)
    proc, doc = bw.run_json([recipe])
    ok(proc)
    assert steps_by_id(doc)["fastext"]["reason"].startswith("built in")
    [entry] = cache_entries(bw)
    assert "abi_packages: [demo-core 2.0.0]" in (entry / "inputs.txt").read_text()
    proc, doc = bw.run_json([recipe])
    ok(proc)
    assert [s["result"] for s in doc["steps"]] == ["skipped"] * 3, doc["steps"]


def test_locked_run_resolves_the_built_wheels_install_to_the_lock(bw):
    """Under --locked the wheel's install gets every locked pin as an override: its dependencies
    resolve to the lock, not back to a pin the lock overrode on purpose (TE's torch extension put
    torch's cuBLAS pin back in a locked run of the reference recipe, found by realworld.sh)."""
    url = bw.index.url("main")
    steps = [R.venv(), R.install("core", ["demo-core==2.0.0"], index_url=url),
             build_step(bw, {"path": str(bw.tree)})]
    recipe = R.write_recipe(bw.root, steps=steps)
    ok(bw.run([recipe]))
    lockfile = bw.root / "build.lock.json"
    ok(bw.run(["lock", recipe, "-o", lockfile]))
    fresh = bw.root / "fresh"
    proc, doc = bw.run_json([recipe, "--venv", fresh, "--lockfile", lockfile])
    ok(proc)
    assert steps_by_id(doc)["fastext"]["reason"].startswith("build cache hit"), doc["steps"]
    pins = (fresh / ".bootstrap" / "overrides" / "fastext.txt").read_text().split()
    # The built wheel itself is installed by path: not pinned (uv would look for it on an index).
    assert "demo-core==2.0.0" in pins and not any(p.startswith("fastext==") for p in pins), pins
    assert bw.version_of("demo-core", fresh) == "2.0.0"


def test_cache_keygen_signs_entries_and_a_key_others_can_read_is_refused(bw):
    proc = bw.run(["cache", "keygen", "--name", "ci"])
    ok(proc)
    assert "\nci:" in proc.stdout
    key = bw.home / "keys" / next((bw.home / "keys").iterdir()).name / "ed25519.key"
    assert key.stat().st_mode & 0o777 == 0o600
    again = bw.run(["cache", "keygen"])
    assert again.returncode == 2 and f"a signing key already exists: {key}" in again.stderr
    recipe = R.write_recipe(bw.root, steps=[R.venv(), build_step(bw, {"path": str(bw.tree)})])
    ok(bw.run([recipe]))
    [entry] = cache_entries(bw)
    assert (entry / "signature").read_text().startswith("ed25519 ")
    # A private key others could read is never used: the next build stops before it starts.
    key.chmod(0o644)
    proc, doc = bw.run_json([recipe, "--venv", bw.root / "other", "--force"])
    assert proc.returncode == 0  # a cache hit signs nothing
    bad = R.write_recipe(bw.root, filename="b.toml",
                         steps=[R.venv(), build_step(bw, {"path": str(bw.tree)}, env={"FASTEXT_FLAVOR": "x"})])
    proc = bw.run([bad])
    assert proc.returncode == 1
    assert f"refusing to use the signing key {key}: its mode is 0644: others could read it (it must be 0600)" \
        in proc.stdout + proc.stderr
