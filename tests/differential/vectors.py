"""Hand-written cases for the differential test (run.py), derived from the PEP texts: the
examples and rules of PEP 440 (versions, specifiers), PEP 508 (requirements, markers), PEP 427
and PEP 425 (wheel names and tags), PEP 503 (names, HTML pages), PEP 592 (yanked files), PEP 691
(JSON pages) and PEP 751 (the `extras` and `dependency_groups` markers). They run on every seed.
"""

from __future__ import annotations

import itertools
import json

from gen import random_env

# PEP 440, "Summary of permitted suffixes and relative ordering", in ascending order, followed
# by the epoch examples of "Version epochs".
ORDERED = ["1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456", "1.0b2",
           "1.0b2.post345.dev456", "1.0b2.post345", "1.0rc1.dev456", "1.0rc1", "1.0", "1.0+abc.5", "1.0+abc.7",
           "1.0+5", "1.0.post456.dev34", "1.0.post456", "1.0.15", "1.1.dev1"]
EPOCHS = ["2013.10", "2014.04", "1!1.0", "1!1.1", "1!2.0"]

# PEP 440, "Normalization": each spelling and, where it is valid, what it means.
SPELLINGS = ["1.0", "1.1RC1", "1.0a1", "1.0-a1", "1.0.a1", "1.0_a1", "1.0alpha1", "1.0beta2", "1.0c1", "1.0pre1",
             "1.0preview1", "1.0rc1", "1.0a.1", "1.0a-1", "1.0a", "1.0.post", "1.0-r4", "1.0rev4", "1.0.post0",
             "1.0-1", "1.0-post1", "1.0post1", "1.0-dev", "1.0dev", "1.0.dev0", "1.0-dev2", "1.0+ubuntu-1",
             "1.0+Ubuntu_1", "1.0+ubuntu.1", "v1.0", "V1.0", "  1.0\n", "\t1.0 ", "01.02.03", "00", "09000",
             "1.0.0.0", "2012.04", "1!1.0", "01!1.0", "1.0+abc.007", "1.0+0", "1.0a1.post2.dev3",
             "1.0.post1.dev1", "1.0RC1.POST2.DEV3"]
# Texts PEP 440 does not allow.
INVALID_VERSIONS = ["", " ", "1.0.*", "1.0+", "1.0+.", "1.0+a..b", "1.0+_a", "1.0.dev1.post1", "1.0-", "1..0",
                    ".1", "1.", "1.0a1b1", "1.0+\u00e4", "a1.0", "1.0 1", "1!", "!1.0", "1.0-+1", "1.0++1",
                    "1.0.post1.a1", "vv1.0", "1.0rc1rc2", "1.0+abc-", "1-0", "1.0\u0661"]

# PEP 440, "Version specifiers": (specifier, candidate) pairs its rules speak of.
CONTAINS = [
    # "Compatible release": ~= V.N means >= V.N, == V.*
    ("~= 2.2", "2.2"), ("~= 2.2", "2.3"), ("~= 2.2", "3.0"), ("~= 2.2", "2.1"), ("~=1.4.5", "1.4.9"),
    ("~=1.4.5", "1.5.0"), ("~= 2.2.post3", "2.2.post4"), ("~= 2.2.post3", "2.9"), ("~= 2.2.post3", "2.2"),
    ("~= 1.4.5a4", "1.4.5"), ("~= 1.4.5a4", "1.4.5a3"), ("~= 1.4.5a4", "1.5"), ("~= 1.4.5.0", "1.4.5.9"),
    ("~= 1.4.5.0", "1.4.6"), ("~=2.2.0", "2.2.1"), ("~=2.2.0", "2.3"), ("~=1!2.2", "1!2.5"), ("~=1!2.2", "2.5"),
    # "Version matching": strict, prefix (zero-padded), and local labels
    ("== 1.1", "1.1.post1"), ("== 1.1", "1.1a1"), ("== 1.1.post1", "1.1.post1"), ("== 1.1.*", "1.1.post1"),
    ("==1.1.*", "1.1a1"), ("==1.1.*", "1.10"), ("== 3.1", "3.1.0"), ("==3.1.0", "3.1"), ("==3.1.*", "3.1.0.dev1"),
    ("==3.1.0.*", "3.1"), ("==1.7.1", "1.7.1+local"), ("==1.7.1+local", "1.7.1"),
    ("==1.7.1+local", "1.7.1+local"), ("==1.7.1+local", "1.7.1+Local"), ("==1.7.1+local", "1.7.1+local.2"),
    ("==1.0+abc.007", "1.0+abc.7"), ("==1!1.*", "1!1.5"), ("==1!1.*", "1.5"), ("==1.*", "1!1.5"),
    ("!= 1.1.*", "1.1.post1"), ("!= 1.1.*", "1.2"), ("!=1.1", "1.1+local"), ("!=1.1+local", "1.1"),
    # "Inclusive ordered comparison": local labels are ignored
    ("<=2.0", "2.0+local"), (">=2.0", "2.0+local"), (">=2.0", "2.0.dev1"), ("<=2.0", "2.0.post1"),
    # "Exclusive ordered comparison": >V excludes V's post-releases unless V is one, and local
    # versions of V; <V excludes V's pre-releases unless V is one
    (">1.7", "1.7.1"), (">1.7", "1.7.0.post1"), (">1.7", "1.7+local"), (">1.7.post2", "1.7.1"),
    (">1.7.post2", "1.7.0.post3"), (">1.7.post2", "1.7.0"), (">1.7.post2", "1.7.0.post2+local"),
    (">1.7a1", "1.7a1.post1"), (">1.7a1", "1.7a2"), (">1.7a1", "1.7"), (">1.7.dev1", "1.7.post1"),
    ("<3.1", "3.1.dev0"), ("<3.1", "3.1a1"), ("<3.1", "3.0.post1"), ("<3.1", "3.1+local"),
    ("<3.1rc1", "3.1b1"), ("<3.1rc1", "3.1rc1.dev1"), ("<3.1.post1", "3.1rc1"), ("<3.1.post1", "3.1.post1.dev0"),
    ("<3.1.dev5", "3.1.dev4"), ("<3.1.dev5", "3.1a0"),
    # "Arbitrary equality": the text, not the version
    ("===1.0", "1.0"), ("===1.0", "1.0.0"), ("===1.0", "1.0+local"), ("===1.01", "1.1"), ("===1.0a1", "1.0A1"),
    # "Handling of pre-releases": a specifier naming one lets them in
    (">=1.0", "2.0a1"), (">=1.0a1", "2.0a1"), ("!=1.0a1", "2.0a1"), ("==2.0a1", "2.0a1"), ("<=2.0.dev1", "1.5b1"),
    ("", "1.0a1"), ("", "1.0"), (">=1.0,<2.0", "1.5"), (">=1.0,!=1.5", "1.5"), (">=1.0,<2.0", "2.0rc1"),
]
INVALID_SPECIFIERS = ["~=1", "~= 1.*", ">=1.0.*", "<1.0.*", "<1.0+local", ">=1.0+local", "~=1.0+local",
                      "==1.0a1.*", "==1.0.post1.*", "==1.0.dev1.*", "==1.*.0", "=1.0", "=>1.0", "1.0", ">= ",
                      "==", "== 1.0 2.0", ">=1.0;", "===", "<>1.0", "!==1.0", "~==1.0", ">=1.0,,<2.0",
                      # `===` takes any text, ".*" too (and then names no pre-release)
                      "===1.0a1.*", "===1.0a1", "=== foobar"]

# PEP 508, "Test cases" of its complete grammar, and the examples of its text.
REQUIREMENTS = [
    "A", "A.B-C_D", "aa", "name", "name<=1", "name>=3", "name>=3,<2", "name@http://foo.com",
    "name [fred,bar] @ http://foo.com ; python_version=='2.7'",
    "name[quux, strange];python_version<'2.7' and platform_version=='2'",
    "name; os_name=='a' or os_name=='b'",
    "name; os_name=='a' and os_name=='b' or os_name=='c'",
    "name; os_name=='a' and (os_name=='b' or os_name=='c')",
    "name; os_name=='a' or os_name=='b' and os_name=='c'",
    "name; (os_name=='a' or os_name=='b') and os_name=='c'",
    'requests [security,tests] >= 2.8.1, == 2.8.* ; python_version < "2.7"',
    "pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee9982d4bbb3c72346a6de940a148ea686",
    "name (>=1.0, <2.0)", "name[]", "name[ A_b , c.D ]>=1", "name ; extra == 'Foo_Bar'",
    # Not PEP 508: the grammar needs a name, one extra per comma, a space before a URL's ';'.
    "", ">=1.0", "name[a b]", "name[a,]", "name @ http://foo.com; os_name=='a'", "name @", "-name", "name-",
    "name>=1.0 extra", "name;", "name (>=1.0", "name[a", "name; os_name", "name; os_name=='a' and",
]
MARKERS = [
    'python_version < "2.7"', "os_name == 'posix'", '"2.7" < python_version', "python_version >= '3'",
    'python_version > "3.8" and sys_platform == "linux"', "platform_machine in 'x86_64 aarch64'",
    "'linux' in sys_platform", "os_name not in 'nt java'", 'python_full_version >= "3.12.3"',
    'python_full_version == "3.12.3+"', "implementation_name == 'cpython' or implementation_name == 'pypy'",
    'platform_release >= "6"', 'platform_release < "7"', 'platform_release == "6.1.0-18-amd64"',
    "platform_release != '6.1.0'", 'platform_system ~= "Linux"', 'python_version ~= "3.11"',
    'python_version ~= "3"', "python_version == '3.*'", "python_version != '3.1*'", 'python_version === "3.11"',
    "extra == 'test'", 'extra == "Foo.Bar"', "'test' == extra", "extra != 'doc'",
    # PEP 751: membership in the sets of extras and dependency groups a lock file installs
    "'test' in dependency_groups", "'dev-tools' in extras", "'Dev_Tools' in extras", "'lint' not in extras",
    "'test' not in dependency_groups and 'doc' in extras",
    # Not PEP 508
    "", "python_version", "python_version == 3.8", "os_name = 'posix'", "unknown_var == 'x'",
    "(python_version == '3.8'", "python_version == '3.8')", "python_version == '3.8' and or os_name == 'nt'",
    "python_version == \"3.8'",
]

# PEP 427 / PEP 425 wheel names.
WHEELS = ["distribution-1.0-1-py27-none-any.whl", "distribution-1.0-py27-none-any.whl",
          "pip-1.3.1-py2.py3-none-any.whl", "foo-1.0-cp33-cp33m-linux_x86_64.whl",
          "Foo_Bar-2.0.0-py3-none-any.whl", "foo.bar-2.0-py3-none-any.whl", "foo-1.0-2a-py3-none-any.whl",
          "foo-1.0-py2.py3-none.abi3-manylinux1_x86_64.manylinux_2_5_x86_64.whl", "foo-1.0+local-py3-none-any.whl",
          "foo-1.0.post1-PY3-None-ANY.whl", "foo-1!1.0-py3-none-any.whl",
          # Not PEP 427
          "foo-1.0-a-py27-none-any.whl", "foo-1.0-py3-any.whl", "foo-1.0-1-2-py3-none-any.whl",
          "foo-1.0-py3-none-any", "foo-1.0-py3-none-any.zip", "foo-bar-1.0-py3-none-any.whl",
          "foo-not.a.version-py3-none-any.whl", "foo-1.0-py3.-none-any.whl", "foo-1.0--none-any.whl",
          "-1.0-py3-none-any.whl"]

# PEP 503, "Normalized Names".
NAMES = ["friendly-bard", "Friendly-Bard", "FRIENDLY-BARD", "friendly.bard", "friendly_bard", "friendly--bard",
         "FrIeNdLy-._.-bArD", "", "-", "a", "a-", "_a", "1", "a b"]

SHA = "f1a0" * 16
# PEP 503's example page, with PEP 503's optional attributes and PEP 592's data-yanked.
PEP503_PAGE = f"""<!DOCTYPE html>
<html>
  <body>
    <a href="/frob-1.0.tar.gz#sha256={SHA}">frob-1.0.tar.gz</a>
    <a href="/frob-1.1.tar.gz#md5=0123456789abcdef0123456789abcdef" data-requires-python="&gt;=3">frob-1.1.tar.gz</a>
    <a href="frob-1.2-py3-none-any.whl#sha256={SHA}" data-yanked="">frob-1.2-py3-none-any.whl</a>
    <a href="frob-1.3-py3-none-any.whl" data-yanked="Broken release">frob-1.3-py3-none-any.whl</a>
  </body>
</html>
"""
# PEP 691's example response, in JSON.
PEP691_PAGE = json.dumps({
    "meta": {"api-version": "1.0"},
    "name": "holygrail",
    "files": [
        {"filename": "holygrail-1.0.tar.gz", "url": "https://example.com/files/holygrail-1.0.tar.gz",
         "hashes": {"sha256": SHA, "blake2b": "ab" * 32}, "requires-python": ">=3.7", "yanked": "Had a vulnerability"},
        {"filename": "holygrail-1.0-py3-none-any.whl",
         "url": "https://example.com/files/holygrail-1.0-py3-none-any.whl",
         "hashes": {"sha256": SHA}, "requires-python": ">=3.7", "dist-info-metadata": True},
        {"filename": "holygrail-1.1.tar.gz", "url": "../../files/holygrail-1.1.tar.gz", "hashes": {}, "yanked": False},
    ],
})
PAGES = [
    ("index_page_html", PEP503_PAGE, "text/html"),
    ("index_page_html", f'<a href="x-1.0.tar.gz#sha256={SHA}&amp;egg=x">x</a>', "text/html"),
    ("index_page_html", f'<base href="https://files.example/p/"><a href="x-1.0.tar.gz#sha256={SHA}">x</a>',
     "text/html"),
    ("index_page_html", '<script>"<a href=\'evil-1.0.tar.gz\'>"</script><a href="x-1.0+cu121.tar.gz">x</a>',
     "text/html"),
    ("index_page_html", '<a href="\n  x-1.0.tar.gz">x</a><a href="x-1.%0A1.tar.gz">y</a>', "text/html"),
    ("index_page_html", '<!-- <a href="old-1.0.tar.gz"> --><a href="x-1.0%2Bcu121.tar.gz">x</a>', "text/html"),
    # HTML's bogus comments: <!...> and <?...> end at the first '>'
    ("index_page_html", '<![CDATA[<a href="old-1.0.tar.gz">]]><?xml version="1.0"?><a href="x-1.0.tar.gz">x</a>',
     "text/html"),
    ("index_page_json", PEP691_PAGE, "application/vnd.pypi.simple.v1+json"),
    ("index_page_json", json.dumps({"meta": {"api-version": "1.1"}, "name": "x", "files": [
        {"filename": "x-1.0.tar.gz", "url": f"x-1.0.tar.gz#sha256={SHA}", "hashes": {"sha256": "ab" * 32}}]}),
     "application/vnd.pypi.simple.v1+json"),
]


def hand_cases() -> list[dict]:
    import random

    rng = random.Random(440)  # fixed: the same environments on every seed
    envs = [random_env(rng) for _ in range(6)]
    cases = [{"op": "version_parse", "v": v} for v in ORDERED + EPOCHS + SPELLINGS + INVALID_VERSIONS]
    pairs = itertools.chain(itertools.product(ORDERED, repeat=2), itertools.product(EPOCHS + SPELLINGS[:12], repeat=2))
    cases += [{"op": "version_compare", "a": a, "b": b} for a, b in pairs]
    cases += [{"op": "specifier_parse", "spec": s} for s, _ in CONTAINS]
    cases += [{"op": "specifier_parse", "spec": s} for s in INVALID_SPECIFIERS]
    cases += [{"op": "specifier_contains", "spec": s, "v": v} for s, v in CONTAINS]
    cases += [{"op": "requirement_parse", "req": r} for r in REQUIREMENTS]
    cases += [{"op": "marker_evaluate", "marker": m, "envs": envs} for m in MARKERS]
    cases += [{"op": "wheel_name", "filename": w} for w in WHEELS]
    cases += [{"op": "normalize", "name": n} for n in NAMES]
    for op, body, content_type in PAGES:
        page = "https://index.example/simple/frob/"
        cases.append({"op": op, "body": body, "url": page, "content_type": content_type})
    return cases
