"""The per-domain and per-shard assets on a real Dask cluster (assets/executors.py): a scheduler
and two worker processes on 127.0.0.1, started and stopped here, and domain_job, main_job,
shard_features_job, then domain_quality_job launched as a user does (`dagster job execute` with
WORLDTRACE_EXECUTOR=dask and the scheduler's address as run config), the shard keys registered
on the instance after domain_job, as `worldtrace run` does.

- two domains of two shards each, the four shard runs at once, then the four runs of the
  shards' staged features at once (separate partitions), then the two domains' features and
  labels over their staged shards: every step runs in a worker process, and every table is
  byte-identical to the in-process run's;
- a shard whose step fails (an ingest step, then a staged-features step) is re-executed from
  the failure alone: the other shards' runs and the failed run's steps that passed are not
  redone, and their files are not rewritten;
- a worker killed with SIGKILL in the middle of a step: Dask runs the step again on a live
  worker, the run succeeds with the same bytes, and nothing of the killed writer stays.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

distributed = pytest.importorskip("distributed", reason="dagster-dask not installed (.[dask])")

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DOMAINS = ("search", "terminal")
SMALL = {"collected_trajectories": 0, "generated_trajectories": 6, "seed": 3}
SHARDS = 2  # per domain: each domain's six files fall in both (asserted by the reference)
SHARD_TABLES = ["raw_trajectories", "raw_turns", "ingest_quarantine", "scrubbed_trajectories",
                "scrubbed_turns", "scrub_findings"]  # main_job's, one shard a run
TABLES = [*SHARD_TABLES, "turn_features", "turn_labels"]  # and domain_quality_job's
STAGED = "staged_turn_features"  # shard_features_job's, consumed by turn_features
# The asset steps of main_job, shard_features_job and domain_quality_job (each asset check is
# a step of its own besides).
STEPS = {"main_job": {"raw_traces", "scrubbed_traces"},
         "shard_features_job": {STAGED},
         "domain_quality_job": {"turn_features", "turn_labels"}}
SHARD_JOBS = ("main_job", "shard_features_job")
# Generous: every process imports the code location (~10 CPU s), slow on a shared machine.
START_SECONDS = 120
RUN_SECONDS = 1200  # a run's process may take minutes to import on a loaded 2-core machine
# A writer's temporary name ends in -<host>-<pid> (sources/storage.py).
TEMPORARY = re.compile(r"\..+\.(?:tmp|fresh|parts|old)-.+-(?P<pid>\d+)")

# Re-executes a failed run from its failure (the steps that failed and those after them), with
# the parent's run config and tags, as the UI's "Re-execute from failure" does.
FROM_FAILURE = """
import sys
import dagster as dg
from dagster._core.definitions.reconstruct import ReconstructableRepository
with dg.DagsterInstance.get() as instance:
    parent = instance.get_run_by_id(sys.argv[1])
    job = ReconstructableRepository.for_module("assets.definitions", "defs", ".")\\
        .get_reconstructable_job(parent.job_name)
    options = dg.ReexecutionOptions.from_failure(parent.run_id, instance)
    with dg.execute_job(job, instance, run_config=parent.run_config, tags=parent.tags,
                        reexecution_options=options) as result:
        sys.exit(0 if result.success else 1)
"""


@dataclass
class Cluster:
    address: str
    worker_pids: set[int]
    client: object  # distributed.Client


def _env(**extra: str) -> dict[str, str]:
    """This checkout's code first (the venv's editable install may be another checkout); the
    Dask workers may start processes (ingest's readers), so they are not daemons."""
    return {**os.environ, "PYTHONPATH": str(REPO), "WORLDTRACE_EXECUTOR": "dask",
            "DASK_DISTRIBUTED__WORKER__DAEMON": "False", **extra}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """`dask scheduler` and two `dask worker` processes (one thread each), as on a cluster."""
    root = tmp_path_factory.mktemp("dask")
    scheduler_file = root / "scheduler.json"
    logs = root / "cluster.log"
    processes: list[subprocess.Popen] = []
    with logs.open("w") as log:
        def start(*args: str) -> None:
            processes.append(subprocess.Popen(
                [str(BIN / "dask"), *args], cwd=REPO, env=_env(), stdout=log, stderr=log,
                start_new_session=True))

        try:
            start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                  "--scheduler-file", str(scheduler_file))
            deadline = time.monotonic() + START_SECONDS
            while not scheduler_file.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            for name in ("worker-a", "worker-b"):
                start("worker", "--scheduler-file", str(scheduler_file), "--nthreads", "1",
                      "--no-dashboard", "--name", name, "--local-directory", str(root / name))
            with distributed.Client(scheduler_file=str(scheduler_file), timeout=START_SECONDS
                                    ) as client:
                client.wait_for_workers(2, timeout=START_SECONDS)
                yield Cluster(client.scheduler.address, _worker_pids(client), client)
        except Exception:
            print(logs.read_text(), file=sys.stderr)
            raise
        finally:
            for process in reversed(processes):  # workers first, then the scheduler
                os.killpg(process.pid, signal.SIGTERM)
            for process in processes:
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()


def _worker_pids(client) -> set[int]:
    return set(client.run(os.getpid).values())


def _instance(home: Path) -> Path:
    """A persistent Dagster instance (the Dask executor needs one), its storage created once,
    before two processes find none and both create it."""
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    with dg.DagsterInstance.from_config(str(home)):
        pass
    return home


def _launch(cluster: Cluster, root: Path, home: Path, job: str, partition: str, data: Path,
            factory: dict, shards: int = SHARDS) -> subprocess.Popen:
    """`dagster job execute` of a job for one partition (a domain for domain_job, `domain|shard`
    for main_job) on the cluster (log in root, named after the partition)."""
    from assets.partitions import domain_partitions, shard_partitions

    name = f"{job}-{partition.replace('|', '-')}"
    config = root / f"run-{name}.yaml"
    config.write_text(json.dumps({  # JSON is YAML
        "execution": {"config": {"cluster": {"existing": {"address": cluster.address}}}},
        "resources": {"storage": {"config": {"data_dir": str(data),
                                             "shards_per_domain": shards}}},
        **({"ops": {"generated_traces": {"config": factory}}} if job == "domain_job" else {})}))
    partitions = shard_partitions if job in SHARD_JOBS else domain_partitions
    return subprocess.Popen(
        [str(BIN / "dagster"), "job", "execute", "-m", "assets.definitions", "-a", "defs",
         "-j", job, "-c", str(config),
         "--tags", json.dumps(partitions.get_tags_for_partition_key(partition))],
        cwd=REPO, env=_env(DAGSTER_HOME=str(home)),
        stdout=(root / f"run-{name}.log").open("w"), stderr=subprocess.STDOUT)


def _run_all(cluster: Cluster, root: Path, home: Path, job: str, partitions: list[str],
             data: Path, factory: dict, shards: int = SHARDS) -> dict[str, int]:
    """One run per partition, all at once; their exit codes."""
    runs = {partition: _launch(cluster, root, home, job, partition, data, factory, shards)
            for partition in partitions}
    return {partition: _wait(run, root / f"run-{job}-{partition.replace('|', '-')}.log")
            for partition, run in runs.items()}


def _register(home: Path, data: Path, domains: tuple[str, ...], shards: int = SHARDS
              ) -> list[str]:
    """What `worldtrace run` does between the two: the shard keys the domains' files hash to,
    registered on the instance; returns every domain x shard partition to run."""
    from assets.partitions import register_shards, shard_key
    from assets.resources import WorldtraceStorage

    storage = WorldtraceStorage(data_dir=str(data), shards_per_domain=shards)
    by_domain = {domain: storage.shards_for(domain) for domain in domains}
    with dg.DagsterInstance.from_config(str(home)) as instance:
        register_shards(instance, sorted({key for keys in by_domain.values() for key in keys}))
    return [str(shard_key(domain, shard)) for domain, keys in by_domain.items() for shard in keys]


def _pipeline(cluster: Cluster, root: Path, home: Path, data: Path, factory: dict,
              domains: tuple[str, ...] = DOMAINS, shards: int = SHARDS) -> dict[str, int]:
    """domain_job for every domain, the shards registered, then main_job for every shard at
    once; the shard runs' exit codes."""
    generated = _run_all(cluster, root, home, "domain_job", list(domains), data, factory, shards)
    assert set(generated.values()) == {0}, generated
    return _run_all(cluster, root, home, "main_job", _register(home, data, domains, shards),
                    data, factory, shards)


def _stage(cluster: Cluster, root: Path, home: Path, data: Path, partitions: list[str],
           shards: int = SHARDS) -> dict[str, int]:
    """shard_features_job for every domain x shard partition at once (each shard's staged
    features), after every shard is ingested; their exit codes."""
    return _run_all(cluster, root, home, "shard_features_job", partitions, data, {}, shards)


def _quality(cluster: Cluster, root: Path, home: Path, data: Path,
             domains: tuple[str, ...] = DOMAINS, shards: int = SHARDS) -> None:
    """domain_quality_job for every domain at once (its features and labels over all its
    staged shards), after the shards' staged features; each must pass, and nothing staged is
    left."""
    codes = _run_all(cluster, root, home, "domain_quality_job", list(domains), data, {}, shards)
    assert set(codes.values()) == {0}, codes
    assert not list((data / STAGED).rglob("*.parquet"))


def _wait(run: subprocess.Popen, log: Path) -> int:
    try:
        return run.wait(timeout=RUN_SECONDS)
    except subprocess.TimeoutExpired:
        run.kill()
        run.wait()
        raise AssertionError(log.read_text()[-4000:]) from None


def _tables(data: Path) -> dict[str, str]:
    """sha256 of each table file the per-domain assets write."""
    return {path.relative_to(data).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for table in TABLES for path in sorted((data / table).rglob("*.parquet"))}


def _in_process(data: Path, factory: dict, domains: tuple[str, ...] = DOMAINS,
                shards: int = SHARDS) -> None:
    """The same assets in this process: per domain, the generated files, one run per shard,
    then the domain's features and labels."""
    from shard_runs import materialize_domain

    from assets.definitions import defs
    from assets.resources import WorldtraceStorage

    storage = WorldtraceStorage(data_dir=str(data), shards_per_domain=shards)
    by_key = {key.to_user_string(): asset for asset in defs.assets for key in asset.keys}
    assets = list({id(by_key[name]): by_key[name] for name in [*TABLES, STAGED]}.values())
    instance = dg.DagsterInstance.ephemeral()
    for domain in domains:
        assert dg.materialize(
            [by_key["generated_traces"]], partition_key=domain, instance=instance,
            resources={"storage": storage},
            run_config={"ops": {"generated_traces": {"config": factory}}}).success
        assert materialize_domain(assets, domain, storage, instance=instance).success


def _step_pids(instance: dg.DagsterInstance, run_id: str) -> dict[str, set[int]]:
    """Each step that succeeded in the run, and the processes it ran in."""
    pids: dict[str, set[int]] = {}
    for event in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_SUCCESS):
        pids.setdefault(event.dagster_event.step_key, set()).add(event.dagster_event.pid)
    return pids


def _partition_files(data: Path, domain: str, shard: str | None = None) -> list[Path]:
    """Every Parquet file of one domain's partitions (of one shard of it, when given)."""
    return [p for p in data.rglob("*.parquet") if f"domain={domain}" in p.parts
            and (shard is None or f"shard={shard}" in p.parts)]


def _files_now(files: list[Path]) -> dict[Path, tuple[int, int]]:
    """Each file's inode and modification time: a rewrite changes them."""
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in files}


def _leftovers(data: Path) -> list[str]:
    """Temporary files and staging folders under the data directory."""
    return sorted(p.relative_to(data).as_posix() for p in data.rglob("*")
                  if TEMPORARY.fullmatch(p.name) or p.name.startswith("_staging-"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The tables of the in-process run of the same assets on SMALL, both domains, two shards
    each."""
    data = tmp_path_factory.mktemp("reference")
    _in_process(data, SMALL)
    tables = _tables(data)
    assert len(tables) == len(TABLES) * len(DOMAINS) * SHARDS  # every shard has files
    return tables


def test_shards_on_a_dask_cluster_give_the_in_process_bytes(
        cluster: Cluster, reference: dict[str, str], tmp_path: Path) -> None:
    home = _instance(tmp_path / "dagster_home")
    data = tmp_path / "dask_data"
    codes = _pipeline(cluster, tmp_path, home, data, SMALL)
    assert sorted(codes) == ["search|0", "search|1", "terminal|0", "terminal|1"]
    assert set(codes.values()) == {0}, codes
    staged = _stage(cluster, tmp_path, home, data, sorted(codes))
    assert set(staged.values()) == {0}, staged
    # each shard's staged features: a partition of its own, a file of its own
    assert sorted(f"{p.parent.parent.name[7:]}|{p.parent.name[6:]}"
                  for p in (data / STAGED).rglob("*.parquet")) == sorted(codes)

    _quality(cluster, tmp_path, home, data)

    with dg.DagsterInstance.from_config(str(home)) as instance:
        records = {job: [r for r in instance.get_run_records() if r.dagster_run.job_name == job]
                   for job in STEPS}
        for job in SHARD_JOBS:
            assert sorted(r.dagster_run.tags["dagster/partition"]
                          for r in records[job]) == sorted(codes)
        assert sorted(r.dagster_run.tags["dagster/partition"]
                      for r in records["domain_quality_job"]) == sorted(DOMAINS)
        for job, steps in STEPS.items():
            for record in records[job]:
                assert record.dagster_run.status == dg.DagsterRunStatus.SUCCESS
                pids = _step_pids(instance, record.dagster_run.run_id)
                assert steps <= set(pids)  # and the asset checks, each a step of its own
                ran_in = set().union(*pids.values())
                # in the workers, not the launcher
                assert ran_in <= cluster.worker_pids, (ran_in, cluster.worker_pids)

    assert _tables(data) == reference
    assert _leftovers(data) == []


def _retry_the_failed_run(home: Path, job: str, partition: str) -> None:
    """Re-execute the one failed run of `job` from its failure, as the UI does: the rerun is
    one run, of that partition, running only the steps from the failure on (every asset step
    of the job, since each failed or did not run), and no other run."""
    with dg.DagsterInstance.from_config(str(home)) as instance:
        (failed,) = [r.dagster_run for r in instance.get_run_records()
                     if r.dagster_run.status == dg.DagsterRunStatus.FAILURE
                     and r.dagster_run.job_name == job]
        assert failed.tags["dagster/partition"] == partition
        first_pass = set(_step_pids(instance, failed.run_id))
        runs_before = len(instance.get_run_records())
    assert not first_pass & STEPS[job]  # the first one failed; nothing after it ran
    retry = subprocess.run([sys.executable, "-c", FROM_FAILURE, failed.run_id], cwd=REPO,
                           env=_env(DAGSTER_HOME=str(home)), capture_output=True, text=True,
                           timeout=RUN_SECONDS)
    assert retry.returncode == 0, retry.stdout[-4000:] + retry.stderr[-4000:]

    with dg.DagsterInstance.from_config(str(home)) as instance:
        records = [r.dagster_run for r in instance.get_run_records()]
        (rerun,) = [r for r in records if r.parent_run_id == failed.run_id]
        # the failed shard's steps from the failure on, in one run; no other shard ran again
        second_pass = set(_step_pids(instance, rerun.run_id))
        assert not second_pass & first_pass and STEPS[job] <= second_pass
        assert rerun.tags["dagster/partition"] == partition
        assert rerun.tags["dagster/partition/shard"] == partition.split("|")[1]
        assert len(records) == runs_before + 1


def test_a_failed_shard_is_retried_alone(
        cluster: Cluster, reference: dict[str, str], tmp_path: Path) -> None:
    home = _instance(tmp_path / "dagster_home")
    data = tmp_path / "dask_data"
    # A real obstacle on disk: a file where search's raw_turns folder of shard 1 goes.
    blocker = data / "raw_turns" / "domain=search" / "shard=1"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("not a folder")
    codes = _pipeline(cluster, tmp_path, home, data, SMALL)
    assert codes.pop("search|1") != 0 and set(codes.values()) == {0}, codes
    others = _files_now([path for partition in codes
                         for path in _partition_files(data, *partition.split("|"))])
    assert len(others) == len(SHARD_TABLES) * len(codes)
    blocker.unlink()
    _retry_the_failed_run(home, "main_job", "search|1")
    assert _files_now(list(others)) == others  # the other shards' files were not rewritten

    # The same for a shard's staged features: a file where terminal's shard 0 folder goes.
    blocker = data / STAGED / "domain=terminal" / "shard=0"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("not a folder")
    staged = _stage(cluster, tmp_path, home, data, [*codes, "search|1"])
    assert staged.pop("terminal|0") != 0 and set(staged.values()) == {0}, staged
    others = _files_now([path for partition in staged
                         for path in _partition_files(data / STAGED, *partition.split("|"))])
    assert len(others) == len(staged)
    blocker.unlink()
    _retry_the_failed_run(home, "shard_features_job", "terminal|0")
    assert _files_now(list(others)) == others  # the other shards' staged files stay as made

    _quality(cluster, tmp_path, home, data)  # every shard is staged: the domains' features
    assert _tables(data) == reference
    assert _leftovers(data) == []


def test_a_worker_killed_mid_step_is_replaced_with_the_same_bytes(
        cluster: Cluster, tmp_path: Path) -> None:
    # Enough trajectories that the ingest step writes for a while: the window to kill it in.
    larger = {**SMALL, "generated_trajectories": 120}
    _in_process(tmp_path / "reference", larger, ("terminal",), shards=1)
    home = _instance(tmp_path / "dagster_home")
    data = tmp_path / "dask_data"
    workers_before = _worker_pids(cluster.client)
    generated = _run_all(cluster, tmp_path, home, "domain_job", ["terminal"], data, larger, 1)
    assert generated == {"terminal": 0}
    (partition,) = _register(home, data, ("terminal",), 1)
    run = _launch(cluster, tmp_path, home, "main_job", partition, data, larger, 1)
    killed = None
    deadline = time.monotonic() + RUN_SECONDS
    while killed is None and run.poll() is None and time.monotonic() < deadline:
        writing = [*data.glob("*/domain=terminal/.*"), *data.glob("*/domain=terminal/shard=*/.*")]
        for path in writing:  # a step writing: kill its worker
            match = TEMPORARY.fullmatch(path.name)
            if match and int(match["pid"]) in workers_before:
                killed = int(match["pid"])
                os.kill(killed, signal.SIGKILL)
                break
        time.sleep(0.05)
    assert killed is not None, "no step was caught writing"
    log = tmp_path / "run-main_job-terminal-0.log"
    assert _wait(run, log) == 0, log.read_text()[-4000:]
    assert _stage(cluster, tmp_path, home, data, [partition], 1) == {partition: 0}
    _quality(cluster, tmp_path, home, data, ("terminal",), 1)

    assert _tables(data) == _tables(tmp_path / "reference")
    assert _leftovers(data) == []
    cluster.client.wait_for_workers(2, timeout=START_SECONDS)  # the nanny started a new one
    assert killed not in _worker_pids(cluster.client)
