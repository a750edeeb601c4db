"""The per-turn steps over every shard of a domain: features, labels and scrubbing read one
shard of the raw tables and write the same shard of theirs (shard-local: no row needs another
shard), so a domain's outputs have exactly its input's shards.

A shard that the input no longer has (the shard count was lowered) is removed from the outputs,
so a reader of the whole domain never reads rows of a layout that is gone. Stats of the shards
add up to the domain's. One caveat: three features are counted over the partition a step reads
(CORPUS_COLUMNS: the boilerplate corpus and template frequencies, and own_words, which leaves out
the partition's frequent "chrome" words), so with several shards they are counted within each
shard, and a label that reads them may differ from the one-shard label.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from quality.features import (
    FREQUENCY_COLUMNS,
    FeatureConfig,
    FeatureStats,
    compute_turn_features,
)
from quality.labels import LabelStats, Policy, label_turns
from quality.scrub import ScrubStats, scrub_partition
from quality.tables import (
    SCRUB_FINDINGS,
    SCRUBBED_TRAJECTORIES,
    SCRUBBED_TURNS,
    TURN_FEATURES,
    TURN_LABELS,
)
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS, Table

SCRUB_TABLES = (SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS, SCRUB_FINDINGS)
CORPUS_COLUMNS = ("own_words", *FREQUENCY_COLUMNS)  # turn_features counted over the partition
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


def _over_shards(data_dir: Path, domain: str, outputs: tuple[Table, ...], out_dir: Path,
                 step: Callable[[str], Stats], empty: Stats) -> Stats:
    """Run `step` on every shard of the domain's raw turns, drop output shards the input
    lacks, and add up the stats."""
    shards = RAW_TURNS.shards(data_dir, domain)
    if not shards:
        raise FileNotFoundError(f"{RAW_TURNS.domain_glob(data_dir, domain)}: no shard of "
                                f"raw_turns for {domain}; ingest it first")
    for shard in shards:
        add_stats(empty, step(shard))
    for table in outputs:
        for gone in set(table.shards(out_dir, domain)) - set(shards):
            shutil.rmtree(table.path(out_dir, domain, gone).parent, ignore_errors=True)
    return empty


def features_for_domain(data_dir: Path, out_dir: Path, domain: str,
                        config: FeatureConfig | None = None) -> FeatureStats:
    """turn_features of every shard of a domain."""
    return _over_shards(data_dir, domain, (TURN_FEATURES,), out_dir, lambda shard: (
        compute_turn_features(RAW_TURNS.path(data_dir, domain, shard),
                              TURN_FEATURES.path(out_dir, domain, shard),
                              config or FeatureConfig())),
        FeatureStats())


def labels_for_domain(out_dir: Path, domain: str, policy: Policy, data_dir: Path | None = None
                      ) -> LabelStats:
    """turn_labels of every shard of a domain (from the turn_features under `out_dir`; the
    shards are those of raw_turns under `data_dir`, by default `out_dir`)."""
    return _over_shards(data_dir or out_dir, domain, (TURN_LABELS,), out_dir, lambda shard: (
        label_turns(TURN_FEATURES.path(out_dir, domain, shard),
                    TURN_LABELS.path(out_dir, domain, shard), policy)), LabelStats())


def scrub_domain(data_dir: Path, out_dir: Path, domain: str) -> ScrubStats:
    """The scrubbed copies and findings of every shard of a domain."""
    return _over_shards(data_dir, domain, SCRUB_TABLES, out_dir, lambda shard: scrub_partition(
        RAW_TRAJECTORIES.path(data_dir, domain, shard), RAW_TURNS.path(data_dir, domain, shard),
        *(table.path(out_dir, domain, shard) for table in SCRUB_TABLES)), ScrubStats())
