"""Write bootstrap recipe files for the integration tests.

    write_recipe(dir, steps=[venv(), install("core", ["demo-core"], index_url=URL)], ...)

Steps are plain dicts (key order kept); `toml_value` renders str/bool/int/float, lists and
inline tables, so a recipe file reads like a hand-written one. Helpers return the path written
and, through `line_of`, let tests compute the exact line:col the binary must report.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string is JSON-compatible for our texts
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot render {v!r} as TOML")


def render_recipe(*, steps: list[dict], name: str = "itest", venv_path: str = "venv",
                  python: str = "3.11", installer: str = "uv", network: dict | None = None,
                  vars: dict | None = None, env: dict | None = None, header: str = "") -> str:
    lines = ["schema = 1", f"name = {toml_value(name)}"]
    if header:
        lines.append(header.rstrip("\n"))
    if vars:
        lines.append("")
        lines.append("[vars]")
        lines += [f"{k} = {toml_value(v)}" for k, v in vars.items()]
    lines += ["", "[venv]", f"path = {toml_value(venv_path)}", f"python = {toml_value(python)}",
              f"installer = {toml_value(installer)}"]
    net = {"timeout": 10, "retries": 1, "attempts": 1}
    if network is not None:
        net.update(network)
    lines += ["", "[network]"] + [f"{k} = {toml_value(v)}" for k, v in net.items()]
    if env:
        lines += ["", "[env]"] + [f"{k} = {toml_value(v)}" for k, v in env.items()]
    for step in steps:
        lines += ["", "[[step]]"] + [f"{k} = {toml_value(v)}" for k, v in step.items()]
    return "\n".join(lines) + "\n"


def write_recipe(directory: Path, filename: str = "recipe.toml", **kwargs) -> Path:
    path = Path(directory) / filename
    path.write_text(render_recipe(**kwargs))
    return path


def line_of(path: Path, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """1-based (line, column) of the `occurrence`-th line containing `needle`, column of
    the needle's first character."""
    seen = 0
    for i, line in enumerate(Path(path).read_text().splitlines(), start=1):
        col = line.find(needle)
        if col >= 0:
            seen += 1
            if seen == occurrence:
                return i, col + 1
    raise AssertionError(f"{needle!r} not found in {path}")


# ---------------------------------------------------------------------------- step builders

def venv(id: str = "venv", **extra) -> dict:
    return {"id": id, "kind": "venv", **extra}


def install(id: str, packages: list[str], index_url: str | None = None, **extra) -> dict:
    step = {"id": id, "kind": "install", "packages": list(packages)}
    if index_url is not None:
        step["index_url"] = index_url
    step.update(extra)
    return step


def run(id: str, argv: list[str], **extra) -> dict:
    return {"id": id, "kind": "run", "argv": list(argv), **extra}


def check(id: str, verify: list[dict], **extra) -> dict:
    return {"id": id, "kind": "check", "verify": verify, **extra}


def sync(id: str, project: str, **extra) -> dict:
    return {"id": id, "kind": "sync", "project": project, **extra}


def uv_project(world, dependencies: str = "demo-core<2") -> Path:
    """A local uv project (`world.root / "proj"`) whose one dependency comes from the fixture index."""
    project = world.root / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "itest-proj"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
        f'dependencies = ["{dependencies}"]\n\n'
        f'[[tool.uv.index]]\nname = "fixture"\nurl = "{world.index.url()}"\ndefault = true\n')
    return project


def imp(module: str, attr: str | None = None) -> dict:
    return {"import": module} if attr is None else {"import": module, "attr": attr}


def file(path: str) -> dict:
    return {"file": path}


def steps_by_id(doc: dict) -> dict:
    """{step id: step} of a `run --json` document."""
    return {s["id"]: s for s in doc["steps"]}


STAMP = "{venv.path}/helpers{python.ext_suffix}.stamp"

# Upper bound for a no-op re-run in tests. Typically well under 0.1 s; the skip itself is proven
# by every step's result and by the index seeing no request, so this bound only has to catch a
# run that does real work, with room for a loaded 2-core CI machine. bench/noop.sh measures it.
NOOP_SECONDS = 5.0


def pipeline(index) -> list[dict]:
    """The demo pipeline's shape (venv, torch from the cu130 index, a knowing cublas upgrade
    over torch's pin, a reinstall with import checks, a build-like run step, a final check)."""
    return [
        venv(),
        install("torch", ["demo-torch==2.11.0+cu130"], index_url=index.url("main"),
                extra_index_urls=[index.url("cu130")], verify=[imp("demo_torch")]),
        install("cublas", ["nvidia-cublas>=13.4.1.1"], index_url=index.url("main"),
                upgrade=True, allow_conflicts=["demo-torch"],
                verify=[imp("nvidia_cublas", "HAS_GROUPED_GEMM")]),
        install("transformers", ["transformers", "wandb"], index_url=index.url("main"),
                reinstall=True, verify=[imp("transformers", "AutoTokenizer"), imp("wandb")]),
        run("helpers", ["{venv.python}", "-c",
                        "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('built\\n')",
                        STAMP], creates=STAMP),
        check("check", [imp("demo_torch"), file(STAMP)]),
    ]


def torch_and_fastext(world, sources, **fastext_extra) -> tuple[Path, list[dict]]:
    """A project directory `world.root/project` holding a copy of the fixture source `fastext`,
    and the steps venv, demo-torch from the loopback index, and a build of fastext from that copy
    (`fastext_extra` adds keys to the build step): (project, steps)."""
    project = world.root / "project"
    project.mkdir()
    shutil.copytree(sources["tree"], project / "fastext")
    steps = [venv(),
             install("torch", ["demo-torch==2.11.0+cu130"], index_url=world.index.url("main"),
                     extra_index_urls=[world.index.url("cu130")], verify=[imp("demo_torch")]),
             {"id": "fastext", "kind": "build", "source": {"path": "fastext"}, **fastext_extra,
              "verify": [imp("fastext", "answer")]}]
    return project, steps


PIPELINE_IDS = ["venv", "torch", "cublas", "transformers", "helpers", "check"]
PIPELINE_VERSIONS = {"demo-torch": "2.11.0+cu130", "nvidia-cublas": "13.4.1.1",
                     "transformers": "4.57.1", "regex": "2024.1.0", "wandb": "0.22.0",
                     "click": "8.1.7", "platformdirs": "4.3.6", "demo-requests": "2.32.3"}


def write(world, steps, **kw) -> Path:
    """The world's recipe.toml with these steps."""
    return write_recipe(world.root, steps=steps, **kw)


def ok(proc):
    """`proc`, after asserting it exited 0 (its output in the message otherwise)."""
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc
