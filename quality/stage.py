"""The whole quality stage over a data directory, outside Dagster (grading, benchmarks).

Per domain: its common words (a small sample), then per shard its staged features (the shards
are independent, so they run in `workers` processes, as Dagster's multiprocess executor runs
partitions), then per domain the corpus frequencies over its shards, every shard's
turn_features and its labels (quality/sharded.py). Dedup across all partitions (cross-shard,
like the `trajectory_dedup` asset) and scrubbing read only the raw tables, so they run
meanwhile, as the executor would run those assets. Output layout mirrors the assets:

    {out}/turn_features/domain=<d>/shard=<s>/part-0.parquet
    {out}/turn_labels/domain=<d>/shard=<s>/part-0.parquet
    {out}/trajectory_dedup/{trajectory_dedup,duplicate_pairs,signatures}.parquet
    {out}/{scrubbed_trajectories,scrubbed_turns,scrub_findings}/domain=<d>/shard=<s>/...

(scrubbing: what the splits, the bench and a release read instead of the raw text.)
"""

from __future__ import annotations

import multiprocessing
import resource
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from quality.dedup import DedupConfig, DedupStats, dedup_trajectories
from quality.domain_order import DomainOrder
from quality.features import FeatureConfig, FeatureStats
from quality.labels import LabelStats, load_policy
from quality.scrub import scrub_partition
from quality.sharded import (
    SCRUB_TABLES,
    add_stats,
    common_words_of_domain,
    finish_domain_features,
    labels_for_domain,
    order_of_domain,
    stage_shard_features,
)
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS


@dataclass
class StageReport:
    """Stats of every step, wall seconds per phase, and peak RSS (MB) of this process and of
    the largest worker."""

    features: dict[str, FeatureStats] = field(default_factory=dict)
    labels: dict[str, LabelStats] = field(default_factory=dict)
    dedup: DedupStats | None = None
    wall_seconds: dict[str, float] = field(default_factory=dict)
    peak_rss_mb: float = 0.0
    worker_peak_rss_mb: float = 0.0


def _finish_and_label(data_dir: Path, out_dir: Path, domain: str, order: DomainOrder,
                      config: FeatureConfig, policy_path: Path | None
                      ) -> tuple[float, LabelStats, float]:
    """A domain's corpus frequencies and turn_features, then its labels; their seconds."""
    seconds = finish_domain_features(data_dir, out_dir, domain, order, config)
    clock = time.perf_counter()
    policy = load_policy(policy_path) if policy_path else load_policy()
    l_stats = labels_for_domain(out_dir, domain, policy, data_dir=data_dir)
    return seconds, l_stats, time.perf_counter() - clock


def dedup_across_partitions(data_dir: Path, out_root: Path, domains: Sequence[str],
                            config: DedupConfig | None = None) -> DedupStats:
    """Dedup over every domain partition present, as one corpus: what the `trajectory_dedup`
    asset runs, and what grading and the benchmark run (the dedup tables go under out_root)."""
    shards = [(d, s) for d in domains for s in RAW_TRAJECTORIES.shards(data_dir, d)]
    return dedup_trajectories(
        [RAW_TRAJECTORIES.path(data_dir, d, s) for d, s in shards],
        [RAW_TURNS.path(data_dir, d, s) for d, s in shards],
        out_root, config or DedupConfig())


def _scrub(data_dir: Path, out_dir: Path, domain: str, shard: str) -> float:
    """Scrub one shard of a domain; returns its seconds."""
    clock = time.perf_counter()
    scrub_partition(RAW_TRAJECTORIES.path(data_dir, domain, shard),
                    RAW_TURNS.path(data_dir, domain, shard),
                    *(table.path(out_dir, domain, shard) for table in SCRUB_TABLES))
    return time.perf_counter() - clock


def run_quality_stage(data_dir: Path, out_dir: Path, domains: Sequence[str], workers: int = 1,
                      features: FeatureConfig | None = None, dedup: DedupConfig | None = None,
                      policy_path: Path | None = None, scrub: bool = True) -> StageReport:
    """Features and labels of each domain (staged per shard, finished per domain), dedup across
    domains and shards, then (unless `scrub` is off) the scrubbed copies of the raw tables.

    With `workers` > 1 the steps overlap as Dagster's multiprocess executor overlaps the
    assets (dedup and scrub read only the raw tables, not the features): each domain's common
    words, then the per-shard features and scrub jobs run in `workers` processes while this
    process runs the dedup, then each domain's corpus frequencies and labels. The outputs are
    the same either way.
    """
    features = features or FeatureConfig()
    dedup = dedup or DedupConfig()
    report = StageReport()
    shards = [(d, s) for d in domains for s in RAW_TURNS.shards(data_dir, d)]
    present = list(dict.fromkeys(d for d, _ in shards))
    began = time.perf_counter()
    orders = {d: order_of_domain(data_dir, d) for d in present}
    finish_jobs = {d: (data_dir, out_dir, d, orders[d], features, policy_path) for d in present}
    scrubs = [(data_dir, out_dir, d, s) for d, s in shards] if scrub else []
    if workers > 1 and len(shards) > 1:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            # (the common words in the workers as well: read here first, they kept the workers
            # from starting, a core idle for their seconds)
            common = {d: pool.submit(common_words_of_domain, data_dir, d, orders[d], features)
                      for d in present}
            staged = [pool.submit(stage_shard_features, data_dir, out_dir, d, s, features,
                                  common[d].result()) for d, s in shards]
            scrub_jobs = [pool.submit(_scrub, *job) for job in scrubs]
            report.dedup = _timed_dedup(data_dir, out_dir, present, dedup, report)
            staged_stats = [job.result() for job in staged]
            finished = {d: pool.submit(_finish_and_label, *job) for d, job in finish_jobs.items()}
            results = {d: job.result() for d, job in finished.items()}
            report.wall_seconds["features + labels"] = time.perf_counter() - began
            scrub_seconds = [job.result() for job in scrub_jobs]
    else:
        common = {d: common_words_of_domain(data_dir, d, orders[d], features) for d in present}
        staged_stats = [stage_shard_features(data_dir, out_dir, d, s, features, common[d])
                        for d, s in shards]
        results = {d: _finish_and_label(*job) for d, job in finish_jobs.items()}
        report.wall_seconds["features + labels"] = time.perf_counter() - began
        report.dedup = _timed_dedup(data_dir, out_dir, present, dedup, report)
        scrub_seconds = [_scrub(*job) for job in scrubs]
    for (domain, _), f_stats in zip(shards, staged_stats, strict=True):  # shards add up
        report.features[domain] = add_stats(report.features.get(domain, FeatureStats()), f_stats)
    label_seconds = 0.0
    for domain, (finish_seconds, l_stats, seconds) in results.items():
        report.features[domain].seconds["corpus_frequency"] += finish_seconds
        report.labels[domain] = l_stats
        label_seconds += seconds
    report.wall_seconds["labels (sum over partitions)"] = label_seconds
    if scrub:
        report.wall_seconds["scrub (sum over partitions)"] = sum(scrub_seconds)
    report.wall_seconds["whole stage"] = time.perf_counter() - began
    report.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report.worker_peak_rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return report


def _timed_dedup(data_dir: Path, out_dir: Path, present: list[str], config: DedupConfig,
                 report: StageReport) -> DedupStats:
    clock = time.perf_counter()
    stats = dedup_across_partitions(data_dir, out_dir, present, config)
    report.wall_seconds["dedup"] = time.perf_counter() - clock
    return stats
