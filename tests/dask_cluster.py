"""A real Dask cluster on 127.0.0.1 and Dagster runs launched on it as a user does, for
tests/test_dask_executor.py: a scheduler and two worker processes started and stopped here;
domain_job, main_job, shard_features_job and domain_quality_job launched with `dagster job
execute` (WORLDTRACE_EXECUTOR=dask, the scheduler's address as run config), one run per
partition, the shard keys registered on the instance after domain_job as `worldtrace run` does;
the same assets in process for the reference bytes; and what the tests read back (the tables'
sha256, the processes each step ran in, the files' inodes, what a killed writer left).
"""

from __future__ import annotations

import contextlib
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

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DOMAINS = ("search", "terminal")
SMALL = {"collected_trajectories": 0, "generated_trajectories": 6, "seed": 3}
SHARDS = 2  # per domain: each domain's six files fall in both (asserted by the reference)
SHARD_TABLES = ["raw_trajectories", "raw_turns", "ingest_quarantine", "scrubbed_trajectories",
                "scrubbed_turns", "scrub_findings"]  # main_job's, one shard a run
TABLES = [*SHARD_TABLES, "turn_features", "turn_labels"]  # and domain_quality_job's
STAGED = "staged_turn_features"  # shard_features_job's, read by turn_features
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


@dataclass
class Cluster:
    address: str
    worker_pids: set[int]
    client: object  # distributed.Client


def env(**extra: str) -> dict[str, str]:
    """This checkout's code first (the venv's editable install may be another checkout); the
    Dask workers may start processes (ingest's readers), so they are not daemons."""
    return {**os.environ, "PYTHONPATH": str(REPO), "WORLDTRACE_EXECUTOR": "dask",
            "DASK_DISTRIBUTED__WORKER__DAEMON": "False", **extra}


@contextlib.contextmanager
def start_cluster(root: Path) -> Iterator[Cluster]:
    """`dask scheduler` and two `dask worker` processes (one thread each), as on a cluster, in
    their own process groups, stopped on leaving (the cluster's log printed on an error)."""
    import distributed

    scheduler_file = root / "scheduler.json"
    logs = root / "cluster.log"
    processes: list[subprocess.Popen] = []
    with logs.open("w") as log:
        def start(*args: str) -> None:
            processes.append(subprocess.Popen(
                [str(BIN / "dask"), *args], cwd=REPO, env=env(), stdout=log, stderr=log,
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
                yield Cluster(client.scheduler.address, worker_pids(client), client)
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


def worker_pids(client) -> set[int]:
    return set(client.run(os.getpid).values())


def new_instance(home: Path) -> Path:
    """A persistent Dagster instance (the Dask executor needs one), its storage created once,
    before two processes find none and both create it."""
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    with dg.DagsterInstance.from_config(str(home)):
        pass
    return home


def launch(cluster: Cluster, root: Path, home: Path, job: str, partition: str, data: Path,
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
        cwd=REPO, env=env(DAGSTER_HOME=str(home)),
        stdout=(root / f"run-{name}.log").open("w"), stderr=subprocess.STDOUT)


def run_all(cluster: Cluster, root: Path, home: Path, job: str, partitions: list[str],
            data: Path, factory: dict, shards: int = SHARDS) -> dict[str, int]:
    """One run per partition, all at once; their exit codes."""
    runs = {partition: launch(cluster, root, home, job, partition, data, factory, shards)
            for partition in partitions}
    return {partition: wait(run, root / f"run-{job}-{partition.replace('|', '-')}.log")
            for partition, run in runs.items()}


def register(home: Path, data: Path, domains: tuple[str, ...], shards: int = SHARDS
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


def pipeline(cluster: Cluster, root: Path, home: Path, data: Path, factory: dict,
             domains: tuple[str, ...] = DOMAINS, shards: int = SHARDS) -> dict[str, int]:
    """domain_job for every domain, the shards registered, then main_job for every shard at
    once; the shard runs' exit codes."""
    generated = run_all(cluster, root, home, "domain_job", list(domains), data, factory, shards)
    assert set(generated.values()) == {0}, generated
    return run_all(cluster, root, home, "main_job", register(home, data, domains, shards),
                    data, factory, shards)


def stage(cluster: Cluster, root: Path, home: Path, data: Path, partitions: list[str],
          shards: int = SHARDS) -> dict[str, int]:
    """shard_features_job for every domain x shard partition at once (each shard's staged
    features), after every shard is ingested; their exit codes."""
    return run_all(cluster, root, home, "shard_features_job", partitions, data, {}, shards)


def quality(cluster: Cluster, root: Path, home: Path, data: Path,
            domains: tuple[str, ...] = DOMAINS, shards: int = SHARDS) -> None:
    """domain_quality_job for every domain at once (its features and labels over all its
    staged shards), after the shards' staged features; each must pass, and every staged
    shard stays (a partition Dagster recorded as materialized)."""
    codes = run_all(cluster, root, home, "domain_quality_job", list(domains), data, {}, shards)
    assert set(codes.values()) == {0}, codes
    assert len(list((data / STAGED).rglob("*.parquet"))) == len(domains) * shards


def wait(run: subprocess.Popen, log: Path) -> int:
    try:
        return run.wait(timeout=RUN_SECONDS)
    except subprocess.TimeoutExpired:
        run.kill()
        run.wait()
        raise AssertionError(log.read_text()[-4000:]) from None


def tables(data: Path) -> dict[str, str]:
    """sha256 of each table file the per-domain assets write."""
    return {path.relative_to(data).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for table in TABLES for path in sorted((data / table).rglob("*.parquet"))}


def in_process(data: Path, factory: dict, domains: tuple[str, ...] = DOMAINS,
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


def step_pids(instance: dg.DagsterInstance, run_id: str) -> dict[str, set[int]]:
    """Each step that succeeded in the run, and the processes it ran in."""
    pids: dict[str, set[int]] = {}
    for event in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_SUCCESS):
        pids.setdefault(event.dagster_event.step_key, set()).add(event.dagster_event.pid)
    return pids


def partition_files(data: Path, domain: str, shard: str | None = None) -> list[Path]:
    """Every Parquet file of one domain's partitions (of one shard of it, when given)."""
    return [p for p in data.rglob("*.parquet") if f"domain={domain}" in p.parts
            and (shard is None or f"shard={shard}" in p.parts)]


def files_now(files: list[Path]) -> dict[Path, tuple[int, int]]:
    """Each file's inode and modification time: a rewrite changes them."""
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in files}


def leftovers(data: Path) -> list[str]:
    """Temporary files and staging folders under the data directory."""
    return sorted(p.relative_to(data).as_posix() for p in data.rglob("*")
                  if TEMPORARY.fullmatch(p.name) or p.name.startswith("_staging-"))
