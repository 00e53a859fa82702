"""Slurm bring-up (scripts/slurm/*.sbatch) on a real Slurm: Debian's slurm-wlm and munge run a
four-node cluster on this one host (slurmctld plus four `slurmd -N nK`, one slurm.conf, auth by
a munged with a generated key). Each "node" brings up the demo recipe plus a `fastext` build
step from the fixture index into its own venv (standing for node-local disk):

- the shared-cache way: one build, three build cache hits, four manifests, `fleet diff` finds no
  drift; a node changed behind bootstrap's back is then named with its package;
- the pack way: one node builds and packs, sbcast copies the pack, every node unpacks (verified),
  `fleet diff` finds no drift;
- the baseline: four nodes with their own caches build four times; a node that fails is named
  and fails the job; missing parameters are named.

Every daemon the fixture starts is stopped by its pid, also when a test fails. Skipped (never
passed) where slurm-wlm or munge is not installed (scripts/setup.sh --test-tools installs them)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import recipes as R
from recipes import steps_by_id
from test_build import build_info, build_step, builds, cache_entries

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts" / "slurm"
NODES = ["n1", "n2", "n3", "n4"]
DAEMONS = ("munged", "slurmctld", "slurmd")


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Cluster:
    """munged, slurmctld and one slurmd per node, each a foreground process this object owns."""

    def __init__(self, root: Path):
        self.root = root
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.conf = root / "slurm.conf"
        self.socket = root / "munge.socket"
        host = socket.gethostname().split(".")[0]
        ctld_port, *node_ports = free_ports(1 + len(NODES))
        (root / "state").mkdir()
        (root / "spool").mkdir()
        lines = [
            "ClusterName=bstest",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={ctld_port}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={root}/state",
            f"SlurmdSpoolDir={root}/spool/%n",
            f"SlurmdPidFile={root}/slurmd.%n.pid",
            f"SlurmdLogFile={root}/slurmd.%n.log",
            f"SlurmctldPidFile={root}/slurmctld.pid",
            f"SlurmctldLogFile={root}/slurmctld.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SwitchType=switch/none",
            "MpiDefault=none",
            "ReturnToService=2",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
        ]
        lines += [f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={p} CPUs=1 State=UNKNOWN"
                  for n, p in zip(NODES, node_ports)]
        lines.append(f"PartitionName=debug Nodes={','.join(NODES)} Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n")
        self.env = {"SLURM_CONF": str(self.conf)}

    def _start(self, name: str, argv: list[str]):
        log = open(self.root / f"{name}.out", "ab")
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, **self.env})
        log.close()
        self.procs.append((name, proc))

    def start(self, timeout: float = 30):
        key = self.root / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self._start("munged", ["munged", "--foreground", "--force", f"--socket={self.socket}",
                               f"--key-file={key}", f"--pid-file={self.root}/munged.pid",
                               f"--log-file={self.root}/munged.log", f"--seed-file={self.root}/munged.seed"])
        self._wait(lambda: self.socket.exists(), timeout, "munged's socket")
        self._start("slurmctld", ["slurmctld", "-D", "-f", str(self.conf)])
        for n in NODES:
            self._start(f"slurmd.{n}", ["slurmd", "-D", "-N", n, "-f", str(self.conf)])
        self._wait(self._all_idle, timeout, f"{len(NODES)} idle nodes in sinfo")

    def _all_idle(self) -> bool:
        r = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True,
                           env={**os.environ, **self.env}, timeout=10)
        states = dict(line.split() for line in r.stdout.splitlines() if line.strip())
        return r.returncode == 0 and all(states.get(n) == "idle" for n in NODES)

    def _wait(self, ready, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        while not ready():
            dead = [(name, p.returncode) for name, p in self.procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = f"exited: {dead}" if dead else f"not within {timeout:.0f} s"
                raise AssertionError(f"Slurm test cluster: no {what} ({why})\n{self.logs()}")
            time.sleep(0.2)

    def logs(self) -> str:
        out = []
        for path in sorted(self.root.glob("*.log")) + sorted(self.root.glob("*.out")):
            tail = path.read_text(errors="replace").splitlines()[-15:]
            out.append(f"--- {path.name}\n" + "\n".join(tail))
        return "\n".join(out)

    def stop(self):
        """SIGTERM every daemon started here (slurmds first), then SIGKILL what is left."""
        for _, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for _, proc in reversed(self.procs):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self.procs.clear()


@pytest.fixture(scope="module")
def cluster():
    missing = [d for d in (*DAEMONS, "sbatch", "srun", "sbcast", "sinfo") if shutil.which(d) is None]
    if missing:
        pytest.skip(f"Slurm/munge not installed (no {', '.join(missing)}; scripts/setup.sh --test-tools)")
    if os.geteuid() != 0:
        pytest.skip("the one-host Slurm cluster runs its daemons as root (SlurmUser=root)")
    # A short path: munged's socket path must fit in sockaddr_un.
    root = Path(tempfile.mkdtemp(prefix="bs-slurm-", dir="/tmp"))
    c = Cluster(root)
    try:
        c.start()
        yield c
    finally:
        c.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def sw(world, sources, cluster):
    """The world plus a copy of fastext's source tree, a build counter and the cluster."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    world.build_log = world.root / "builds.log"
    world.tree = world.root / "fastext"
    shutil.copytree(sources["tree"], world.tree)
    world.cluster = cluster
    world.recipe = R.write_recipe(world.root, steps=[*R.pipeline(world.index),
                                                     build_step(world, {"path": str(world.tree)})])
    return world


def node_venv(world, node: str) -> Path:
    return world.root / "nodes" / node / "venv"


def sbatch(world, script: str, params: dict, timeout: float = 300) -> tuple[subprocess.CompletedProcess, str, float]:
    """Submit a bring-up script on all four nodes and wait for it: (sbatch, job log, seconds)."""
    out = world.root / f"{script}.out"
    env = world.full_env({**world.cluster.env, "RECIPE": world.recipe, "BOOTSTRAP_BIN": world.bootstrap,
                          "VENV": f"{world.root}/nodes/%n/venv", **params})
    start = time.monotonic()
    proc = subprocess.run(["sbatch", "-W", "-N", str(len(NODES)), "-o", str(out), str(SCRIPTS / script)],
                          env=env, cwd=world.root, capture_output=True, text=True, timeout=timeout)
    seconds = time.monotonic() - start
    log = out.read_text(errors="replace") if out.exists() else "(no job log)"
    took = [line for line in log.splitlines() if " took " in line]
    print(f"\n{script}: sbatch -W {seconds:.1f} s, {builds(world)} build(s); {'; '.join(took)}")
    return proc, log, seconds


def fastext_reasons(logs: Path) -> dict:
    return {n: steps_by_id(json.loads((logs / f"{n}.out").read_text()))["fastext"]["reason"] for n in NODES}


def test_four_nodes_with_their_own_caches_build_four_times(sw):
    """The baseline the shared cache improves on: four nodes, four $BOOTSTRAP_HOMEs, four builds."""
    task = ('BOOTSTRAP_HOME="$HOMES/$SLURMD_NODENAME" exec "$BOOTSTRAP_BIN" "$RECIPE" '
            '--venv "$NODES_DIR/$SLURMD_NODENAME/venv" --no-device')
    env = sw.full_env({**sw.cluster.env, "RECIPE": sw.recipe, "BOOTSTRAP_BIN": sw.bootstrap,
                       "HOMES": sw.root / "homes", "NODES_DIR": sw.root / "nodes"})
    start = time.monotonic()
    proc = subprocess.run(["srun", "-N", str(len(NODES)), "--ntasks-per-node=1", "bash", "-c", task],
                          env=env, cwd=sw.root, capture_output=True, text=True, timeout=300)
    print(f"\n4 independent caches: srun {time.monotonic() - start:.1f} s, {builds(sw)} build(s)")
    assert proc.returncode == 0, f"{proc.stdout}{proc.stderr}"
    assert builds(sw) == len(NODES), sw.build_log.read_text()


def test_shared_cache_bringup_builds_once_and_fleet_diff_names_a_drifted_node(sw):
    sw.home = sw.root / "shared-home"
    manifests = sw.root / "manifests"
    proc, log, _ = sbatch(sw, "bringup-shared-cache.sbatch",
                          {"BOOTSTRAP_HOME": sw.home, "MANIFESTS": manifests,
                           "BOOTSTRAP_ARGS": "--json --no-device"})
    assert proc.returncode == 0, f"sbatch: {proc.stdout}{proc.stderr}\njob log:\n{log}"
    assert log.rstrip().endswith("4 nodes, 1 environment: no drift"), log

    assert builds(sw) == 1, sw.build_log.read_text()
    reasons = fastext_reasons(manifests / "logs")
    assert sum(r.startswith("built in") for r in reasons.values()) == 1, reasons
    assert sum(r.startswith("build cache hit") for r in reasons.values()) == 3, reasons
    assert len(cache_entries(sw)) == 1
    assert sorted(p.name for p in manifests.glob("*.json")) == [f"{n}.json" for n in NODES]
    for n in NODES:
        assert build_info(sw, node_venv(sw, n))["name"] == "fastext"

    # n3 drifts behind bootstrap's back: fleet diff names it and the package.
    odd = node_venv(sw, "n3")
    sw.uv_pip("install", "--index-url", sw.index.url("main"), "nvidia-cublas==13.1.0.3", venv=odd)
    r = sw.run(["snapshot", "--venv", odd, "-o", manifests / "n3.json"])
    assert r.returncode == 0, r.stderr
    r = sw.run(["fleet", "diff", manifests])
    assert r.returncode == 1, f"{r.stdout}{r.stderr}"
    assert "n3: nvidia-cublas 13.1.0.3, the other 3 nodes 13.4.1.1" in r.stdout.splitlines(), r.stdout


def test_pack_bringup_builds_once_and_every_node_unpacks_the_same_venv(sw):
    sw.home = sw.root / "builder-home"
    manifests = sw.root / "manifests"
    build_venv, node_pack = sw.root / "build" / "venv", sw.root / "local" / "env.tar.zst"
    node_pack.parent.mkdir()
    proc, log, _ = sbatch(sw, "bringup-pack.sbatch",
                          {"BOOTSTRAP_HOME": sw.home, "MANIFESTS": manifests, "BOOTSTRAP_ARGS": "--no-device",
                           "BUILD_VENV": build_venv, "NODE_PACK": node_pack})
    assert proc.returncode == 0, f"sbatch: {proc.stdout}{proc.stderr}\njob log:\n{log}"
    assert log.rstrip().endswith("4 nodes, 1 environment: no drift"), log
    assert builds(sw) == 1, sw.build_log.read_text()
    assert sorted(p.name for p in manifests.glob("*.json")) == [f"{n}.json" for n in NODES]
    for n in NODES:
        assert "match the manifest and RECORDs" in (manifests / "logs" / f"{n}.out").read_text()
        assert build_info(sw, node_venv(sw, n))["name"] == "fastext"
    # The scratch build venv and the node-local copies of the pack are gone.
    assert not build_venv.exists() and not node_pack.exists()


def test_a_node_that_fails_is_named_and_fails_the_job(sw):
    sw.home = sw.root / "shared-home"
    manifests = sw.root / "manifests"
    (sw.root / "nodes").mkdir()
    (sw.root / "nodes" / "n2").write_text("a file where n2's venv directory should go\n")
    proc, log, _ = sbatch(sw, "bringup-shared-cache.sbatch",
                          {"BOOTSTRAP_HOME": sw.home, "MANIFESTS": manifests, "BOOTSTRAP_ARGS": "--no-device"})
    assert proc.returncode == 1, f"sbatch: {proc.stdout}{proc.stderr}\njob log:\n{log}"
    assert "n2: bootstrap " in log and " failed, see " in log, log
    assert "no manifest from n2 " in log, log
    assert sorted(p.name for p in manifests.glob("*.json")) == ["n1.json", "n3.json", "n4.json"]


@pytest.mark.parametrize("script", ["bringup-shared-cache.sbatch", "bringup-pack.sbatch"])
def test_missing_parameters_are_named(tmp_path, script):
    env = {k: v for k, v in os.environ.items() if k not in ("RECIPE", "BOOTSTRAP_HOME", "MANIFESTS")}
    r = subprocess.run(["bash", str(SCRIPTS / script)], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "RECIPE is not set" in r.stderr, r.stderr
    env.update(RECIPE=str(tmp_path / "missing.toml"), BOOTSTRAP_HOME=str(tmp_path), MANIFESTS=str(tmp_path),
               SLURM_JOB_ID="1", SLURMD_NODENAME="n1")
    r = subprocess.run(["bash", str(SCRIPTS / script)], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and f"RECIPE {tmp_path}/missing.toml: no such readable file" in r.stderr, r.stderr


def test_a_settled_bring_up_is_a_no_op_in_a_job_with_other_gpus_per_node(sw):
    """Issue 22: Slurm sets CUDA_VISIBLE_DEVICES and SLURM_* per job and task; none of it is a
    step input. Bring up four nodes in one job, check them from the login shell (no Slurm
    variables), then run the same bring-up again in a second job where each node sees another
    CUDA_VISIBLE_DEVICES and NCCL settings: every node reports a no-op and writes nothing."""
    sw.home = sw.root / "shared-home"
    proc, log, _ = sbatch(sw, "bringup-shared-cache.sbatch",
                          {"BOOTSTRAP_HOME": sw.home, "MANIFESTS": sw.root / "manifests",
                           "BOOTSTRAP_ARGS": "--no-device"})
    assert proc.returncode == 0, f"sbatch: {proc.stdout}{proc.stderr}\njob log:\n{log}"
    state = {}
    for n in NODES:
        plan = sw.run(["plan", sw.recipe, "--venv", node_venv(sw, n), "--no-device", "--json"],
                      env={"BOOTSTRAP_HOME": sw.home})
        assert plan.returncode == 0, plan.stderr
        would = {s["id"]: s["would"]["action"] for s in json.loads(plan.stdout)["steps"]}
        assert set(would.values()) == {"skip"}, (n, would)
        state[n] = {p: p.stat().st_mtime_ns for p in (node_venv(sw, n) / ".bootstrap").rglob("*")}

    out = sw.root / "second-job"
    out.mkdir()
    task = ('CUDA_VISIBLE_DEVICES=$SLURM_PROCID NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=lo '
            'UV_CONCURRENT_DOWNLOADS=$((SLURM_PROCID + 1)) exec "$BOOTSTRAP_BIN" "$RECIPE" '
            '--venv "$NODES_DIR/$SLURMD_NODENAME/venv" --no-device --json >"$OUT/$SLURMD_NODENAME.json"')
    env = sw.full_env({**sw.cluster.env, "RECIPE": sw.recipe, "BOOTSTRAP_BIN": sw.bootstrap,
                       "BOOTSTRAP_HOME": sw.home, "NODES_DIR": sw.root / "nodes", "OUT": out})
    proc = subprocess.run(["srun", "-N", str(len(NODES)), "--ntasks-per-node=1", "bash", "-c", task],
                          env=env, cwd=sw.root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{proc.stdout}{proc.stderr}"
    for n in NODES:
        doc = json.loads((out / f"{n}.json").read_text())
        assert {s["result"] for s in doc["steps"]} == {"skipped"}, (n, doc["steps"])
        assert doc["history"] == {"before": None, "after": None}, n
        now = {p: p.stat().st_mtime_ns for p in (node_venv(sw, n) / ".bootstrap").rglob("*")}
        assert now == state[n], n  # a no-op writes nothing: no journal, history, log or lock
