"""The per-domain and per-shard assets on a real Dask cluster (assets/executors.py): a scheduler
and two worker processes on 127.0.0.1, started and stopped here, and domain_job, main_job,
shard_features_job, then domain_quality_job launched as a user does (`dagster job execute` with
WORLDTRACE_EXECUTOR=dask and the scheduler's address as run config), the shard keys registered
on the instance after domain_job, as `worldtrace run` does (the cluster, the launching and
the in-process reference: tests/dask_cluster.py).

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

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from dask_cluster import (
    DOMAINS,
    REPO,
    RUN_SECONDS,
    SHARD_JOBS,
    SHARD_TABLES,
    SHARDS,
    SMALL,
    STAGED,
    START_SECONDS,
    STEPS,
    TABLES,
    TEMPORARY,
    Cluster,
    env,
    files_now,
    in_process,
    launch,
    leftovers,
    new_instance,
    partition_files,
    pipeline,
    quality,
    register,
    run_all,
    stage,
    start_cluster,
    step_pids,
    tables,
    wait,
    worker_pids,
)

pytest.importorskip("distributed", reason="dagster-dask not installed (.[dask])")

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


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """`dask scheduler` and two `dask worker` processes (one thread each), as on a cluster."""
    with start_cluster(tmp_path_factory.mktemp("dask")) as running:
        yield running


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The tables of the in-process run of the same assets on SMALL, both domains, two shards
    each."""
    data = tmp_path_factory.mktemp("reference")
    in_process(data, SMALL)
    found = tables(data)
    assert len(found) == len(TABLES) * len(DOMAINS) * SHARDS  # every shard has files
    return found


def test_shards_on_a_dask_cluster_give_the_in_process_bytes(
        cluster: Cluster, reference: dict[str, str], tmp_path: Path) -> None:
    home = new_instance(tmp_path / "dagster_home")
    data = tmp_path / "dask_data"
    codes = pipeline(cluster, tmp_path, home, data, SMALL)
    assert sorted(codes) == ["search|0", "search|1", "terminal|0", "terminal|1"]
    assert set(codes.values()) == {0}, codes
    staged = stage(cluster, tmp_path, home, data, sorted(codes))
    assert set(staged.values()) == {0}, staged
    # each shard's staged features: a partition of its own, a file of its own
    assert sorted(f"{p.parent.parent.name[7:]}|{p.parent.name[6:]}"
                  for p in (data / STAGED).rglob("*.parquet")) == sorted(codes)

    quality(cluster, tmp_path, home, data)

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
                pids = step_pids(instance, record.dagster_run.run_id)
                assert steps <= set(pids)  # and the asset checks, each a step of its own
                ran_in = set().union(*pids.values())
                # in the workers, not the launcher
                assert ran_in <= cluster.worker_pids, (ran_in, cluster.worker_pids)

    assert tables(data) == reference
    assert leftovers(data) == []


def _retry_the_failed_run(home: Path, job: str, partition: str) -> None:
    """Re-execute the one failed run of `job` from its failure, as the UI does: the rerun is
    one run, of that partition, running only the steps from the failure on (every asset step
    of the job, since each failed or did not run), and no other run."""
    with dg.DagsterInstance.from_config(str(home)) as instance:
        (failed,) = [r.dagster_run for r in instance.get_run_records()
                     if r.dagster_run.status == dg.DagsterRunStatus.FAILURE
                     and r.dagster_run.job_name == job]
        assert failed.tags["dagster/partition"] == partition
        first_pass = set(step_pids(instance, failed.run_id))
        runs_before = len(instance.get_run_records())
    assert not first_pass & STEPS[job]  # the first one failed; nothing after it ran
    retry = subprocess.run([sys.executable, "-c", FROM_FAILURE, failed.run_id], cwd=REPO,
                           env=env(DAGSTER_HOME=str(home)), capture_output=True, text=True,
                           timeout=RUN_SECONDS)
    assert retry.returncode == 0, retry.stdout[-4000:] + retry.stderr[-4000:]

    with dg.DagsterInstance.from_config(str(home)) as instance:
        records = [r.dagster_run for r in instance.get_run_records()]
        (rerun,) = [r for r in records if r.parent_run_id == failed.run_id]
        # the failed shard's steps from the failure on, in one run; no other shard ran again
        second_pass = set(step_pids(instance, rerun.run_id))
        assert not second_pass & first_pass and STEPS[job] <= second_pass
        assert rerun.tags["dagster/partition"] == partition
        assert rerun.tags["dagster/partition/shard"] == partition.split("|")[1]
        assert len(records) == runs_before + 1


def test_a_failed_shard_is_retried_alone(
        cluster: Cluster, reference: dict[str, str], tmp_path: Path) -> None:
    home = new_instance(tmp_path / "dagster_home")
    data = tmp_path / "dask_data"
    # A real obstacle on disk: a file where search's raw_turns folder of shard 1 goes.
    blocker = data / "raw_turns" / "domain=search" / "shard=1"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("not a folder")
    codes = pipeline(cluster, tmp_path, home, data, SMALL)
    assert codes.pop("search|1") != 0 and set(codes.values()) == {0}, codes
    others = files_now([path for partition in codes
                        for path in partition_files(data, *partition.split("|"))])
    assert len(others) == len(SHARD_TABLES) * len(codes)
    blocker.unlink()
    _retry_the_failed_run(home, "main_job", "search|1")
    assert files_now(list(others)) == others  # the other shards' files were not rewritten

    # The same for a shard's staged features: a file where terminal's shard 0 folder goes.
    blocker = data / STAGED / "domain=terminal" / "shard=0"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("not a folder")
    staged = stage(cluster, tmp_path, home, data, [*codes, "search|1"])
    assert staged.pop("terminal|0") != 0 and set(staged.values()) == {0}, staged
    others = files_now([path for partition in staged
                        for path in partition_files(data / STAGED, *partition.split("|"))])
    assert len(others) == len(staged)
    blocker.unlink()
    _retry_the_failed_run(home, "shard_features_job", "terminal|0")
    assert files_now(list(others)) == others  # the other shards' staged files stay as made

    quality(cluster, tmp_path, home, data)  # every shard is staged: the domains' features
    assert tables(data) == reference
    assert leftovers(data) == []


def test_a_worker_killed_mid_step_is_replaced_with_the_same_bytes(
        cluster: Cluster, tmp_path: Path) -> None:
    # Enough trajectories that the ingest step writes for a while: the window to kill it in.
    larger = {**SMALL, "generated_trajectories": 120}
    in_process(tmp_path / "reference", larger, ("terminal",), shards=1)
    home = new_instance(tmp_path / "dagster_home")
    data = tmp_path / "dask_data"
    workers_before = worker_pids(cluster.client)
    generated = run_all(cluster, tmp_path, home, "domain_job", ["terminal"], data, larger, 1)
    assert generated == {"terminal": 0}
    (partition,) = register(home, data, ("terminal",), 1)
    run = launch(cluster, tmp_path, home, "main_job", partition, data, larger, 1)
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
    assert wait(run, log) == 0, log.read_text()[-4000:]
    assert stage(cluster, tmp_path, home, data, [partition], 1) == {partition: 0}
    quality(cluster, tmp_path, home, data, ("terminal",), 1)

    assert tables(data) == tables(tmp_path / "reference")
    assert leftovers(data) == []
    cluster.client.wait_for_workers(2, timeout=START_SECONDS)  # the nanny started a new one
    assert killed not in worker_pids(cluster.client)
