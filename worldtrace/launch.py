"""Run the whole pipeline on a Dagster instance, with one line of progress per step.

1. domain_job once per domain (the native trace files), then the shard keys the catalog's
   files hash to are registered (the `shard` dimension of the shard-local partitions);
2. main_job (ingest, scrub) once per domain x shard partition;
3. shard_features_job (staged_turn_features: the domain's common words, then the shard's
   features but the corpus frequencies) once per domain x shard partition, after every shard
   is ingested (a shard's step reads a sample of all its domain's shards);
4. domain_quality_job (turn_features from the staged shards, turn_labels) once per domain;
   phases 1-4 run `workers` runs at a time (one process each, each run in-process: a step
   subprocess would re-import torch for every step);
5. then every asset built over all domains (corpus_job), one asset per run, in dependency order,
   each run of Dagster's asset job, as the UI's Materialize button launches it: the Runs page
   names the asset it built (a run of corpus_job with a selection shows only "corpus_job").

Every run carries the tags `worldtrace/command` (`worldtrace run`) and `worldtrace/step`.

Every run is recorded in $DAGSTER_HOME, so `make ui` shows them; Dagster's own event log stays
in the UI, and whatever the steps print (training progress bars, library warnings) goes to a
log file, so the console shows one line per run.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import dagster as dg
from dagster._core.definitions.reconstruct import ReconstructableJob, ReconstructableRepository

from assets.jobs import CORPUS_JOB, PHASE_JOBS, RUN_JOBS
from sources.storage import shard_order

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}},
         "execution": {"config": {"in_process": {}}}}


def job_named(name: str) -> dg.JobDefinition:
    """A job of the code location by name: what a run of one of assets.jobs.RUN_JOBS rebuilds
    in another process (dg.build_reconstructable_job calls it by module and name)."""
    from assets.definitions import defs

    return defs.get_job_def(name)


def corpus_job() -> dg.JobDefinition:
    return job_named(CORPUS_JOB)


def asset_job_name() -> str:
    """Dagster's implicit job over every asset (`__ASSET_JOB`): the Runs page shows a run of it
    by the assets it selected, as for a run launched with the UI's Materialize button."""
    from assets.definitions import defs

    return defs.resolve_implicit_global_asset_job_def().name


def reconstructable_job(name: str) -> ReconstructableJob:
    """A job by name, reconstructable in another process. The jobs `worldtrace run` launches
    (assets.jobs.RUN_JOBS: the phase jobs and corpus_job, as assets/jobs.py declares them) are
    rebuilt by job_named. Any other, such as the implicit asset job, is looked up in the code
    location's Definitions: dg.build_reconstructable_job cannot wrap the asset job, since its
    name is reserved (Dagster has no public spelling of the lookup; the Dagster version is
    pinned)."""
    if name in RUN_JOBS:
        return dg.build_reconstructable_job("worldtrace.launch", "job_named",
                                            reconstructable_args=(name,))
    return ReconstructableRepository.for_module(
        "assets.definitions", "defs", os.getcwd()).get_reconstructable_job(name)


def run_tags(step: str) -> dict[str, str]:
    """What the Runs page shows beside a run that `worldtrace run` launched."""
    return {"worldtrace/command": "worldtrace run", "worldtrace/step": step}


@dataclass
class StepOutcome:
    """One run: which partition or assets, whether it passed, its checks, its time."""

    name: str
    success: bool
    seconds: float
    checks_passed: int = 0
    checks_failed: list[str] = field(default_factory=list)
    error: str = ""

    def line(self) -> str:
        status = "ok " if self.success else "FAILED"
        checks = f"{self.checks_passed} checks passed" + (
            f", failed: {', '.join(self.checks_failed)}" if self.checks_failed else "")
        return f"{status} {self.name:<32} {self.seconds:7.1f} s   {checks}{self.error}"


def _execute(job_name: str, name: str, tags: dict[str, str] | None = None,
             asset_selection: Sequence[dg.AssetKey] | None = None,
             run_config: dict | None = None) -> StepOutcome:
    started = time.perf_counter()
    job = reconstructable_job(job_name)
    with dg.execute_job(job, instance=dg.DagsterInstance.get(), tags=tags,
                        asset_selection=asset_selection,
                        run_config={**QUIET, **(run_config or {})}) as result:
        evaluations = result.get_asset_check_evaluations()
        failures = result.get_step_failure_events()
        error = ""
        if failures:
            info = failures[0].step_failure_data.error
            error = f"\n       {failures[0].step_key}: {info.message.strip() if info else ''}"
        return StepOutcome(
            name, result.success, time.perf_counter() - started,
            checks_passed=sum(e.passed for e in evaluations),
            checks_failed=[f"{e.asset_key.to_user_string()}.{e.check_name}"
                           for e in evaluations if not e.passed], error=error)


@contextlib.contextmanager
def output_to(log_path: Path) -> Iterator[None]:
    """Send this process's stdout and stderr (file descriptors 1 and 2, so child libraries'
    prints too) to the end of log_path for the duration of the block."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with log_path.open("ab") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def run_domain(job_name: str, domain: str, log_path: Path) -> StepOutcome:
    """A per-domain job (domain_job before the shards, domain_quality_job over all of them)
    for one domain (in a worker process), its output to the log."""
    name = f"{job_name}[{domain}]"
    with output_to(log_path):
        return _execute(job_name, name, tags={"dagster/partition": domain, **run_tags(name)})


def run_shard(job_name: str, domain: str, shard: str, log_path: Path) -> StepOutcome:
    """A per-shard job (main_job, shard_features_job) for one domain x shard partition (in a
    worker process), its output to the log."""
    from assets.partitions import shard_key, shard_partitions

    name = f"{job_name}[{shard_key(domain, shard)}]"
    with output_to(log_path):
        return _execute(job_name, name, tags={
            **shard_partitions.get_tags_for_partition_key(shard_key(domain, shard)),
            **run_tags(name)})


def register_domain_shards(domains: Sequence[str], log_path: Path) -> dict[str, list[str]]:
    """The shards each domain's catalog files hash to, registered on the instance (the dynamic
    `shard` dimension) before any shard run starts (in a worker process: what Dagster prints
    on opening the instance goes to the log, as the runs' does)."""
    from assets.partitions import register_shards
    from assets.resources import storage_from_environment

    with output_to(log_path):
        storage = storage_from_environment()
        by_domain = {domain: storage.shards_for(domain) for domain in domains}
        with dg.DagsterInstance.get() as instance:
            register_shards(instance, sorted({s for keys in by_domain.values() for s in keys},
                                             key=shard_order))
    return by_domain


def run_corpus_step(name: str, keys: Sequence[dg.AssetKey], run_config: dict | None = None
                    ) -> StepOutcome:
    """One step of phase 5: the assets of one definition, as a run of the asset job."""
    return _execute(asset_job_name(), name, tags=run_tags(name), asset_selection=keys,
                    run_config=run_config)


def corpus_steps() -> list[tuple[str, list[dg.AssetKey]]]:
    """The assets of corpus_job in dependency order, the keys of one definition together."""
    from assets.definitions import defs

    graph = defs.resolve_asset_graph()
    selected = set(corpus_job().asset_layer.executable_asset_keys)
    steps: dict[str, list[dg.AssetKey]] = {}
    for key in graph.toposorted_asset_keys:
        if key in selected:
            node = graph.get(key)
            steps.setdefault(node.assets_def.node_def.name, []).append(key)
    return list(steps.items())


def prepare_instance() -> None:
    """Create $DAGSTER_HOME's storage once, in this process, before any worker starts: two
    processes that both find no run storage create it at once and stamp its schema version
    twice, and every later run fails ("alembic_version has more than one head")."""
    dg.DagsterInstance.get().dispose()


def run_pipeline(domains: Sequence[str], workers: int, op_config: dict[str, dict],
                 log_path: Path, say: Callable[[str], None] = print) -> list[StepOutcome]:
    """The phases of assets.jobs.PHASE_JOBS in order (a run per domain or per domain x shard,
    the shards registered before the first shard phase), then corpus_job's steps; stops after
    the first phase with a failed run, or the first failed corpus run (what follows would
    build on it). `op_config`: run config per corpus step ({"dataset_release": {"version":
    ...}})."""
    outcomes: list[StepOutcome] = []
    total = len(PHASE_JOBS) + 1
    prepare_instance()
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        def wait(futures: list) -> bool:
            for future in as_completed(futures):
                outcomes.append(future.result())
                say("  " + outcomes[-1].line())
            return all(outcome.success for outcome in outcomes)

        shards: dict[str, list[str]] | None = None  # registered before the first shard phase
        for number, (job_name, kind, builds, _) in enumerate(PHASE_JOBS, start=1):
            head = f"[{number}/{total}] {builds}"
            if kind == "domain":
                say(f"{head}: {len(domains)} domains, {workers} at a time")
                futures = [pool.submit(run_domain, job_name, domain, log_path)
                           for domain in domains]
            else:
                if shards is None:
                    shards = pool.submit(register_domain_shards, domains, log_path).result()
                names = sorted({s for keys in shards.values() for s in keys}, key=shard_order)
                say(f"{head}: {sum(len(keys) for keys in shards.values())} domain x shard "
                    f"partitions (shards {', '.join(names)}), {workers} at a time")
                futures = [pool.submit(run_shard, job_name, domain, shard, log_path)
                           for domain in domains for shard in shards[domain]]
            if not wait(futures):
                return outcomes
    steps = corpus_steps()
    say(f"[{total}/{total}] across all domains: {len(steps)} steps (dedup, split, corpora, "
        "models, bench, release)")
    for name, keys in steps:
        config = {"ops": {name: {"config": op_config[name]}}} if name in op_config else None
        with output_to(log_path):
            outcome = run_corpus_step(name, keys, config)
        outcomes.append(outcome)
        say("  " + outcome.line())
        if not outcome.success:
            break
    return outcomes
