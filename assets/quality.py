"""Quality stage: raw_turns -> turn_features -> turn_labels; raw tables -> trajectory_dedup.

Turn-level loss masking (the Qwen-AgentWorld recipe's key detail): every turn gets features
(overlap, novelty, Jaccard, length ratios, corpus frequency, error flag), a category from the
versioned policy file and a loss weight; low-information turns stay in the context with a low
weight. Near-duplicate trajectories are clustered and all but one per cluster marked removed.
"""

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

from assets.partitions import domain_partitions
from assets.resources import WorldtraceStorage
from assets.table_metadata import check_result, markdown_preview, records_table, table_metadata
from quality import checks
from quality.dedup import DedupConfig
from quality.dedup_report import DEDUP_COLUMN_DOCS, removed_per_domain
from quality.features import FEATURE_COLUMN_DOCS, FeatureConfig, compute_turn_features
from quality.labels import (
    CATEGORIES,
    LABEL_COLUMN_DOCS,
    examples_markdown,
    label_turns,
    load_policy,
)
from quality.stage import dedup_across_partitions
from sources.schema import DOMAINS
from sources.storage import partition_path

BAR_WIDTH = 30  # characters of the widest bar in the Markdown category chart


def _written_table_metadata(path: Path, docs: dict[str, str]) -> dict:
    """Standard table metadata, with the schema read from the file the library wrote."""
    return table_metadata(path, pq.read_schema(path), docs)


def category_chart(counts: dict[str, int]) -> str:
    """Category counts as a Markdown table with a text bar per row."""
    total = sum(counts.values()) or 1
    widest = max(counts.values(), default=0) or 1
    rows = [{"category": category, "turns": counts.get(category, 0),
             "share": f"{counts.get(category, 0) / total:.1%}",
             "": "█" * round(BAR_WIDTH * counts.get(category, 0) / widest)}
            for category in CATEGORIES]
    return records_table(rows)


@dg.asset(partitions_def=domain_partitions, group_name="quality", deps=["raw_turns"],
          check_specs=[dg.AssetCheckSpec("features_in_range", asset="turn_features")])
def turn_features(context: dg.AssetExecutionContext, storage: WorldtraceStorage
                  ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Per-turn features of one domain, computed in DuckDB and numpy MinHash: overlap with the
    action and with earlier context, novelty, Jaccard with the previous and the most similar
    earlier observation, length ratios, corpus frequency (boilerplate), error flag."""
    domain = context.partition_key
    out_path = partition_path(storage.data_path, "turn_features", domain)
    config = FeatureConfig()
    stats = compute_turn_features(partition_path(storage.data_path, "raw_turns", domain),
                                  out_path, config)
    context.log.info(f"{domain}: {stats.turns} turns, {stats.trajectories} trajectories, "
                     f"{stats.turns_per_second:,.0f} turns/s ({config})")
    yield dg.MaterializeResult(metadata={
        **_written_table_metadata(out_path, FEATURE_COLUMN_DOCS),
        "config": str(config),
        "turns_per_second": round(stats.turns_per_second),
        "seconds_per_step": dg.MetadataValue.md(records_table(
            [{"step": step, "seconds": round(seconds, 2)}
             for step, seconds in sorted(stats.seconds.items())])),
    })
    yield check_result("features_in_range", checks.features_in_range(out_path))


@dg.asset(partitions_def=domain_partitions, group_name="quality", deps=["turn_features"],
          check_specs=[dg.AssetCheckSpec("every_turn_labelled", asset="turn_labels"),
                       dg.AssetCheckSpec("weights_in_unit_interval", asset="turn_labels"),
                       dg.AssetCheckSpec("policy_hash_recorded", asset="turn_labels")])
def turn_labels(context: dg.AssetExecutionContext, storage: WorldtraceStorage
                ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Category (empty, error, unchanged, echo, boilerplate, informative) and loss weight of
    every turn, from the versioned policy file (quality/policy.toml), whose hash every row
    records."""
    domain = context.partition_key
    policy = load_policy()
    turns_path = partition_path(storage.data_path, "raw_turns", domain)
    out_path = partition_path(storage.data_path, "turn_labels", domain)
    stats = label_turns(partition_path(storage.data_path, "turn_features", domain),
                        out_path, policy)
    context.log.info(f"{domain}: {stats.turns} turns labelled with {policy}: "
                     + ", ".join(f"{c} {stats.categories[c]}" for c in CATEGORIES))
    histogram = [{"loss_weight": weight, "turns": count}
                 for weight, count in sorted(stats.weight_histogram.items())]
    yield dg.MaterializeResult(metadata={
        **_written_table_metadata(out_path, LABEL_COLUMN_DOCS),
        "policy": str(policy),
        "policy_hash": policy.hash,
        "category_distribution": dg.MetadataValue.md(category_chart(dict(stats.categories))),
        "weight_histogram": dg.MetadataValue.md(records_table(histogram)),
        "examples": dg.MetadataValue.md(examples_markdown(out_path, turns_path)),
        **{f"share_{category}": round(stats.share(category), 4) for category in CATEGORIES},
    })
    yield check_result("every_turn_labelled", checks.every_turn_labelled(turns_path, out_path))
    yield check_result("weights_in_unit_interval", checks.weights_in_unit_interval(out_path))
    yield check_result("policy_hash_recorded", checks.policy_hash_recorded(out_path, policy.hash))


@dg.asset(group_name="quality", deps=["raw_trajectories", "raw_turns"])
def trajectory_dedup(context: dg.AssetExecutionContext, storage: WorldtraceStorage
                     ) -> dg.MaterializeResult:
    """Exact (content hash) and near-duplicate trajectories across all domain partitions (MinHash
    LSH over stored signatures, confirmed by exact Jaccard >= 0.8; short trajectories by
    character shingles, clustered as stars), one kept per cluster by a stable rule, the removed
    ones listed with their cluster and reason. Cross-partition: a copy filed under two domains
    is still one trajectory. Same code as grading and the benchmark (quality.stage)."""
    out_dir = storage.data_path / "trajectory_dedup"
    config = DedupConfig()
    stats = dedup_across_partitions(storage.data_path, out_dir, DOMAINS, config)
    context.log.info(f"{stats.trajectories} trajectories, {stats.removed} removed "
                     f"({stats.exact_duplicates} exact, {stats.near_duplicates} near), "
                     f"largest cluster {stats.largest_cluster}")
    decisions = out_dir / "trajectory_dedup.parquet"
    return dg.MaterializeResult(metadata={
        **_written_table_metadata(decisions, DEDUP_COLUMN_DOCS),
        "config": str(config),
        **{name: getattr(stats, name) for name in (
            "trajectories", "kept", "removed", "exact_duplicates", "near_duplicates",
            "short_by_chars", "too_short_for_near", "candidate_pairs", "confirmed_pairs",
            "confirmed_short_pairs", "rejected_pairs", "clusters", "largest_cluster")},
        "removed_per_domain": dg.MetadataValue.md(records_table(removed_per_domain(decisions))),
        "pairs": dg.MetadataValue.md(markdown_preview(out_dir / "duplicate_pairs.parquet")),
    })
