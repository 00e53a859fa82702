"""Self-tests of the offline test world: wheel generator and fault-injecting index."""

from __future__ import annotations

import base64
import csv
import email.parser
import hashlib
import http.client
import io
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MAKE_WHEELS = REPO / "testworld" / "make_wheels.py"

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

MAIN_WHEELS = {
    "broken_import-1.0.0", "click-8.1.7", "demo_core-1.0.0", "demo_core-1.1.0",
    "demo_core-2.0.0", "demo_core-2.1.0rc1", "demo_requests-2.32.3", "demo_torch-2.10.0",
    "demo_torch-2.11.0", "demo_utils-0.9.0", "demo_utils-1.0.0", "nvidia_cublas-13.1.0.3",
    "nvidia_cublas-13.4.1.1", "platformdirs-4.3.6", "regex-2024.1.0",
    "transformers-4.57.1", "wandb-0.22.0",
}


def get(url: str, timeout: float = 5):
    with OPENER.open(url, timeout=timeout) as resp:
        return resp.status, resp.read(), resp


def whl(wheelhouse: Path, stem: str, group: str = "main") -> Path:
    return wheelhouse / group / f"{stem}-py3-none-any.whl"


def metadata(path: Path):
    with zipfile.ZipFile(path) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.BytesParser().parsebytes(zf.read(name))


# --------------------------------------------------------------------------- generator

def test_wheelhouse_layout(wheelhouse):
    main = {p.name[: -len("-py3-none-any.whl")] for p in (wheelhouse / "main").glob("*.whl")}
    assert main == MAIN_WHEELS
    cu = [p.name for p in (wheelhouse / "cu130").glob("*.whl")]
    assert cu == ["demo_torch-2.11.0+cu130-py3-none-any.whl"]
    assert not list(wheelhouse.glob("*/pip-*"))


def test_every_wheel_is_valid(wheelhouse):
    wheels = sorted(wheelhouse.glob("*/*.whl"))
    assert len(wheels) == len(MAIN_WHEELS) + 1
    for path in wheels:
        dist, version = path.name.split("-")[:2]
        dist_info = f"{dist}-{version}.dist-info"
        with zipfile.ZipFile(path) as zf:
            assert zf.testzip() is None
            names = zf.namelist()
            assert names[-1] == f"{dist_info}/RECORD"
            assert all(zi.date_time == (1980, 1, 1, 0, 0, 0) for zi in zf.infolist())
            rows = list(csv.reader(io.StringIO(zf.read(f"{dist_info}/RECORD").decode())))
            assert sorted(r[0] for r in rows) == sorted(names)
            for arc, digest, size in rows:
                if arc.endswith("/RECORD"):
                    assert (digest, size) == ("", "")
                    continue
                data = zf.read(arc)
                want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                assert digest == "sha256=" + want.decode(), (path.name, arc)
                assert int(size) == len(data)
            wheel = zf.read(f"{dist_info}/WHEEL").decode()
            assert "Wheel-Version: 1.0\n" in wheel
            assert "Root-Is-Purelib: true\n" in wheel
            assert "Tag: py3-none-any\n" in wheel
            init = [n for n in names if n.endswith("/__init__.py")]
            assert len(init) == 1
            meta = email.parser.BytesParser().parsebytes(zf.read(f"{dist_info}/METADATA"))
            assert meta["Metadata-Version"] == "2.1"
            assert meta["Version"].replace("-", "_") == version
            assert f'__version__ = "{meta["Version"]}"' in zf.read(init[0]).decode()


def test_metadata_fields(wheelhouse):
    m = metadata(whl(wheelhouse, "demo_utils-1.0.0"))
    assert m["Name"] == "demo-utils"
    assert m.get_all("Provides-Extra") == ["cli"]
    assert m.get_all("Requires-Dist") == [
        "demo-core>=1.0", 'platformdirs; python_version < "3"', 'click>=8.0; extra == "cli"']
    assert metadata(whl(wheelhouse, "demo_utils-0.9.0")).get_all("Requires-Dist") == ["demo-core>=1.0"]
    assert metadata(whl(wheelhouse, "demo_torch-2.11.0")).get_all("Requires-Dist") == [
        "nvidia-cublas==13.1.0.3"]
    assert metadata(whl(wheelhouse, "demo_torch-2.10.0")).get_all("Requires-Dist") is None
    assert metadata(whl(wheelhouse, "demo_torch-2.11.0+cu130", "cu130"))["Version"] == "2.11.0+cu130"
    assert metadata(whl(wheelhouse, "transformers-4.57.1")).get_all("Requires-Dist") == ["regex"]
    wandb = metadata(whl(wheelhouse, "wandb-0.22.0"))
    assert wandb.get_all("Requires-Dist") == [
        "click>=8.0", "platformdirs", "demo-requests>=2.0", 'demo-utils[cli]>=1.0; extra == "media"']
    with zipfile.ZipFile(whl(wheelhouse, "demo_core-1.0.0")) as zf:
        ep = zf.read("demo_core-1.0.0.dist-info/entry_points.txt").decode()
    assert ep == "[console_scripts]\ndemo-core = demo_core:main\n"


def test_module_bodies(wheelhouse, clean_env):
    def _py(paths, code):
        """Run code with the given wheels on sys.path (pure-python wheels are importable zips)."""
        prog = f"import sys; sys.path[:0] = {[str(p) for p in paths]!r}\n{code}"
        return subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                              timeout=30, env=clean_env())

    core = whl(wheelhouse, "demo_core-1.1.0")
    r = _py([core], "import demo_core; demo_core.main()")
    assert r.stdout == "demo-core 1.1.0\n", r.stderr
    r = _py([whl(wheelhouse, "transformers-4.57.1")], "import transformers")
    assert "ModuleNotFoundError: No module named 'regex'" in r.stderr
    r = _py([whl(wheelhouse, "transformers-4.57.1"), whl(wheelhouse, "regex-2024.1.0")],
            "import transformers; print(transformers.AutoTokenizer.from_pretrained('x'))")
    assert r.returncode == 0 and "AutoTokenizer" in r.stdout, r.stderr
    r = _py([whl(wheelhouse, "broken_import-1.0.0")], "import broken_import")
    assert "RuntimeError: broken on purpose" in r.stderr
    for version, flag in (("13.1.0.3", "False"), ("13.4.1.1", "True")):
        r = _py([whl(wheelhouse, "demo_torch-2.11.0"), whl(wheelhouse, f"nvidia_cublas-{version}")],
                "import demo_torch; print(demo_torch.cublas().HAS_GROUPED_GEMM)")
        assert r.stdout.strip() == flag, r.stderr


def test_generator_deterministic_skip_and_filler(wheelhouse, tmp_path):
    out = tmp_path / "wh"

    def gen(*extra):
        r = subprocess.run([sys.executable, str(MAKE_WHEELS), str(out), *extra],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout

    assert "3 removed" not in gen("--filler", "3")
    fillers = sorted(p.name for p in (out / "main").glob("filler*"))
    assert fillers == [f"filler_000{i}-1.0.0-py3-none-any.whl" for i in (1, 2, 3)]
    # identical bytes to the session wheelhouse, i.e. stable hashes
    for p in (wheelhouse / "main").glob("*.whl"):
        assert (out / "main" / p.name).read_bytes() == p.read_bytes()
    mtimes = {p: p.stat().st_mtime_ns for p in out.glob("*/*.whl")}
    assert "(0 written, 21 unchanged, 0 removed)" in gen("--filler", "3")
    assert all(p.stat().st_mtime_ns == t for p, t in mtimes.items())
    assert "(0 written, 19 unchanged, 2 removed)" in gen("--filler", "1")
    assert not (out / "main" / "filler_0002-1.0.0-py3-none-any.whl").exists()


# --------------------------------------------------------------------------- server

def test_simple_pages_and_files(index, wheelhouse):
    status, body, resp = get(index.url() + "/")
    page = body.decode()
    assert status == 200 and resp.headers["Content-Type"].startswith("text/html")
    for project in ("demo-core", "demo-utils", "nvidia-cublas", "broken-import", "wandb"):
        assert f'href="/main/simple/{project}/"' in page
    _, body, _ = get(index.url() + "/demo-core/")
    links = re.findall(r'href="([^"#]+)#sha256=([0-9a-f]{64})"', body.decode())
    assert [Path(u).name for u, _ in links] == [
        f"demo_core-{v}-py3-none-any.whl" for v in ("1.0.0", "1.1.0", "2.0.0", "2.1.0rc1")]
    url, digest = links[0]
    status, data, resp = get(index.base_url + url)
    assert status == 200 and int(resp.headers["Content-Length"]) == len(data)
    assert hashlib.sha256(data).hexdigest() == digest
    assert data == whl(wheelhouse, "demo_core-1.0.0").read_bytes()
    # PEP 658 metadata next to the file
    _, meta, _ = get(index.base_url + url + ".metadata")
    assert meta.startswith(b"Metadata-Version: 2.1\nName: demo-core\nVersion: 1.0.0\n")
    # non-normalised names redirect to the normalised page
    _, body2, resp = get(index.url() + "/Demo_Core/")
    assert resp.url.endswith("/main/simple/demo-core/") and body2 == body
    # local version lives in its own group, URL-quoted
    _, cu, _ = get(index.url("cu130") + "/demo-torch/")
    assert "/cu130/files/demo_torch-2.11.0%2Bcu130-py3-none-any.whl#sha256=" in cu.decode()
    with pytest.raises(urllib.error.HTTPError) as e:
        get(index.url() + "/no-such-project/")
    assert e.value.code == 404
    stats = index.stats()
    assert stats["/main/simple/demo-core/"] == 2 and stats["/main/simple/Demo_Core/"] == 1
    assert index.count(r"\.whl$") == 1
    index.reset()
    assert index.stats() == {}


def test_fault_status_times(index):
    index.set_faults([{"match": r"/simple/demo-core/$", "kind": "status", "status": 503, "times": 2}])
    for _ in range(2):
        with pytest.raises(urllib.error.HTTPError) as e:
            get(index.url() + "/demo-core/")
        assert e.value.code == 503
    assert get(index.url() + "/demo-core/")[0] == 200
    assert get(index.url() + "/demo-utils/")[0] == 200
    assert index.faults()[0]["applied"] == 2
    assert index.stats()["/main/simple/demo-core/"] == 3
    assert "fault=status#0" in index.log_text()


def test_fault_drop(index):
    index.set_faults([{"match": "demo-core", "kind": "drop", "times": 1}])
    with pytest.raises((urllib.error.URLError, ConnectionError, http.client.HTTPException)):
        get(index.url() + "/demo-core/")
    assert index.faults()[0]["applied"] == 1
    assert get(index.url() + "/demo-core/")[0] == 200
    assert "dropped fault=drop#0" in index.log_text()


def test_fault_truncate(index, wheelhouse):
    full = whl(wheelhouse, "demo_core-2.0.0").read_bytes()
    index.set_faults([{"match": r"\.whl$", "kind": "truncate", "bytes": 100, "times": 1}])
    conn = http.client.HTTPConnection("127.0.0.1", index.port, timeout=5)
    conn.request("GET", "/main/files/demo_core-2.0.0-py3-none-any.whl")
    resp = conn.getresponse()
    assert resp.status == 200 and int(resp.headers["Content-Length"]) == len(full)
    with pytest.raises(http.client.IncompleteRead) as e:
        resp.read()
    assert e.value.partial == full[:100]
    conn.close()
    assert get(index.base_url + "/main/files/demo_core-2.0.0-py3-none-any.whl")[1] == full


def test_fault_delay_and_hang(index):
    index.set_faults([
        {"match": "demo-core", "kind": "delay", "seconds": 10.0, "times": 1},
        {"match": "demo-utils", "kind": "hang", "times": 1},
    ])
    # Bounds well under the 10 s delay, so a loaded machine does not fail them.
    t0 = time.monotonic()
    with pytest.raises((TimeoutError, urllib.error.URLError)):
        get(index.url() + "/demo-core/", timeout=0.3)
    assert time.monotonic() - t0 < 5
    with pytest.raises((TimeoutError, urllib.error.URLError)):
        get(index.url() + "/demo-utils/", timeout=0.3)
    t0 = time.monotonic()
    assert get(index.url() + "/demo-core/", timeout=30)[0] == 200  # rule used up: fast again
    assert get(index.url() + "/demo-utils/", timeout=30)[0] == 200
    assert time.monotonic() - t0 < 5
    # a delay within the client's patience is just slow, and combines with later rules
    index.set_faults([{"kind": "delay", "seconds": 0.3, "times": 1},
                      {"kind": "status", "status": 500, "times": 1}])
    t0 = time.monotonic()
    with pytest.raises(urllib.error.HTTPError) as e:
        get(index.url() + "/demo-core/", timeout=3)
    assert e.value.code == 500 and time.monotonic() - t0 >= 0.3
    deadline = time.monotonic() + 3      # the hang ends once the client has gone
    while "hang ended" not in index.log_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "hang ended" in index.log_text()


def test_bad_fault_config_rejected(index):
    with pytest.raises(RuntimeError, match="400"):
        index.set_faults([{"kind": "explode"}])
    with pytest.raises(RuntimeError, match="400"):
        index.set_faults({"not": "a list"})


def test_initial_faults_and_clean_shutdown(index_factory):
    srv = index_factory(faults=[{"kind": "status", "status": 429}], cache_max_age=600)
    with pytest.raises(urllib.error.HTTPError) as e:
        get(srv.url() + "/")
    assert e.value.code == 429
    srv.clear_faults()
    _, _, resp = get(srv.url() + "/")
    assert resp.headers["Cache-Control"] == "max-age=600, public"
    srv.stop()
    assert srv.proc.returncode == 0  # it left on SIGTERM within stop()'s 5 s (a kill is -9)


def test_uv_installs_from_index(index, uv_bin, uv_cache, tmp_path, clean_env):
    env = clean_env({"UV_CACHE_DIR": uv_cache})
    venv = tmp_path / "venv"
    subprocess.run([str(uv_bin), "venv", "-q", "--python", sys.executable, str(venv)],
                   env=env, check=True, timeout=60)
    r = subprocess.run([str(uv_bin), "pip", "install", "--python", str(venv / "bin" / "python"),
                        "--index-url", index.url(), "demo-utils"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "+ demo-core==2.0.0" in r.stderr and "+ demo-utils==1.0.0" in r.stderr
    out = subprocess.run([str(venv / "bin" / "demo-core")], capture_output=True, text=True)
    assert out.stdout == "demo-core 2.0.0\n"
    assert index.stats()["/main/simple/demo-utils/"] == 1
    assert index.count(r"^/main/files/.*\.whl$") == 2


# --------------------------------------------------------------------------- source packages
# testworld/make_sources.py: a source tree / tarball / git repo whose in-tree PEP 517 backend
# compiles a C extension, so `uv build` and `pip wheel` work without any index.

import importlib.util  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import sysconfig  # noqa: E402
import tarfile  # noqa: E402

MAKE_SOURCES = REPO / "testworld" / "make_sources.py"
# Anything but loopback goes to a dead proxy: a build that needs the network fails.
DEAD_PROXY = {v: "http://127.0.0.1:9" for v in (
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")}


def _make_sources_module():
    spec = importlib.util.spec_from_file_location("make_sources", MAKE_SOURCES)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _need_cc():
    if not shutil.which(os.environ.get("CC") or "cc"):
        pytest.skip("no C compiler (cc)")
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        pytest.skip("Python.h not installed for this interpreter")


def _need_git():
    if not shutil.which("git"):
        pytest.skip("git not installed")


def _check_wheel(path: Path, name="fastext", version="1.0.0") -> dict:
    """Validate a built wheel (tag, RECORD hashes, extension present); return BUILD_INFO."""
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert path.name.startswith(f"{name}-{version}-{tag}-{tag}-linux_"), path.name
    dist_info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert names[-1] == f"{dist_info}/RECORD"
        assert f"{name}/_native{sysconfig.get_config_var('EXT_SUFFIX')}" in names
        rows = list(csv.reader(io.StringIO(zf.read(f"{dist_info}/RECORD").decode())))
        assert sorted(r[0] for r in rows) == sorted(names)
        for arc, digest, size in rows:
            if arc.endswith("/RECORD"):
                continue
            data = zf.read(arc)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert (digest, int(size)) == ("sha256=" + want.decode(), len(data)), arc
        wheel = zf.read(f"{dist_info}/WHEEL").decode()
        assert f"Tag: {path.name[:-4].split('-', 2)[2]}\n" in wheel
        assert "Root-Is-Purelib: false" in wheel
        return json.loads(zf.read(f"{name}/build_info.json"))


@pytest.fixture
def build_venv(uv_bin, uv_cache, tmp_path, clean_env, wheelhouse):
    """(venv, env, run): a fresh uv venv with demo-core 2.0.0 installed, a hermetic offline
    env (fresh UV_CACHE_DIR, dead proxies, no python downloads) and run(cmd, **env)."""
    _need_cc()
    env = clean_env({"UV_CACHE_DIR": uv_cache, "UV_PYTHON_DOWNLOADS": "never",
                     "PIP_NO_CACHE_DIR": "1", **DEAD_PROXY})

    def run(cmd, check=True, **extra):
        r = subprocess.run([str(c) for c in cmd], env={**env, **extra}, capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL)
        if check:
            assert r.returncode == 0, f"{cmd}\n{r.stdout}\n{r.stderr}"
        return r

    venv = tmp_path / "V"
    run([uv_bin, "venv", "-q", "--python", sys.executable, venv])
    run([uv_bin, "pip", "install", "-q", "--python", venv / "bin" / "python", "--no-deps",
         whl(wheelhouse, "demo_core-2.0.0")])
    return venv, env, run


def test_make_sources_deterministic(tmp_path):
    ms = _make_sources_module()
    a = ms.make_all(tmp_path / "a")
    b = ms.make_all(tmp_path / "b")
    assert a["sha256"] == b["sha256"]
    assert a["sha256"] == hashlib.sha256(Path(a["tarball"]).read_bytes()).hexdigest()
    with tarfile.open(a["tarball"]) as tf:
        members = tf.getmembers()
    assert {m.name.split("/")[0] for m in members} == {"fastext-1.0.0"}
    assert all(m.uid == m.gid == 0 and m.uname == m.gname == "" for m in members)
    assert len({m.mtime for m in members}) == 1
    assert "fastext-1.0.0/_backend/fastext_backend.py" in {m.name for m in members}
    pyproject = (Path(a["tree"]) / "pyproject.toml").read_text()
    assert 'requires = []\nbuild-backend = "fastext_backend"\nbackend-path = ["_backend"]' \
        in pyproject
    # the CLI prints the same description
    r = subprocess.run([sys.executable, str(MAKE_SOURCES), "--out", str(tmp_path / "c")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    c = json.loads(r.stdout)
    assert c["sha256"] == a["sha256"] and c["commits"] == a["commits"]
    if shutil.which("git"):
        assert len(a["commits"]) == 2 and a["commits"] == b["commits"]   # fixed dates/author
        assert a["repo_url"].startswith("file:///") and a["markers"] == ["commit-1", "commit-2"]
    # a custom tree: other name/version/marker/build requirements
    t = ms.write_source_tree(tmp_path / "t", name="otherpkg", version="2.0", marker="m",
                             requires=["demo-core>=1"])
    assert (t / "otherpkg" / "__init__.py").is_file()
    assert 'requires = ["demo-core>=1"]' in (t / "pyproject.toml").read_text()


def test_uv_build_offline_isolated_and_not(build_venv, sources, uv_bin, tmp_path):
    venv, _, run = build_venv
    py = venv / "bin" / "python"
    log = tmp_path / "builds.log"
    # isolated (the default): the backend runs in a throw-away venv under UV_CACHE_DIR
    r = run([uv_bin, "build", "--wheel", "--out-dir", tmp_path / "iso", "--python", py,
             sources["tree"]], FASTEXT_BUILD_LOG=log, TORCH_CUDA_ARCH_LIST="8.0;9.0",
            MAX_JOBS="3", FASTEXT_FLAVOR="iso")
    assert "compiling: " in r.stderr
    (wheel,) = (tmp_path / "iso").glob("*.whl")
    info = _check_wheel(wheel)
    assert info["TORCH_CUDA_ARCH_LIST"] == "8.0;9.0" and info["MAX_JOBS"] == "3"
    assert info["FASTEXT_FLAVOR"] == "iso" and info["APEX_CPP_EXT"] is None
    assert info["marker"] == sources["marker"] and info["python"] == sys.version
    assert Path(info["prefix"]) != venv and info["required_module"] is None
    # --no-build-isolation --python V: the backend runs with V's own interpreter and sees
    # V's site-packages (demo_core was installed there); isolated builds do not
    r = run([uv_bin, "build", "--wheel", "--out-dir", tmp_path / "noiso", "--python", py,
             "--no-build-isolation", sources["tree"]], FASTEXT_BUILD_LOG=log,
            FASTEXT_REQUIRE_MODULE="demo_core")
    info = _check_wheel(next((tmp_path / "noiso").glob("*.whl")))
    assert Path(info["prefix"]) == venv and Path(info["executable"]) == py
    assert info["required_module"]["file"].startswith(str(venv / "lib"))
    r = run([uv_bin, "build", "--wheel", "--out-dir", tmp_path / "iso2", "--python", py,
             sources["tree"]], check=False, FASTEXT_BUILD_LOG=log,
            FASTEXT_REQUIRE_MODULE="demo_core")
    assert r.returncode != 0 and "FASTEXT_REQUIRE_MODULE=demo_core cannot be imported" in r.stderr
    lines = log.read_text().splitlines()
    assert len(lines) == 3 and all(ln.endswith(" fastext 1.0.0") for ln in lines)
    # the built wheel installs and its C extension works
    run([uv_bin, "pip", "install", "-q", "--python", py, wheel])
    r = run([py, "-c", "import fastext, json; print(fastext.answer(), "
                       "json.dumps(fastext.BUILD_INFO))"])
    answer, doc = r.stdout.split(" ", 1)
    assert answer == "42" and json.loads(doc)["FASTEXT_FLAVOR"] == "iso"


def test_uv_build_tarball_and_failure(build_venv, sources, uv_bin, tmp_path):
    venv, _, run = build_venv
    py = venv / "bin" / "python"
    run([uv_bin, "build", "--wheel", "--out-dir", tmp_path / "out", "--python", py,
         sources["tarball"]])
    _check_wheel(next((tmp_path / "out").glob("*.whl")))
    r = run([uv_bin, "build", "--wheel", "--out-dir", tmp_path / "fail", "--python", py,
             "--no-build-isolation", sources["tree"]], check=False, FASTEXT_FAIL="1")
    assert r.returncode != 0
    assert "fastext_backend: FASTEXT_FAIL='1' is set, refusing to build fastext 1.0.0" in r.stderr
    assert not list((tmp_path / "fail").glob("*.whl"))


def test_pip_wheel_no_build_isolation(build_venv, sources, uv_bin, tmp_path):
    venv, _, run = build_venv
    py = venv / "bin" / "python"
    # uv venvs have no pip and PyPI is unreachable: install the interpreter's bundled pip
    bundled = sorted(Path(sysconfig.get_paths()["stdlib"], "ensurepip", "_bundled")
                     .glob("pip-*.whl"))
    if not bundled:
        pytest.skip("ensurepip has no bundled pip wheel")
    run([uv_bin, "pip", "install", "-q", "--python", py, bundled[-1]])
    log = tmp_path / "builds.log"
    run([py, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", tmp_path / "out",
         sources["tree"]], FASTEXT_BUILD_LOG=log, FASTEXT_REQUIRE_MODULE="demo_core",
        APEX_CPP_EXT="1", APEX_CUDA_EXT="1")
    info = _check_wheel(next((tmp_path / "out").glob("*.whl")))
    assert Path(info["prefix"]) == venv and info["APEX_CPP_EXT"] == info["APEX_CUDA_EXT"] == "1"
    assert len(log.read_text().splitlines()) == 1


def test_git_repo_shallow_fetch_by_sha(sources, tmp_path, clean_env):
    _need_git()
    env = clean_env({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})
    for sha, version, marker in zip(sources["commits"], sources["repo_versions"],
                                    sources["markers"]):
        t = tmp_path / sha[:8]
        for cmd in (["init", "-q", str(t)],
                    ["-C", str(t), "fetch", "-q", "--depth", "1", sources["repo_url"], sha],
                    ["-C", str(t), "checkout", "-q", "FETCH_HEAD"]):
            r = subprocess.run(["git", *cmd], env=env, capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, f"git {cmd}: {r.stderr}"
        r = subprocess.run(["git", "-C", str(t), "rev-list", "HEAD"], env=env,
                           capture_output=True, text=True, timeout=60)
        assert r.stdout.split() == [sha]                       # shallow: one commit
        pyproject = (t / "pyproject.toml").read_text()
        assert f'version = "{version}"' in pyproject and f'marker = "{marker}"' in pyproject
    assert sources["repo_versions"] == ["1.0.0", "1.1.0"]


def test_index_serves_plain_files_with_range(index_factory, sources, wheelhouse, tmp_path):
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    shutil.copy(whl(wheelhouse, "demo_core-2.0.0"), root / "src")
    shutil.copy(sources["tarball"], root / "src")
    data = Path(sources["tarball"]).read_bytes()
    name = Path(sources["tarball"]).name
    srv = index_factory(root=root)
    url = f"{srv.base_url}/src/files/{name}"
    status, body, resp = get(url)
    assert status == 200 and body == data and int(resp.headers["Content-Length"]) == len(data)
    assert hashlib.sha256(body).hexdigest() == sources["sha256"]
    assert resp.headers["Accept-Ranges"] == "bytes"
    req = urllib.request.Request(url, headers={"Range": "bytes=10-19"})
    with OPENER.open(req, timeout=5) as r:
        assert r.status == 206 and r.read() == data[10:20]
        assert r.headers["Content-Range"] == f"bytes 10-19/{len(data)}"
    req = urllib.request.Request(url, headers={"Range": "bytes=-5"})
    with OPENER.open(req, timeout=5) as r:
        assert r.status == 206 and r.read() == data[-5:]
    with pytest.raises(urllib.error.HTTPError) as e:
        get(urllib.request.Request(url, headers={"Range": f"bytes={len(data)}-"}))
    assert e.value.code == 416 and e.value.headers["Content-Range"] == f"bytes */{len(data)}"
    with pytest.raises(urllib.error.HTTPError) as e:
        get(url + ".metadata")
    assert e.value.code == 404
    # never indexed: only the wheel's project is listed
    _, page, _ = get(srv.url("src") + "/")
    assert "demo-core" in page.decode() and "fastext" not in page.decode()
    with pytest.raises(urllib.error.HTTPError) as e:
        get(srv.url("src") + "/fastext/")
    assert e.value.code == 404
    # faults and stats apply as for wheels
    srv.set_faults([{"match": r"\.tar\.gz$", "kind": "truncate", "bytes": 7, "times": 1}])
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    conn.request("GET", f"/src/files/{name}")
    resp = conn.getresponse()
    assert int(resp.headers["Content-Length"]) == len(data)
    with pytest.raises(http.client.IncompleteRead) as e:
        resp.read()
    assert e.value.partial == data[:7]
    conn.close()
    assert srv.stats()[f"/src/files/{name}"] == 5     # 200, 206, 206, 416, truncated


def test_uv_build_isolated_build_requires_from_index(build_venv, index, uv_bin, tmp_path):
    """Static ([build-system] requires) and dynamic (FASTEXT_BUILD_REQUIRES) build
    dependencies come from the index into uv's throw-away build env, not from V."""
    venv, _, run = build_venv
    tree = _make_sources_module().write_source_tree(tmp_path / "req", requires=["demo-core"])
    r = run([uv_bin, "build", "--wheel", "--out-dir", tmp_path / "out", "--python",
             venv / "bin" / "python", "--index-url", index.url(), tree],
            FASTEXT_BUILD_REQUIRES="demo-utils", FASTEXT_REQUIRE_MODULE="demo_utils")
    info = _check_wheel(next((tmp_path / "out").glob("*.whl")))
    assert not info["required_module"]["file"].startswith(str(venv))
    assert index.count(r"/files/demo_(core|utils)-.*\.whl$") == 2
