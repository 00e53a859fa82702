#!/usr/bin/env python3
"""Loopback PEP 503 "simple" package index with fault injection.

    python3 testworld/index_server.py --root OUT_DIR [--port 0] [--host 127.0.0.1]
                                      [--port-file F] [--faults FAULTS.json]

Every sub-directory of --root is an index group holding *.whl files (and, optionally,
other plain files such as source tarballs, which are served but never indexed):

    GET /<group>/simple/                  project list (HTML, PEP 503; wheels only)
    GET /<group>/simple/<project>/        file links with #sha256=..., data-requires-python
                                          and PEP 658/714 data-(dist-info|core)-metadata
    GET /<group>/files/<filename>         bytes of any regular, non-hidden file directly in
                                          the group directory, wheel or not (Content-Length,
                                          single Range -> 206/416, faults and stats as usual)
    GET /<group>/files/<filename>.metadata  the wheel's METADATA (PEP 658)

Non-normalised project names are redirected (301) to the PEP 503 normalised URL.

Control endpoints (never counted, never faulted):

    GET  /_stats    JSON {path: number of requests received}
    POST /_reset    clear those counters
    GET  /_faults   JSON list of current rules, each with "applied" (times it fired)
    POST /_faults   JSON list of rules (or {"rules": [...]}) replaces the configuration
                    and re-arms all rule counters

Fault rules (JSON list, evaluated in order for every non-control request):

    {"match": "<regex searched in the URL path>", "kind": "status", "status": 503, "times": 2}
                                                  ("headers": {"Retry-After": "99999"} adds those)
    {"kind": "delay", "seconds": 3, "times": N}   sleep, then keep evaluating later rules
    {"kind": "drop", "times": N}                  close without a response ("reset": true -> RST)
    {"kind": "truncate", "bytes": K, "times": N}  full headers + Content-Length, only K body bytes
    {"kind": "hang", "times": N, "seconds": S}    no answer until the client gives up
                                                  (or S seconds, default 3600, or shutdown)
    {"kind": "trickle", "rate": R, "times": N}    the normal answer (Range honoured), its body sent
                                                  at R bytes/s (default 2) until the client leaves
    {"kind": "endless", "times": N}               200 without Content-Length and a body of zeros
                                                  that never ends, at full speed ("rate": R to
                                                  slow it) until the client leaves

"match" omitted matches every path; "times" omitted means always; "method" (optional)
restricts a rule to one HTTP method.  A rule whose "times" is used up is skipped.
The first matching non-delay rule decides the request.

Standard library only.
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import html
import json
import os
import re
import select
import signal
import socket
import struct
import sys
import threading
import time
import zipfile
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

FAULT_KINDS = ("status", "delay", "drop", "truncate", "hang", "trickle", "endless")
_GROUP_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def log(msg: str) -> None:
    sys.stderr.write(f"[index {time.strftime('%H:%M:%S')}] {msg}\n")
    sys.stderr.flush()


# --------------------------------------------------------------------- wheel catalogue

class FileInfo:
    __slots__ = ("path", "name", "sha256", "size", "requires_python", "metadata",
                 "metadata_sha256")

    def __init__(self, path: Path):
        self.path = path
        self.name = path.name
        data = path.read_bytes()
        self.size = len(data)
        self.sha256 = hashlib.sha256(data).hexdigest()
        self.requires_python = None
        self.metadata = None
        self.metadata_sha256 = None
        try:
            if not self.name.endswith(".whl"):
                raise zipfile.BadZipFile("not a wheel")
            with zipfile.ZipFile(path) as zf:
                for n in zf.namelist():
                    parts = n.split("/")
                    if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "METADATA":
                        self.metadata = zf.read(n)
                        break
        except (zipfile.BadZipFile, OSError):
            pass
        if self.metadata is not None:
            self.metadata_sha256 = hashlib.sha256(self.metadata).hexdigest()
            msg = email.parser.BytesParser().parsebytes(self.metadata, headersonly=True)
            self.requires_python = msg.get("Requires-Python")


class Catalogue:
    """Directory scan cache: rescans a group when its directory mtime changes."""

    def __init__(self, root: Path):
        self.root = root
        self._lock = threading.Lock()
        self._groups: dict[str, tuple[int, dict[str, list[FileInfo]], dict[str, FileInfo]]] = {}
        self._files: dict[tuple[str, int, int], FileInfo] = {}

    def groups(self) -> list[str]:
        try:
            return sorted(p.name for p in self.root.iterdir()
                          if p.is_dir() and _GROUP_RE.match(p.name))
        except FileNotFoundError:
            return []

    def group(self, group: str):
        """Return (projects: {normalized: [FileInfo]}, files: {filename: FileInfo}) or None.

        `projects` lists wheels, and sdists (`NAME-VERSION.tar.gz`/`.zip`) when the group
        directory holds a file `.list-sdists`; `files` holds every regular, non-hidden file."""
        if not _GROUP_RE.match(group):
            return None
        gdir = self.root / group
        try:
            mtime = gdir.stat().st_mtime_ns
        except (FileNotFoundError, NotADirectoryError):
            return None
        with self._lock:
            cached = self._groups.get(group)
            if cached and cached[0] == mtime:
                return cached[1], cached[2]
            projects: dict[str, list[FileInfo]] = {}
            files: dict[str, FileInfo] = {}
            list_sdists = (gdir / ".list-sdists").is_file()
            for p in sorted(gdir.iterdir()):
                if not p.is_file() or p.name.startswith("."):
                    continue
                st = p.stat()
                key = (str(p), st.st_size, st.st_mtime_ns)
                info = self._files.get(key)
                if info is None:
                    info = self._files[key] = FileInfo(p)
                if p.name.endswith(".whl"):
                    projects.setdefault(normalize(p.name.split("-", 1)[0]), []).append(info)
                elif list_sdists and p.name.endswith((".tar.gz", ".zip")) and "-" in p.name:
                    stem = p.name[:-7] if p.name.endswith(".tar.gz") else p.name[:-4]
                    projects.setdefault(normalize(stem.rsplit("-", 1)[0]), []).append(info)
                files[p.name] = info
            self._groups[group] = (mtime, projects, files)
            return projects, files


# --------------------------------------------------------------------- faults

class Faults:
    def __init__(self, rules=None):
        self._lock = threading.Lock()
        self._rules: list[dict] = []
        self.set(rules or [])

    @staticmethod
    def validate(rules) -> list[dict]:
        if isinstance(rules, dict) and "rules" in rules:
            rules = rules["rules"]
        if not isinstance(rules, list):
            raise ValueError("fault configuration must be a JSON list of rules")
        out = []
        for i, r in enumerate(rules):
            if not isinstance(r, dict):
                raise ValueError(f"rule {i}: not an object")
            kind = r.get("kind")
            if kind not in FAULT_KINDS:
                raise ValueError(f"rule {i}: kind must be one of {FAULT_KINDS}, got {kind!r}")
            rule = {k: v for k, v in r.items() if k != "applied"}
            rule["_re"] = re.compile(r.get("match") or "")
            times = r.get("times")
            if times is not None and (not isinstance(times, int) or times < 0):
                raise ValueError(f"rule {i}: times must be a non-negative integer")
            if kind == "status":
                rule.setdefault("status", 503)
                int(rule["status"])
            if kind == "delay":
                float(rule.setdefault("seconds", 1))
            if kind == "hang":
                float(rule.setdefault("seconds", 3600))
            if kind == "truncate":
                rule.setdefault("bytes", 0)
                if int(rule["bytes"]) < 0:
                    raise ValueError(f"rule {i}: bytes must be >= 0")
            if kind == "trickle" and float(rule.setdefault("rate", 2)) <= 0:
                raise ValueError(f"rule {i}: rate must be > 0")
            if kind == "endless" and rule.get("rate") is not None and float(rule["rate"]) <= 0:
                raise ValueError(f"rule {i}: rate must be > 0")
            if "headers" in rule and not (isinstance(rule["headers"], dict) and all(
                    isinstance(k, str) and isinstance(v, str) for k, v in rule["headers"].items())):
                raise ValueError(f"rule {i}: headers must be an object of strings")
            rule["applied"] = 0
            out.append(rule)
        return out

    def set(self, rules) -> None:
        validated = self.validate(rules)
        with self._lock:
            self._rules = validated

    def describe(self) -> list[dict]:
        with self._lock:
            return [{k: v for k, v in r.items() if k != "_re"} for r in self._rules]

    def pick(self, method: str, path: str) -> list[tuple[int, dict]]:
        """Claim the rules that fire for this request: any delays, then at most one terminal."""
        fired = []
        with self._lock:
            for i, r in enumerate(self._rules):
                if r.get("method") and r["method"].upper() != method:
                    continue
                if not r["_re"].search(path):
                    continue
                if r.get("times") is not None and r["applied"] >= r["times"]:
                    continue
                r["applied"] += 1
                fired.append((i, dict(r)))
                if r["kind"] != "delay":
                    break
        return fired


# --------------------------------------------------------------------- server

class IndexServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, root: Path, faults: Faults):
        super().__init__(addr, Handler)
        self.catalogue = Catalogue(root)
        self.faults = faults
        self.stats: dict[str, int] = {}
        self.stats_lock = threading.Lock()
        self.stopping = threading.Event()
        self.cache_max_age: int | None = None


class Handler(BaseHTTPRequestHandler):
    server: IndexServer
    protocol_version = "HTTP/1.1"
    def version_string(self):
        return "bootstrap-testworld-index/1"

    # quiet default access log; we log ourselves
    def log_message(self, fmt, *args):  # noqa: D401
        pass

    def _log(self, status, fault="-", extra=""):
        log(f"{self.command} {self.path} {status} fault={fault}{extra}")

    # ---- plumbing
    def _send(self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8",
              headers: dict | None = None, truncate: int | None = None, fault="-"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if truncate is not None or self._trickle is not None:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            payload = body if truncate is None else body[:truncate]
            try:
                if self._trickle is not None:
                    self._write_slowly(payload, self._trickle)
                else:
                    self.wfile.write(payload)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
        self._log(status, fault, f" bytes={len(body) if truncate is None else truncate}/{len(body)}"
                  if self.command != "HEAD" else "")

    def _json(self, status: int, obj, **kw):
        self._send(status, (json.dumps(obj, indent=1, sort_keys=True) + "\n").encode(),
                   "application/json", **kw)

    def _redirect(self, location: str):
        self.send_response(301)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self._log(301, extra=f" -> {location}")

    def _read_body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    _trickle: float | None = None  # bytes/s of the body being sent, from a "trickle" rule

    def _write_slowly(self, payload: bytes, rate: float) -> None:
        """Write `payload` at `rate` bytes/s (ten writes a second at most); stop early on
        shutdown. Raises BrokenPipeError/ConnectionResetError when the client leaves."""
        step = max(1, int(rate / 10))
        for at in range(0, len(payload), step):
            if self.server.stopping.is_set():
                raise BrokenPipeError("shutting down")
            self.wfile.write(payload[at:at + step])
            self.wfile.flush()
            if at + step < len(payload):
                time.sleep(step / rate)

    def _endless(self, rate: float | None, fault_desc: str):
        """200, no Content-Length, zeros until the client goes away (or shutdown)."""
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        sent = 0
        block = bytes(65536 if rate is None else max(1, int(rate / 10)))
        try:
            while not self.server.stopping.is_set():
                self.wfile.write(block)
                sent += len(block)
                if rate is not None:
                    self.wfile.flush()
                    time.sleep(len(block) / rate)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        self._log(200, fault_desc, f" endless: client left after {sent} bytes")

    def do_GET(self):
        self._dispatch()

    def do_HEAD(self):
        self._dispatch()

    def do_POST(self):
        self._dispatch()

    # ---- control endpoints
    def _control(self, path: str):
        srv = self.server
        if path == "/_stats" and self.command in ("GET", "HEAD"):
            with srv.stats_lock:
                snap = dict(srv.stats)
            return self._json(200, snap)
        if path == "/_reset" and self.command == "POST":
            self._read_body()
            with srv.stats_lock:
                srv.stats.clear()
            return self._json(200, {"ok": True})
        if path == "/_faults" and self.command in ("GET", "HEAD"):
            return self._json(200, srv.faults.describe())
        if path == "/_faults" and self.command == "POST":
            try:
                srv.faults.set(json.loads(self._read_body() or b"[]"))
            except (ValueError, TypeError, re.error) as e:
                return self._json(400, {"error": str(e)})
            return self._json(200, srv.faults.describe())
        return self._json(404, {"error": f"no control endpoint {self.command} {path}"})

    # ---- request handling
    def _dispatch(self):
        path = unquote(urlsplit(self.path).path)
        if path.startswith("/_"):
            return self._control(path)
        if self.command == "POST":
            self._read_body()
        srv = self.server
        with srv.stats_lock:
            srv.stats[path] = srv.stats.get(path, 0) + 1

        truncate = None
        self._trickle = None
        fault_desc = "-"
        for idx, rule in srv.faults.pick(self.command, path):
            kind = rule["kind"]
            desc = f"{kind}#{idx}"
            if kind == "delay":
                log(f"{self.command} {self.path} delaying {rule['seconds']}s (rule {idx})")
                if srv.stopping.wait(float(rule["seconds"])):
                    self.close_connection = True
                    return
                fault_desc = desc if fault_desc == "-" else f"{fault_desc},{desc}"
                continue
            fault_desc = desc if fault_desc == "-" else f"{fault_desc},{desc}"
            if kind == "status":
                status = int(rule["status"])
                try:
                    reason = HTTPStatus(status).phrase
                except ValueError:
                    reason = "Injected"
                return self._send(status, f"{status} {reason} (injected fault)\n".encode(),
                                  "text/plain; charset=utf-8", headers=rule.get("headers"),
                                  fault=fault_desc)
            if kind == "endless":
                return self._endless(float(rule["rate"]) if rule.get("rate") else None,
                                     fault_desc)
            if kind == "trickle":
                self._trickle = float(rule["rate"])
            if kind == "drop":
                return self._drop(bool(rule.get("reset")), fault_desc)
            if kind == "hang":
                return self._hang(float(rule["seconds"]), fault_desc)
            if kind == "truncate":
                truncate = int(rule["bytes"])
        self._serve(path, truncate, fault_desc)

    def _drop(self, reset: bool, fault_desc: str):
        self.close_connection = True
        if reset:
            try:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
            except OSError:
                pass
        self._log("dropped", fault_desc)

    def _hang(self, seconds: float, fault_desc: str):
        self._log("hanging", fault_desc)
        self.close_connection = True
        deadline = time.monotonic() + seconds
        sock = self.connection
        while not self.server.stopping.is_set() and time.monotonic() < deadline:
            try:
                r, _, _ = select.select([sock], [], [], 0.2)
                if r and not sock.recv(1, socket.MSG_PEEK):
                    break  # client closed
                if r:
                    time.sleep(0.2)  # pipelined bytes; keep ignoring them
            except (OSError, ValueError):
                break
        log(f"{self.command} {self.path} hang ended")

    def _serve(self, path: str, truncate, fault_desc: str):
        cat = self.server.catalogue
        parts = path.split("/")  # "", group, kind, ...
        if path == "/":
            links = "".join(f'<a href="/{quote(g)}/simple/">{html.escape(g)}</a><br/>\n'
                            for g in cat.groups())
            return self._send(200, _page("Index groups", links), truncate=truncate,
                              fault=fault_desc)
        if len(parts) < 3:
            return self._not_found(fault_desc)
        group, kind = parts[1], parts[2]
        found = cat.group(group)
        if found is None:
            return self._not_found(fault_desc)
        projects, files = found

        if kind == "simple":
            rest = [p for p in parts[3:]]
            if rest in ([], [""]):
                if not path.endswith("/"):
                    return self._redirect(f"/{group}/simple/")
                links = "".join(
                    f'<a href="/{quote(group)}/simple/{quote(p)}/">{html.escape(p)}</a><br/>\n'
                    for p in sorted(projects))
                return self._send(200, _page("Simple index", links), truncate=truncate,
                                  fault=fault_desc, headers=self._cache_headers({}))
            if len(rest) > 2 or (len(rest) == 2 and rest[1] != ""):
                return self._not_found(fault_desc)
            name = rest[0]
            norm = normalize(name)
            if name != norm:
                return self._redirect(f"/{group}/simple/{quote(norm)}/")
            if norm not in projects:
                return self._not_found(fault_desc)
            lines = []
            for info in projects[norm]:
                attrs = f'href="/{quote(group)}/files/{quote(info.name)}#sha256={info.sha256}"'
                if info.requires_python:
                    attrs += f' data-requires-python="{html.escape(info.requires_python)}"'
                if info.metadata_sha256:
                    attrs += (f' data-dist-info-metadata="sha256={info.metadata_sha256}"'
                              f' data-core-metadata="sha256={info.metadata_sha256}"')
                lines.append(f"<a {attrs}>{html.escape(info.name)}</a><br/>\n")
            return self._send(200, _page(f"Links for {norm}", "".join(lines)),
                              truncate=truncate, fault=fault_desc,
                              headers=self._cache_headers({"X-PyPI-Last-Serial": "1"}))

        if kind == "files" and len(parts) == 4:
            fname = parts[3]
            if fname not in files and fname.endswith(".metadata") and fname[:-9] in files:
                info = files[fname[:-9]]
                if info.metadata is None:
                    return self._not_found(fault_desc)
                return self._send(200, info.metadata, "application/octet-stream",
                                  headers=self._cache_headers({}, immutable=True),
                                  truncate=truncate, fault=fault_desc)
            info = files.get(fname)
            if info is None:
                return self._not_found(fault_desc)
            try:
                data = info.path.read_bytes()
            except FileNotFoundError:
                return self._not_found(fault_desc)
            headers = self._cache_headers({"Accept-Ranges": "bytes"}, immutable=True)
            rng = self.headers.get("Range")
            m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip()) if rng else None
            if m and (m.group(1) or m.group(2)):
                size = len(data)
                if m.group(1):
                    start = int(m.group(1))
                    end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
                else:
                    start, end = max(0, size - int(m.group(2))), size - 1
                if start >= size or start > end:
                    return self._send(416, b"", "text/plain",
                                      headers={"Content-Range": f"bytes */{size}"},
                                      fault=fault_desc)
                headers["Content-Range"] = f"bytes {start}-{end}/{size}"
                return self._send(206, data[start:end + 1], "application/octet-stream",
                                  headers=headers, truncate=truncate, fault=fault_desc)
            return self._send(200, data, "application/octet-stream", headers=headers,
                              truncate=truncate, fault=fault_desc)
        return self._not_found(fault_desc)

    def _cache_headers(self, headers: dict, immutable: bool = False) -> dict:
        """PyPI-like caching, only with --cache-max-age: pages max-age=N, files immutable."""
        if self.server.cache_max_age is not None:
            headers["Cache-Control"] = ("max-age=365000000, immutable, public" if immutable
                                        else f"max-age={self.server.cache_max_age}, public")
        return headers

    def _not_found(self, fault_desc="-"):
        self._send(404, b"404 Not Found\n", "text/plain; charset=utf-8", fault=fault_desc)


def _page(title: str, body: str) -> bytes:
    return ("<!DOCTYPE html>\n<html>\n<head>\n"
            '<meta name="pypi:repository-version" content="1.0">\n'
            f"<title>{html.escape(title)}</title>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n{body}</body>\n</html>\n").encode()


def _write_port_file(path: Path, port: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(f"{port}\n")
    os.replace(tmp, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Loopback PEP 503 index with fault injection")
    ap.add_argument("--root", type=Path, required=True, help="wheelhouse: one dir per group")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--port-file", type=Path, help="written atomically once listening")
    ap.add_argument("--faults", type=Path, help="JSON list of fault rules")
    ap.add_argument("--cache-max-age", type=int, metavar="SECONDS",
                    help="PyPI-like caching: Cache-Control max-age=SECONDS on simple pages and "
                         "'immutable' on files/metadata; default: no Cache-Control at all")
    args = ap.parse_args(argv)

    rules = []
    if args.faults:
        try:
            rules = json.loads(args.faults.read_text())
            Faults.validate(rules)
        except (OSError, ValueError, re.error) as e:
            print(f"index_server: bad --faults file: {e}", file=sys.stderr)
            return 2
    if not args.root.is_dir():
        print(f"index_server: --root {args.root} is not a directory", file=sys.stderr)
        return 2

    server = IndexServer((args.host, args.port), args.root.resolve(), Faults(rules))
    server.cache_max_age = args.cache_max_age
    port = server.server_address[1]
    stop = threading.Event()

    def on_signal(signum, _frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              name="serve", daemon=True)
    thread.start()
    if args.port_file:
        _write_port_file(args.port_file, port)
    print(f"listening on http://{args.host}:{port}", flush=True)
    log(f"serving {args.root} groups={server.catalogue.groups()} faults={len(rules)}")
    while not stop.wait(0.1):
        pass
    log("shutting down")
    server.stopping.set()
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
