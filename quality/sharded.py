"""The per-turn steps over every shard of a domain: features, labels and scrubbing read one
shard of the raw tables and write the same shard of theirs (shard-local: no row needs another
shard), so a domain's outputs have exactly its input's shards.

A shard that the input no longer has (the shard count was lowered) is removed from the outputs,
so a reader of the whole domain never reads rows of a layout that is gone. Stats of the shards
add up to the domain's. Three features are counted over the whole domain (CORPUS_COLUMNS: the
boilerplate corpus and template frequencies, and own_words, which leaves out the domain's
frequent "chrome" words): features run in three steps, a sample of the domain's common words,
the shards' other features staged with their signatures (the staged_turn_features table, one
step per shard: `stage_shard`), then the frequencies over the domain's staged signatures
(quality/corpus_columns.py), so a domain cut into shards gets the features and labels of one
shard.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from quality.corpus_columns import FREQUENCY_COLUMNS, domain_common_words, finish_turn_features
from quality.domain_order import DomainOrder, domain_order
from quality.features import FeatureConfig, FeatureStats, stage_turn_features
from quality.labels import LabelStats, Policy, distinct_trajectories, label_turns
from quality.scrub import ScrubStats, scrub_partition
from quality.staged_features import check_staged, staged_from
from quality.tables import (
    SCRUB_FINDINGS,
    SCRUBBED_TRAJECTORIES,
    SCRUBBED_TURNS,
    STAGED_TURN_FEATURES,
    TURN_FEATURES,
    TURN_LABELS,
)
from sources.duckdb_cursors import duckdb_cursor
from sources.storage import parquet_view
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS, Table

SCRUB_TABLES = (SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS, SCRUB_FINDINGS)
CORPUS_COLUMNS = ("own_words", *FREQUENCY_COLUMNS)  # turn_features counted over the domain
Stats = TypeVar("Stats", FeatureStats, LabelStats, ScrubStats)


def add_stats(total: Stats, part: Stats) -> Stats:
    """`total` with `part` added: numbers and counters summed, text kept from the first."""
    for item in dataclasses.fields(total):
        mine, theirs = getattr(total, item.name), getattr(part, item.name)
        if isinstance(mine, Counter):
            mine.update(theirs)
        elif isinstance(mine, (int, float)):
            setattr(total, item.name, mine + theirs)
        elif not mine:
            setattr(total, item.name, theirs)
    return total


def _shards_of(data_dir: Path, domain: str) -> list[str]:
    shards = RAW_TURNS.shards(data_dir, domain)
    if not shards:
        raise FileNotFoundError(f"{RAW_TURNS.domain_glob(data_dir, domain)}: no shard of "
                                f"raw_turns for {domain}; ingest it first")
    return shards


def _drop_lost_shards(data_dir: Path, domain: str, outputs: tuple[Table, ...], out_dir: Path
                      ) -> None:
    """Remove the output shards that the domain's raw turns no longer have."""
    shards = set(RAW_TURNS.shards(data_dir, domain))
    for table in outputs:
        for gone in set(table.shards(out_dir, domain)) - shards:
            shutil.rmtree(table.path(out_dir, domain, gone).parent, ignore_errors=True)


def _over_shards(data_dir: Path, domain: str, outputs: tuple[Table, ...], out_dir: Path,
                 step: Callable[[str], Stats], empty: Stats) -> Stats:
    """Run `step` on every shard of the domain's raw turns, drop output shards the input
    lacks, and add up the stats."""
    for shard in _shards_of(data_dir, domain):
        add_stats(empty, step(shard))
    _drop_lost_shards(data_dir, domain, outputs, out_dir)
    return empty


def order_of_domain(data_dir: Path, domain: str) -> DomainOrder:
    """The one-shard order of a domain's raw turns over its shards (quality/domain_order.py)."""
    shards = RAW_TURNS.shards(data_dir, domain)
    return domain_order([RAW_TURNS.path(data_dir, domain, s) for s in shards],
                        [RAW_TRAJECTORIES.path(data_dir, domain, s) for s in shards])


def common_words_of_domain(data_dir: Path, domain: str, order: DomainOrder,
                           config: FeatureConfig) -> np.ndarray:
    """Step 1: the domain's common words, from its sample's rows in every shard."""
    return domain_common_words([RAW_TURNS.path(data_dir, domain, s)
                                for s in RAW_TURNS.shards(data_dir, domain)], order, config)


def stage_shard_features(data_dir: Path, out_dir: Path, domain: str, shard: str,
                         config: FeatureConfig, common: np.ndarray) -> FeatureStats:
    """Step 2, shard-local: one shard's features but the corpus frequencies, staged (the
    staged_turn_features table), recording what they were staged from."""
    turns = RAW_TURNS.path(data_dir, domain, shard)
    return stage_turn_features(turns, STAGED_TURN_FEATURES.path(out_dir, domain, shard), config,
                               common, staged_from(turns, common, config))


def stage_shard(data_dir: Path, out_dir: Path, domain: str, shard: str,
                config: FeatureConfig) -> FeatureStats:
    """Steps 1 and 2 for one shard of a domain (a domain x shard partition step): the domain's
    common words, from its sample's rows in every shard (the same words on every shard: the
    sample is taken in the domain's one-shard order, whatever the sharding), then the shard's
    staged features; staged shards the raw turns no longer have are dropped."""
    if not RAW_TURNS.path(data_dir, domain, shard).is_file():
        raise FileNotFoundError(f"{RAW_TURNS.path(data_dir, domain, shard)}: no raw_turns for "
                                f"{domain} shard {shard}; ingest it first")
    clock = time.perf_counter()
    common = common_words_of_domain(data_dir, domain, order_of_domain(data_dir, domain), config)
    seconds = time.perf_counter() - clock
    stats = stage_shard_features(data_dir, out_dir, domain, shard, config, common)
    stats.seconds["common_words"] += seconds
    _drop_lost_shards(data_dir, domain, (STAGED_TURN_FEATURES,), out_dir)
    return stats


def finish_domain_features(data_dir: Path, out_dir: Path, domain: str, order: DomainOrder,
                           config: FeatureConfig, keep_staged: bool = False) -> float:
    """Step 3: the corpus frequencies over the domain's staged shards (those of its raw turns,
    each checked against what it was staged from: quality/staged_features.py), then every
    shard's turn_features; output or staged shards the input lacks are dropped, and the staged
    files removed unless `keep_staged` (the staged_turn_features asset's partitions: Dagster
    records them as materialized, and turn_features reruns from them). Returns its seconds."""
    clock = time.perf_counter()
    shards = _shards_of(data_dir, domain)
    staged = [STAGED_TURN_FEATURES.path(out_dir, domain, s) for s in shards]
    missing = [str(path) for path in staged if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)}: no staged_turn_features for {domain} "
                                "(stage every shard of the domain first)")
    check_staged(staged, [RAW_TURNS.path(data_dir, domain, s) for s in shards], config)
    finish_turn_features(staged, [TURN_FEATURES.path(out_dir, domain, s) for s in shards],
                         order, config)
    _drop_lost_shards(data_dir, domain, (TURN_FEATURES, STAGED_TURN_FEATURES), out_dir)
    if not keep_staged:
        STAGED_TURN_FEATURES.remove_domain(out_dir, domain)
    return time.perf_counter() - clock


def features_for_domain(data_dir: Path, out_dir: Path, domain: str,
                        config: FeatureConfig | None = None) -> FeatureStats:
    """turn_features of every shard of a domain, the corpus columns counted over the domain."""
    config = config or FeatureConfig()
    _shards_of(data_dir, domain)  # a domain with no shard stops here, with its reason
    order = order_of_domain(data_dir, domain)
    common = common_words_of_domain(data_dir, domain, order, config)
    stats = _over_shards(data_dir, domain, (), out_dir, lambda shard: stage_shard_features(
        data_dir, out_dir, domain, shard, config, common), FeatureStats())
    stats.seconds["corpus_frequency"] += finish_domain_features(data_dir, out_dir, domain,
                                                                order, config)
    return stats


def labels_for_domain(out_dir: Path, domain: str, policy: Policy, data_dir: Path | None = None
                      ) -> LabelStats:
    """turn_labels of every shard of a domain (from the turn_features under `out_dir`; the
    shards are those of raw_turns under `data_dir`, by default `out_dir`), the boilerplate
    floor counted over the domain's trajectories."""
    data_dir = data_dir or out_dir
    _shards_of(data_dir, domain)  # a domain with no shard stops here, with its reason
    con = duckdb_cursor()
    try:
        parquet_view(con, "features", TURN_FEATURES.domain_glob(out_dir, domain))
        trajectories = distinct_trajectories(con)
    finally:
        con.close()
    return _over_shards(data_dir, domain, (TURN_LABELS,), out_dir, lambda shard: (
        label_turns(TURN_FEATURES.path(out_dir, domain, shard),
                    TURN_LABELS.path(out_dir, domain, shard), policy, trajectories)),
        LabelStats())


def _scrub_step(data_dir: Path, out_dir: Path, domain: str) -> Callable[[str], ScrubStats]:
    return lambda shard: scrub_partition(
        RAW_TRAJECTORIES.path(data_dir, domain, shard), RAW_TURNS.path(data_dir, domain, shard),
        *(table.path(out_dir, domain, shard) for table in SCRUB_TABLES))


def scrub_domain(data_dir: Path, out_dir: Path, domain: str) -> ScrubStats:
    """The scrubbed copies and findings of every shard of a domain."""
    return _over_shards(data_dir, domain, SCRUB_TABLES, out_dir,
                        _scrub_step(data_dir, out_dir, domain), ScrubStats())


def scrub_shard(data_dir: Path, out_dir: Path, domain: str, shard: str) -> ScrubStats:
    """The scrubbed copies and findings of one shard of a domain (a domain x shard partition
    step: scrubbing is shard-local), then the output shards the input lacks dropped."""
    if not RAW_TURNS.path(data_dir, domain, shard).is_file():
        raise FileNotFoundError(f"{RAW_TURNS.path(data_dir, domain, shard)}: no raw_turns for "
                                f"{domain} shard {shard}; ingest it first")
    stats = _scrub_step(data_dir, out_dir, domain)(shard)
    _drop_lost_shards(data_dir, domain, SCRUB_TABLES, out_dir)
    return stats
