"""Quality stage: raw_turns -> staged_turn_features (per shard) -> turn_features (per domain) ->
turn_labels; raw tables -> trajectory_dedup.

Turn-level loss masking (the Qwen-AgentWorld recipe's key detail): every turn gets features
(overlap, novelty, Jaccard, length ratios, corpus frequency, error flag), a category from the
versioned policy file and a loss weight; low-information turns stay in the context with a low
weight. Near-duplicate trajectories are clustered and all but one per cluster marked removed.
"""

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

import quality
from assets.asset_info import asset_info, domain_check, shard_check
from assets.partitions import (
    domain_and_shard,
    domain_partitions,
    from_shards,
    shard_partitions,
    whole_domain,
)
from assets.plots import bar_chart, histogram, image_metadata
from assets.resources import WorldtraceStorage
from assets.table_metadata import (
    check_result,
    column_schema,
    markdown_preview,
    reads,
    records_table,
    table_metadata,
)
from quality import checks
from quality.dedup import DedupConfig
from quality.dedup_report import removed_per_domain
from quality.features import FeatureConfig
from quality.labels import CATEGORIES, DEFAULT_POLICY, examples_markdown, load_policy
from quality.sharded import (
    finish_domain_features,
    labels_for_domain,
    order_of_domain,
    stage_shard,
)
from quality.stage import dedup_across_partitions
from quality.tables import (
    DEDUP_SIGNATURES,
    DUPLICATE_PAIRS,
    STAGED_TURN_FEATURES,
    TRAJECTORY_DEDUP,
    TURN_FEATURES,
    TURN_LABELS,
)
from sources.schema import DOMAINS
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS

BAR_WIDTH = 30  # characters of the widest bar in the Markdown category chart
INFO = {"group_name": "quality",
        **asset_info("curate", kinds={"parquet", "duckdb", "numpy"}, code=[quality])}


class FeatureSettings(dg.Config):
    """The turn-feature parameters a run may change (the rest stay as quality.features sets
    them): corpus-frequency LSH threshold, exact-Jaccard limit, chrome-word share, DuckDB.
    staged_turn_features and turn_features take the same settings (the threshold is
    turn_features' own); turn_features refuses shards staged with other ones."""

    corpus_frequency_threshold: float = 0.9
    exact_max_shingles: int = 64
    common_word_share: float = 0.1
    duckdb_threads: int = 2
    duckdb_memory_limit: str = "1GB"

    def feature_config(self) -> FeatureConfig:
        default = FeatureConfig()
        return dataclasses.replace(
            default,
            lsh=dataclasses.replace(default.lsh, threshold=self.corpus_frequency_threshold),
            exact_max_shingles=self.exact_max_shingles, common_word_share=self.common_word_share,
            duckdb_threads=self.duckdb_threads, duckdb_memory_limit=self.duckdb_memory_limit)


class LabelSettings(dg.Config):
    """Which policy file labels the turns (thresholds and loss weights per category)."""

    policy_file: str = str(DEFAULT_POLICY)


class DedupSettings(dg.Config):
    """Near-duplicate thresholds: word 5-gram Jaccard, and character 5-gram Jaccard for short
    trajectories (below min_shingles word shingles)."""

    threshold: float = 0.8
    short_threshold: float = 0.7
    min_shingles: int = 20

    def dedup_config(self) -> DedupConfig:
        default = DedupConfig()
        return dataclasses.replace(
            default, lsh=dataclasses.replace(default.lsh, threshold=self.threshold),
            short_lsh=dataclasses.replace(default.short_lsh, threshold=self.short_threshold),
            min_shingles=self.min_shingles)


def category_chart(counts: dict[str, int]) -> str:
    """Category counts as a Markdown table with a text bar per row."""
    total = sum(counts.values()) or 1
    widest = max(counts.values(), default=0) or 1
    rows = [{"category": category, "turns": counts.get(category, 0),
             "share": f"{counts.get(category, 0) / total:.1%}",
             "": "█" * round(BAR_WIDTH * counts.get(category, 0) / widest)}
            for category in CATEGORIES]
    return records_table(rows)


def seconds_table(seconds: dict[str, float]) -> dg.MetadataValue:
    """Seconds per step, as a Markdown table."""
    return dg.MetadataValue.md(records_table(
        [{"step": step, "seconds": round(value, 2)} for step, value in sorted(seconds.items())]))


@dg.asset(partitions_def=shard_partitions,
          deps=whole_domain(*reads(RAW_TURNS, RAW_TRAJECTORIES)), **INFO,
          # checked in its own step, as it writes them: turn_features must not count the
          # domain from a shard that lacks rows
          check_specs=[shard_check(
              "one_row_per_turn", "staged_turn_features", "One staged row for every raw turn "
              "of the shard; blocking: turn_features counts the domain from these rows.",
              blocking=True)])
def staged_turn_features(context: dg.AssetExecutionContext, config: FeatureSettings,
                         storage: WorldtraceStorage
                         ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Steps 1 and 2 of turn_features for one shard of a domain: the domain's common words (a
    sample of every shard, the same for each), then every feature of the shard's turns but the
    two corpus frequencies, with the MinHash signatures turn_features counts those from over
    the whole domain. The heaviest per-turn work, one step per shard. The files stay after
    turn_features reads them (it reruns from them), at about 1 KB a turn."""
    domain, shard = domain_and_shard(context)
    feature_config = config.feature_config()
    data = storage.data_path
    stats = stage_shard(data, data, domain, shard, feature_config)
    context.log.info(f"{domain} shard {shard}: {stats.turns} turns, {stats.trajectories} "
                     f"trajectories staged, {stats.turns_per_second:,.0f} turns/s "
                     f"({feature_config})")
    yield dg.MaterializeResult(metadata={
        **table_metadata(STAGED_TURN_FEATURES, data, domain,
                         ["turn_index", "novelty", "overlap_action", "jaccard_prev", "own_words"],
                         shard),
        "config": str(feature_config),
        "settings": dg.MetadataValue.json(config.model_dump()),
        "turns_per_second": round(stats.turns_per_second),
        "seconds_per_step": seconds_table(stats.seconds),
    })
    yield check_result("one_row_per_turn", checks.one_staged_row_per_turn(
        RAW_TURNS.path(data, domain, shard), STAGED_TURN_FEATURES.path(data, domain, shard)))


@dg.asset(partitions_def=domain_partitions,
          deps=from_shards(*reads(STAGED_TURN_FEATURES, RAW_TURNS, RAW_TRAJECTORIES)), **INFO)
def turn_features(context: dg.AssetExecutionContext, config: FeatureSettings,
                  storage: WorldtraceStorage) -> dg.MaterializeResult:
    """Per-turn features of one domain (every shard of it), computed in DuckDB and numpy
    MinHash: overlap with the action and with earlier context, novelty, Jaccard with the
    previous and the most similar earlier observation, length ratios, corpus frequency
    (boilerplate, counted over the whole domain), error flag. Step 3: the two corpus
    frequencies over the domain from every shard's staged_turn_features, and each shard's
    file. The staged partitions stay on disk, as materialized (so this reruns alone, e.g.
    with another corpus_frequency_threshold), at about 1 KB of signatures a turn
    (`staged_mb`)."""
    domain = context.partition_key
    feature_config = config.feature_config()
    data = storage.data_path
    clock = time.perf_counter()
    order = order_of_domain(data, domain)
    seconds = {"domain_order": time.perf_counter() - clock,
               "corpus_frequency": finish_domain_features(data, data, domain, order,
                                                          feature_config, keep_staged=True)}
    turns_per_second = order.rows / max(sum(seconds.values()), 1e-9)
    context.log.info(f"{domain}: {order.rows} turns over {len(order.positions)} shards, "
                     f"{turns_per_second:,.0f} turns/s ({feature_config})")
    novelty = [v for path in TURN_FEATURES.domain_files(storage.data_path, domain)
               for v in pq.read_table(path, columns=["novelty"])["novelty"].to_pylist()
               if v is not None]
    return dg.MaterializeResult(metadata={
        **table_metadata(TURN_FEATURES, storage.data_path, domain,
                         ["turn_index", "novelty", "overlap_action", "jaccard_prev",
                          "corpus_frequency"]),
        "config": str(feature_config),
        "settings": dg.MetadataValue.json(config.model_dump()),
        "novelty_distribution": image_metadata(histogram(
            novelty, bins=[i / 20 for i in range(21)], title=f"{domain}: novelty per turn",
            xlabel="share of the observation's shingles never seen before")),
        "turns_per_second": round(turns_per_second),
        "seconds_per_step": seconds_table(seconds),
        "staged_mb": round(sum(path.stat().st_size for path in
                               STAGED_TURN_FEATURES.domain_files(data, domain)) / 1e6, 2),
    })


@dg.asset(partitions_def=domain_partitions,
          deps=[*from_shards(*reads(RAW_TURNS)), *reads(TURN_FEATURES)], **INFO,
          # the checks that read only the tables are in assets/checks.py; this one compares
          # with the policy this run was configured with
          check_specs=[
              domain_check("policy_hash_recorded", "turn_labels",
                           "Every row and the Parquet file's metadata carry the hash of the "
                           "policy file that labelled them.")])
def turn_labels(context: dg.AssetExecutionContext, config: LabelSettings,
                storage: WorldtraceStorage
                ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Category (empty, error, unchanged, echo, boilerplate, informative) and loss weight of
    every turn, from the versioned policy file (quality/policy.toml), whose hash every row
    records; with the rule that named it, the feature values that rule read, and whether the
    turn is ambiguous (within the policy's margin of another category)."""
    domain = context.partition_key
    policy = load_policy(Path(config.policy_file))
    turns_path = RAW_TURNS.domain_files(storage.data_path, domain)
    stats = labels_for_domain(storage.data_path, domain, policy)
    out_path = TURN_LABELS.domain_files(storage.data_path, domain)
    context.log.info(f"{domain}: {stats.turns} turns labelled with {policy}: "
                     + ", ".join(f"{c} {stats.categories[c]}" for c in CATEGORIES)
                     + f"; {stats.ambiguous} ambiguous")
    fired = [row for row in stats.rule_rows() if row["turns"]]
    weights = [{"loss_weight": weight, "turns": count}
                 for weight, count in sorted(stats.weight_histogram.items())]
    yield dg.MaterializeResult(metadata={
        **table_metadata(TURN_LABELS, storage.data_path, domain,
                         ["trajectory_id", "turn_index", "category", "loss_weight",
                          "observation_format"]),
        "policy": str(policy),
        "policy_hash": policy.hash,
        "policy_file": dg.MetadataValue.path(config.policy_file),
        "category_distribution": dg.MetadataValue.md(category_chart(dict(stats.categories))),
        "category_plot": image_metadata(bar_chart(
            CATEGORIES, [stats.categories[c] for c in CATEGORIES],
            title=f"{domain}: turns per category", ylabel="turns")),
        "weight_histogram": dg.MetadataValue.md(records_table(weights)),
        "weight_plot": image_metadata(bar_chart(
            [f"{row['loss_weight']:g}" for row in weights], [row["turns"] for row in weights],
            title=f"{domain}: loss weight of the observation tokens", ylabel="turns")),
        "rule_distribution": dg.MetadataValue.md(records_table(stats.rule_rows())),
        "rule_plot": image_metadata(bar_chart(
            [row["rule"] for row in fired], [row["share"] for row in fired],
            title=f"{domain}: share of turns per rule (the first that held)",
            ylabel="share of turns")),
        "ambiguous_turns": stats.ambiguous,
        "share_ambiguous": round(stats.ambiguous_share, 4),
        "ambiguous_loss_weight": str(policy.ambiguity.loss_weight),
        "examples": dg.MetadataValue.md(examples_markdown(out_path, turns_path)),
        **{f"share_{category}": round(stats.share(category), 4) for category in CATEGORIES},
    })
    yield check_result("policy_hash_recorded", checks.policy_hash_recorded(out_path, policy.hash))


@dg.asset(deps=reads(RAW_TRAJECTORIES, RAW_TURNS), **INFO)
def trajectory_dedup(context: dg.AssetExecutionContext, config: DedupSettings,
                     storage: WorldtraceStorage) -> dg.MaterializeResult:
    """Exact (content hash) and near-duplicate trajectories across all domain partitions (MinHash
    LSH over stored signatures, confirmed by exact Jaccard >= 0.8; short trajectories by
    character shingles, clustered as stars), one kept per cluster by a stable rule, the removed
    ones listed with their cluster and reason. Cross-partition: a copy filed under two domains
    is still one trajectory. Same code as grading and the benchmark (quality.stage)."""
    dedup_config = config.dedup_config()
    stats = dedup_across_partitions(storage.data_path, storage.data_path, DOMAINS, dedup_config)
    context.log.info(f"{stats.trajectories} trajectories, {stats.removed} removed "
                     f"({stats.exact_duplicates} exact, {stats.near_duplicates} near), "
                     f"largest cluster {stats.largest_cluster}")
    per_domain = removed_per_domain(TRAJECTORY_DEDUP.path(storage.data_path))
    return dg.MaterializeResult(metadata={
        **table_metadata(TRAJECTORY_DEDUP, storage.data_path, None,
                         ["domain", "cluster_size", "kept", "reason", "max_jaccard"]),
        "config": str(dedup_config),
        "settings": dg.MetadataValue.json(config.model_dump()),
        "removed_plot": image_metadata(bar_chart(
            [row["domain"] for row in per_domain],
            [row["trajectories"] - row["kept"] for row in per_domain],
            title="duplicate trajectories removed per domain", ylabel="trajectories")),
        **{name: getattr(stats, name) for name in (
            "trajectories", "kept", "removed", "exact_duplicates", "near_duplicates",
            "short_by_chars", "too_short_for_near", "candidate_pairs", "confirmed_pairs",
            "confirmed_short_pairs", "rejected_pairs", "clusters", "largest_cluster")},
        "removed_per_domain": dg.MetadataValue.md(records_table(per_domain)),
        "pairs": dg.MetadataValue.md(markdown_preview(DUPLICATE_PAIRS.path(storage.data_path))),
        # the side tables decontamination and the bench read downstream: describe them too
        "pairs_schema": dg.MetadataValue.table_schema(column_schema(DUPLICATE_PAIRS)),
        "signatures_schema": dg.MetadataValue.table_schema(column_schema(DEDUP_SIGNATURES)),
    })
