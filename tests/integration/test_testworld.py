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
        {"match": "demo-core", "kind": "delay", "seconds": 1.0, "times": 1},
        {"match": "demo-utils", "kind": "hang", "times": 1},
    ])
    t0 = time.monotonic()
    with pytest.raises((TimeoutError, urllib.error.URLError)):
        get(index.url() + "/demo-core/", timeout=0.3)
    assert time.monotonic() - t0 < 0.9
    with pytest.raises((TimeoutError, urllib.error.URLError)):
        get(index.url() + "/demo-utils/", timeout=0.3)
    t0 = time.monotonic()
    assert get(index.url() + "/demo-core/")[0] == 200      # rule used up: fast again
    assert get(index.url() + "/demo-utils/")[0] == 200
    assert time.monotonic() - t0 < 0.5
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
    t0 = time.monotonic()
    srv.stop()
    assert srv.proc.returncode == 0 and time.monotonic() - t0 < 3


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
