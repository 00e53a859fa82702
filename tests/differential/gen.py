"""Random cases for the differential test (run.py), one generator per op.

Every generator takes a random.Random and returns one case (a dict with "op" and its inputs,
as driver.cpp reads them). Inputs are mostly well formed, spelled in the many ways the PEPs
allow, and now and then mutated (a character dropped, doubled or swapped for a neighbour of
the grammar) so that the parsers' edges are walked too. Classes of input where bootstrap
differs from the reference on purpose are not generated; run.py's header lists them.
"""

from __future__ import annotations

import hashlib
import json
import random
import re

# --- PEP 440 versions -------------------------------------------------------------------------

PRE_SPELLINGS = {"a": ["a", "alpha", "A", "Alpha"], "b": ["b", "beta", "B"], "rc": ["rc", "c", "pre", "preview", "RC"]}
POST_SPELLINGS = ["post", "rev", "r", "POST"]
SEPARATORS = ["", ".", "-", "_"]
# Characters a mutation inserts: the grammar's own, its neighbours, and a few that only look
# like them (a Unicode digit, a long s that case-folds to 's').
JUNK = list(".-_+!*v0123456789abcdeprstv =<>~,;()[]@\t") + ["\u0661", "\u017f", "\u00e9"]


def version_parts(rng: random.Random, base: list[int] | None = None) -> dict:
    """The segments of a version: a release (or `base`) and random pre/post/dev/local ones."""
    release = list(base) if base else [rng.choice([0, 1, 1, 2, 3, 10, 2024])] + [
        rng.choice([0, 0, 1, 2, 5, 10]) for _ in range(rng.choice([0, 1, 1, 2, 3]))
    ]
    parts = {"epoch": rng.choice([0] * 12 + [1, 2]), "release": release,
             "pre": None, "post": None, "dev": None, "local": None}
    if rng.random() < 0.3:
        parts["pre"] = (rng.choice(["a", "b", "rc"]), rng.choice([None, 0, 1, 2, 10]))
    if rng.random() < 0.25:
        parts["post"] = rng.choice([None, 0, 1, 2])
    if rng.random() < 0.25:
        parts["dev"] = rng.choice([None, 0, 1, 3])
    if rng.random() < 0.15:
        segments = ["ubuntu", "cu121", "1", "abc", "0", "git", "007"]
        parts["local"] = [rng.choice(segments) for _ in range(rng.choice([1, 1, 2, 3]))]
    return parts


def spell_version(rng: random.Random, p: dict, messy: bool = True) -> str:
    """One spelling of the version `p`: canonical, or (messy) any PEP 440 allows."""

    def num(n: int) -> str:
        return ("0" * rng.choice([0, 0, 0, 1, 2]) + str(n)) if messy else str(n)

    def messy_segment(words: list[str], n: int) -> str:
        """A post or dev segment: separators around the word, the number sometimes implicit."""
        return rng.choice(SEPARATORS) + rng.choice(words) + rng.choice(SEPARATORS) + (
            num(n) if n or rng.random() < 0.5 else "")

    out = ""
    if messy and rng.random() < 0.1:
        out += rng.choice(["v", "V"])
    if p["epoch"]:
        out += f"{num(p['epoch'])}!"
    out += ".".join(num(n) for n in p["release"])
    if p["pre"]:
        label, n = p["pre"]
        spelled = rng.choice(PRE_SPELLINGS[label]) if messy else label
        out += (rng.choice(SEPARATORS) if messy else "") + spelled
        if n is not None or not messy:
            out += (rng.choice(SEPARATORS) if messy else "") + num(n or 0)
    if p["post"] is not None:
        n = p["post"]
        if messy and rng.random() < 0.2:
            out += f"-{num(n)}"  # the implicit post-release
        elif messy:
            out += messy_segment(POST_SPELLINGS, n)
        else:
            out += f".post{n}"
    if p["dev"] is not None:
        n = p["dev"]
        if messy:
            out += messy_segment(["dev", "DEV"], n)
        else:
            out += f".dev{n}"
    if p["local"]:
        seps = [rng.choice([".", "-", "_"]) if messy else "." for _ in p["local"]]
        out += "+" + "".join(s + seg for s, seg in zip([""] + seps, p["local"]))
    if messy and rng.random() < 0.05:
        out = rng.choice([" ", "\t", "\n", "  "]) + out + rng.choice(["", " ", "\n"])
    return out


def mutate(rng: random.Random, s: str, count: int = 1) -> str:
    """`s` with `count` random edits: a character removed, inserted, doubled or replaced."""
    for _ in range(count):
        i = rng.randrange(len(s) + 1)
        kind = rng.randrange(4)
        if kind == 0 and s:
            i = min(i, len(s) - 1)
            s = s[:i] + s[i + 1 :]
        elif kind == 1:
            s = s[:i] + rng.choice(JUNK) + s[i:]
        elif kind == 2 and s:
            i = min(i, len(s) - 1)
            s = s[: i + 1] + s[i:]
        elif s:
            i = min(i, len(s) - 1)
            s = s[:i] + rng.choice(JUNK) + s[i + 1 :]
    return s


def random_version(rng: random.Random, base: list[int] | None = None, messy: float = 0.5, mutation: float = 0.1) -> str:
    text = spell_version(rng, version_parts(rng, base), messy=rng.random() < messy)
    if rng.random() < mutation:
        text = mutate(rng, text, rng.choice([1, 1, 2]))
    return text


def gen_version_parse(rng: random.Random) -> dict:
    return {"op": "version_parse", "v": random_version(rng, mutation=0.25)}


# A few releases, so that two random versions often share one and their pre/post/dev/local
# segments decide the order.
FAMILY = [[1], [1, 0], [1, 0, 0], [1, 1], [2], [2, 0], [0, 9], [1, 0, 1]]


def gen_version_compare(rng: random.Random) -> dict:
    pa = version_parts(rng, rng.choice(FAMILY))
    r = rng.random()
    if r < 0.25:  # the same version, spelled another way (or with trailing zeros)
        pb = {**pa, "release": pa["release"] + [0] * rng.choice([0, 0, 1, 2])}
    elif r < 0.6:  # one segment changed
        key = rng.choice(["pre", "post", "dev", "local", "release"])
        pb = {**pa, key: version_parts(rng, rng.choice(FAMILY))[key]}
    else:
        pb = version_parts(rng, rng.choice(FAMILY))
    a, b = spell_version(rng, pa, messy=rng.random() < 0.5), spell_version(rng, pb, messy=rng.random() < 0.5)
    if rng.random() < 0.02:
        a = mutate(rng, a)
    if rng.random() < 0.5:
        a, b = b, a
    return {"op": "version_compare", "a": a, "b": b}


# --- PEP 440 specifiers -----------------------------------------------------------------------

OPERATORS = ["==", "!=", "<=", ">=", "<", ">", "~=", "==="]


def random_specifier(rng: random.Random, base: list[int]) -> str:
    op = rng.choice(OPERATORS + ["<", ">", "==", "<", ">"])  # more of the exclusive ones
    version = random_version(rng, base, messy=0.3, mutation=0.0).strip()
    if op in ("==", "!=") and rng.random() < 0.3:
        # A prefix match; after a pre, post or dev segment it is invalid (PEP 440).
        if rng.random() < 0.7:
            release_only = {**version_parts(rng, base), "pre": None, "post": None, "dev": None, "local": None}
            version = spell_version(rng, release_only, messy=False)
        version += ".*"
    if op == "===" and rng.random() < 0.3:
        version = rng.choice(["foobar", "1.0-custom", "2.0.0+build.5", "1.0.0rc1", "1.0"])
    space = rng.choice(["", "", " ", "  "])
    return rng.choice(["", " "]) + op + space + version + rng.choice(["", "", " "])


def random_specifier_set(rng: random.Random, base: list[int], mutation: float = 0.1) -> str:
    count = rng.choice([1, 1, 1, 2, 2, 3])
    text = ",".join(random_specifier(rng, base) for _ in range(count))
    if rng.random() < mutation:
        text = mutate(rng, text)
    return text


def gen_specifier_parse(rng: random.Random) -> dict:
    return {"op": "specifier_parse", "spec": random_specifier_set(rng, rng.choice(FAMILY), mutation=0.3)}


def gen_specifier_contains(rng: random.Random) -> dict:
    base = rng.choice(FAMILY)
    spec = random_specifier_set(rng, base, mutation=0.02)
    candidate = random_version(rng, rng.choice([base, base, rng.choice(FAMILY)]), messy=0.2, mutation=0.0)
    if rng.random() < 0.05:
        candidate = candidate.upper()  # === compares case-insensitively
    return {"op": "specifier_contains", "spec": spec, "v": candidate}


# --- PEP 508 markers --------------------------------------------------------------------------

VERSION_VALUES = {
    "python_version": ["2.7", "3.8", "3.10", "3.11", "3.12", "3.13", "4.0"],
    "python_full_version": ["3.8.10", "3.11.2", "3.12.3", "3.12.3+", "3.13.0rc1", "3.9.0b5", "3.10.0", "3.14.0a1+"],
    "implementation_version": ["3.11.2", "3.12.0", "7.3.13", "3.13.0a2", "3.10.0rc1"],
    # Kernel releases and Windows/macOS ones: most are not PEP 440 versions.
    "platform_release": ["6.1.0-18-amd64", "5.15.0-1051-azure", "10.0.19041", "NT", "22.6.0", "6.8.0", "4.19.112+",
                         "5.10.0-rc1", ""],
}
STRING_VALUES = {
    "os_name": ["posix", "nt", "java"],
    "sys_platform": ["linux", "win32", "darwin", "cygwin", "emscripten"],
    "platform_machine": ["x86_64", "aarch64", "AMD64", "arm64", "ppc64le", "i686"],
    "platform_system": ["Linux", "Windows", "Darwin", "Java", ""],
    "platform_version": ["#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1", "Darwin Kernel Version 22.6.0", "10.0.19041", "1.0"],
    "platform_python_implementation": ["CPython", "PyPy", "Jython", "IronPython"],
    "implementation_name": ["cpython", "pypy", "graalpy"],
    "extra": ["", "test", "Foo_Bar", "foo-bar", "doc", "tests"],
}
# The legacy spellings packaging still reads, each for its PEP 508 name.
ALIASES = {
    "os_name": ["os.name"],
    "sys_platform": ["sys.platform"],
    "platform_version": ["platform.version"],
    "platform_machine": ["platform.machine"],
    "platform_python_implementation": ["platform.python_implementation", "python_implementation"],
}
SET_NAMES = ["test", "doc", "Dev_Tools", "dev-tools", "lint", "Foo.Bar"]
# Literals a version variable is compared with: versions, prefixes, and strings that are not.
VERSION_LITERALS = ["3", "3.8", "3.11", "3.12.3", "3.12", "3.13.0rc1", "3.*", "3.11.*", "2.7", "6", "6.1", "6.1.0",
                    "5.15.0-1051-azure", "6.1.0-18-amd64", "10.0", "NT", "22", "4.19.112", "abc", "", "3.12.3+local"]
MARKER_OPS = ["==", "!=", "<", "<=", ">", ">=", "~=", "===", "in", "not in"]
WS = ["", " ", " ", "  ", "\t"]


def quote(rng: random.Random, text: str) -> str:
    if '"' in text:
        return f"'{text}'"
    if "'" in text:
        return f'"{text}"'
    q = rng.choice(["'", '"'])
    return q + text + q


def marker_atom(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.12:  # PEP 751: "name" in extras / dependency_groups
        var = rng.choice(["extras", "dependency_groups"])
        return f"{quote(rng, rng.choice(SET_NAMES))}{rng.choice(WS[1:])}{rng.choice(['in', 'not in'])} {var}"
    if r < 0.55:
        var = rng.choice(list(VERSION_VALUES))
        literal = rng.choice(VERSION_LITERALS + VERSION_VALUES[var])
        op = rng.choice(MARKER_OPS[:8] + ["<", ">", "in"])
    else:
        var = rng.choice(list(STRING_VALUES))
        literal = rng.choice(STRING_VALUES[var] + ["lin", "x86", "Foo.Bar", "3.11"])
        ops = ["==", "!=", "==", "in", "not in", "<", ">", "<=", ">="]
        op = rng.choice(ops + (["~=", "==="] if rng.random() < 0.2 else []))
        if var in ALIASES and rng.random() < 0.2:
            var = rng.choice(ALIASES[var])
    sp1, sp2 = rng.choice(WS), rng.choice(WS)
    if op in ("in", "not in"):
        sp1, sp2 = sp1 or " ", sp2 or " "
    if rng.random() < 0.2:  # the literal on the left
        return f"{quote(rng, literal)}{sp1}{op}{sp2}{var}"
    return f"{var}{sp1}{op}{sp2}{quote(rng, literal)}"


def random_marker(rng: random.Random, depth: int = 0) -> str:
    if depth >= 3 or rng.random() < 0.45:
        atom = marker_atom(rng)
        return f"({rng.choice(WS)}{atom}{rng.choice(WS)})" if rng.random() < 0.1 else atom
    parts = [random_marker(rng, depth + 1) for _ in range(rng.choice([2, 2, 3]))]
    out = parts[0]
    for p in parts[1:]:
        out += f"{rng.choice([' ', '  '])}{rng.choice(['and', 'or'])}{rng.choice([' ', '  '])}{p}"
    return f"({out})" if depth and rng.random() < 0.6 else out


def random_env(rng: random.Random) -> dict:
    env = {var: rng.choice(values) for var, values in {**VERSION_VALUES, **STRING_VALUES}.items()}
    for var in ("extras", "dependency_groups"):
        env[var] = rng.sample(SET_NAMES, rng.choice([0, 0, 1, 2, 3]))
    return env


def gen_marker_evaluate(rng: random.Random) -> dict:
    marker = random_marker(rng)
    if rng.random() < 0.08:
        marker = mutate(rng, marker)
    return {"op": "marker_evaluate", "marker": marker, "envs": [random_env(rng) for _ in range(4)]}


# --- PEP 508 requirements ---------------------------------------------------------------------


def random_name(rng: random.Random, valid: float = 0.9) -> str:
    words = ["requests", "Django", "zope", "interface", "foo", "Bar", "a", "x1", "torch", "nvidia", "cu12", "py"]
    name = rng.choice(words)
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        name += rng.choice(["-", "_", ".", "--", "._", "-_-"]) + rng.choice(words)
    if rng.random() > valid:
        name = rng.choice([mutate(rng, name), "-" + name, name + ".", "_" + name, name + "\u00e9", "\u00c4" + name,
                           name.upper()])
    return name


URLS = ["https://example.com/pkg-1.0.tar.gz", "https://files.example/x/pkg-2.0-py3-none-any.whl#sha256=" + "ab" * 32,
        "file:///tmp/pkg", "git+https://github.com/pypa/pip.git@1.3.1#egg=pip", "http://127.0.0.1:8000/a;b/c.whl"]


def gen_requirement_parse(rng: random.Random) -> dict:
    text = random_name(rng) + rng.choice(["", "", " "])
    if rng.random() < 0.3:
        extras = [random_name(rng, valid=0.97) for _ in range(rng.choice([0, 1, 2, 3]))]
        text += "[" + rng.choice([",", ", ", " , "]).join(extras) + "]" + rng.choice(["", " "])
    url = rng.random() < 0.15
    if url:
        text += rng.choice(["@", " @ ", "@ "]) + rng.choice(URLS)
    elif rng.random() < 0.7:
        specs = random_specifier_set(rng, rng.choice(FAMILY), mutation=0.0)
        text += f"({specs})" if rng.random() < 0.2 else specs
    if rng.random() < 0.35:
        text += (" " if url else rng.choice(["", " "])) + ";" + rng.choice(["", " "]) + random_marker(rng, depth=1)
    if rng.random() < 0.1:
        text = mutate(rng, text)
    return {"op": "requirement_parse", "req": text}


# --- PEP 427 wheel file names -----------------------------------------------------------------

PYTHON_TAGS = ["py3", "py2.py3", "cp311", "cp312", "pp310", "py38.py39", "cp313t"]
ABI_TAGS = ["none", "abi3", "cp311", "cp312d", "cp313t", "none.abi3"]
PLATFORM_TAGS = ["any", "manylinux_2_17_x86_64.manylinux2014_x86_64", "linux_x86_64", "win_amd64",
                 "macosx_11_0_arm64", "musllinux_1_2_aarch64", "manylinux1_x86_64.manylinux_2_5_x86_64"]


def gen_wheel_name(rng: random.Random) -> dict:
    # The binary distribution format's escaping: a run of -_. becomes one '_' ('.' and upper
    # case stay readable: older wheels have them).
    name = re.sub(r"[-_.]+", lambda m: "." if m.group() == "." and rng.random() < 0.3 else "_",
                  random_name(rng, valid=1.0))
    version = random_version(rng, messy=0.2, mutation=0.0).strip()
    if "-" in version and rng.random() < 0.8:
        version = version.replace("-", "_")
    parts = [name, version]
    if rng.random() < 0.25:
        parts.append(rng.choice(["1", "2", "0042", "1a", "3_linux", "12abc"]))
    parts += [rng.choice(PYTHON_TAGS), rng.choice(ABI_TAGS), rng.choice(PLATFORM_TAGS)]
    filename = "-".join(parts) + rng.choice([".whl"] * 20 + [".WHL", ".tar.gz", ""])
    if rng.random() < 0.1:
        filename = mutate(rng, filename)
    return {"op": "wheel_name", "filename": filename}


def gen_normalize(rng: random.Random) -> dict:
    if rng.random() < 0.7:
        name = random_name(rng, valid=0.8)
    else:
        name = "".join(rng.choice("aAzZ09-_. .-_" + "\u00c4\u017f") for _ in range(rng.randrange(0, 10)))
    return {"op": "normalize", "name": name}


# --- PEP 503 / PEP 691 project pages ----------------------------------------------------------

PAGE_URLS = ["https://index.example/simple/pkg/", "https://user:secret@mirror.example:8443/root/simple/pkg/",
             "http://127.0.0.1:8000/simple/pkg/", "https://index.example/simple/pkg/index.html"]
BASES = ["https://files.example/packages/", "https://cdn.example/a/b/c", "http://127.0.0.1:9000/"]


def file_names(rng: random.Random) -> str:
    version = spell_version(rng, version_parts(rng), messy=False)
    kind = rng.random()
    if kind < 0.6:
        tags = "-".join([rng.choice(PYTHON_TAGS), rng.choice(ABI_TAGS), rng.choice(PLATFORM_TAGS)])
        return f"pkg-{version}-{tags}.whl"
    return f"pkg-{version}" + rng.choice([".tar.gz", ".zip", ".tar.bz2"])


def digest(rng: random.Random) -> str:
    return hashlib.sha256(str(rng.random()).encode()).hexdigest()


def quote_path(rng: random.Random, name: str) -> str:
    """`name` as an index writes it in a URL: '+' raw or as %2B, now and then more escaped."""
    name = name.replace("+", rng.choice(["+", "%2B", "%2b"]))
    if rng.random() < 0.05:
        name = name.replace("-", "%2D", 1)
    return name


def href_for(rng: random.Random, name: str, page: str) -> str:
    """A link to `name`: absolute, host-relative, or relative to the page (or base)."""
    path = quote_path(rng, name)
    kind = rng.random()
    if kind < 0.3:
        return f"https://files.example/packages/{rng.choice(['ab/cd/', '', 'x/'])}{path}"
    if kind < 0.45:
        return f"/packages/{path}"
    if kind < 0.65:
        return f"../../packages/{path}"
    if kind < 0.75:
        return f"//other.example/p/{path}"
    if kind < 0.8:
        return f"./{path}?download=1"
    return path


def fragment(rng: random.Random, name: str) -> str:
    r = rng.random()
    if r < 0.35:
        return "#sha256=" + digest(rng)
    if r < 0.45:
        return "#sha256=" + digest(rng).upper()
    if r < 0.55:  # pip's hash-fragment reading: the first known hash, its value up to '&'
        return "#sha256=" + digest(rng) + rng.choice(["&egg=pkg", "&amp;egg=pkg", "&#38;egg=pkg", "&subdirectory=x"])
    if r < 0.6:
        return "#egg=pkg&sha256=" + digest(rng)
    if r < 0.65:
        return "#md5=" + digest(rng)[:32]
    if r < 0.7:
        return "#md5=" + digest(rng)[:32] + "&sha256=" + digest(rng)
    if r < 0.75:
        return "#sha512=" + digest(rng) + digest(rng)
    if r < 0.8:
        return "#egg=pkg"
    return ""


def anchor(rng: random.Random, href: str) -> str:
    attrs = []
    q = rng.choice(['"', '"', "'", ""])
    if q == "" and any(c in href for c in " \t\n'\"=<>`"):
        q = '"'
    attrs.append(f"{rng.choice(['href', 'href', 'HREF'])}={q}{href}{q}")
    if rng.random() < 0.3:
        attrs.append('data-requires-python="' + rng.choice(["&gt;=3.8", "&gt;=3.7,&lt;4", ">=3.9"]) + '"')
    if rng.random() < 0.2:
        attrs.append(rng.choice(['data-yanked=""', 'data-yanked="broken build"', "data-yanked='bad'"]))
    if rng.random() < 0.1:
        attrs.append('data-dist-info-metadata="sha256=' + digest(rng) + '"')
    if rng.random() < 0.3:
        rng.shuffle(attrs)
    sep = rng.choice([" ", " ", "\n  ", "  "])
    return f"<{rng.choice(['a', 'a', 'A'])} {sep.join(attrs)}>{rng.choice(['pkg', 'file', ''])}</a>"


def gen_index_page_html(rng: random.Random) -> dict:
    page = rng.choice(PAGE_URLS)
    head = ["<!DOCTYPE html>", "<html>", "<head>", "<meta name=\"pypi:repository-version\" content=\"1.0\">"]
    if rng.random() < 0.2:
        head.append(f'<base href="{rng.choice(BASES)}">')
    if rng.random() < 0.15:  # raw text: an <a> in a script or a style is no link
        head.append(rng.choice(['<script>var s = \'<a href="evil-1.0.tar.gz">x</a>\';</script>',
                                "<style>a[href='x'] { color: red }</style>",
                                '<SCRIPT type="text/javascript">document.write("<a href=\\"evil.whl\\">")</SCRIPT>']))
    head += ["<title>Links for pkg</title>", "</head>", "<body>", "<h1>Links for pkg</h1>"]
    body = []
    for _ in range(rng.choice([0, 1, 2, 3, 4, 6])):
        name = file_names(rng)
        href = href_for(rng, name, page) + fragment(rng, name)
        href = href.replace("&", "&amp;") if rng.random() < 0.5 and "&amp;" not in href and "&#" not in href else href
        if rng.random() < 0.08:  # leading whitespace, and tabs and newlines inside the URL
            href = rng.choice([" ", "\n", "\t "]) + href
        if rng.random() < 0.04:
            at = rng.randrange(1, len(href))
            href = href[:at] + rng.choice(["\n", "\t"]) + href[at:]
        body.append(anchor(rng, href) + rng.choice(["<br/>", "<br>", "\n", ""]))
    if rng.random() < 0.1:
        body.insert(rng.randrange(len(body) + 1), "<!-- <a href=\"commented-1.0.tar.gz\">old</a> -->")
    html = "\n".join(head + body + ["</body>", "</html>"])
    content_type = rng.choice(["text/html", "text/html; charset=utf-8", "application/vnd.pypi.simple.v1+html"])
    return {"op": "index_page_html", "body": html, "url": page, "content_type": content_type}


def gen_index_page_json(rng: random.Random) -> dict:
    page = rng.choice(PAGE_URLS[:3])
    files = []
    for _ in range(rng.choice([0, 1, 2, 3, 5])):
        name = file_names(rng)
        entry = {"filename": name, "url": href_for(rng, name, page), "hashes": {}}
        if rng.random() < 0.8:
            entry["hashes"]["sha256"] = digest(rng) if rng.random() < 0.9 else digest(rng).upper()
        if rng.random() < 0.2:
            entry["hashes"]["blake2b"] = digest(rng) + digest(rng)
        if rng.random() < 0.1:
            entry["url"] += "#sha256=" + digest(rng)
        if rng.random() < 0.3:
            entry["requires-python"] = rng.choice([">=3.8", ">=3.7,<4", ""])
        if rng.random() < 0.3:
            entry["yanked"] = rng.choice([True, False, "broken build", ""])
        if rng.random() < 0.2:
            entry["core-metadata"] = rng.choice([True, {"sha256": digest(rng)}])
        files.append(entry)
    doc = {"meta": {"api-version": rng.choice(["1.0", "1.1", "1.4"])}, "name": "pkg", "files": files}
    if rng.random() < 0.3:
        doc["versions"] = ["1.0"]
    body = json.dumps(doc, indent=rng.choice([None, 2]))
    return {"op": "index_page_json", "body": body, "url": page, "content_type": "application/vnd.pypi.simple.v1+json"}


# --- what is left out -------------------------------------------------------------------------

TAG_CHARS = re.compile(r"[A-Za-z0-9_]+\Z")


def wheel_name_difference(filename: str) -> str | None:
    if not filename.endswith(".whl"):
        return None
    parts = filename[:-4].split("-")
    if len(parts) not in (5, 6):
        return None
    name = parts[0]
    if "__" in name or name[:1] in ("_", ".") or name[-1:] in ("_", ".") or not name.isascii():
        return "wheel name part: '__', a leading or trailing '_' or '.', or not ASCII"
    for i, tag in enumerate(parts[-3:]):
        for part in tag.split("."):
            if part and not TAG_CHARS.match(part):
                return "wheel tag: a character beyond [A-Za-z0-9_]"
            if i == 0 and part and not part.isidentifier():
                return "wheel python tag: not an identifier"
    return None


def known_difference(case: dict) -> str | None:
    """The class of known difference `case` belongs to (run.py's header lists them), or None.
    Such cases are not generated; the hand-written ones are left out and counted."""
    op = case["op"]
    texts = [v for k, v in case.items() if isinstance(v, str) and k != "op"]
    if op in ("version_parse", "version_compare", "specifier_parse", "specifier_contains", "requirement_parse"):
        if any(re.search(r"[0-9]{19,}", t) for t in texts):
            return "a version number beyond 64 bits"
    if op in ("specifier_parse", "specifier_contains") and case["spec"].strip():
        if any(not item.strip() for item in case["spec"].split(",")):
            return "an empty item in a specifier list"
    if op == "specifier_contains" and "===" in case["spec"] and case["v"] != case["v"].strip():
        return "=== against a candidate with whitespace around it"
    if op == "requirement_parse":
        req = case["req"]
        if re.search(r",\s*(\)|;|\Z)", req):
            return "a trailing comma in a requirement's specifier list"
        if re.search(r"[A-Za-z0-9._-]_+(?![A-Za-z0-9._-])", req.split("@")[0].split(";")[0]):
            return "a requirement name or extra ending in '_'"
        if re.search(r"===\s*[^\s;)]*[^\x00-\x7f]", req):
            return "=== text beyond ASCII in a requirement"
    if op in ("requirement_parse", "marker_evaluate") and any("\n" in t or "\r" in t for t in texts):
        return "a newline as whitespace in PEP 508"
    if op == "wheel_name":
        return wheel_name_difference(case["filename"])
    if op == "normalize" and not case["name"].isascii():
        return "a name beyond ASCII"
    return None


# How many of each op a run makes, per 100 cases.
WEIGHTS = {
    gen_version_parse: 14,
    gen_version_compare: 12,
    gen_specifier_parse: 10,
    gen_specifier_contains: 20,
    gen_marker_evaluate: 14,
    gen_requirement_parse: 10,
    gen_wheel_name: 7,
    gen_normalize: 5,
    gen_index_page_html: 5,
    gen_index_page_json: 3,
}


def generate(rng: random.Random, count: int, only: set[str] | None = None) -> list[dict]:
    gens = [g for g in WEIGHTS if only is None or g.__name__.removeprefix("gen_") in only]
    cases = []
    while len(cases) < count:
        case = rng.choices(gens, weights=[WEIGHTS[g] for g in gens])[0](rng)
        if known_difference(case) is None:
            cases.append(case)
    return cases
