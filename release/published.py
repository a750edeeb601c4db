"""What a release publishes: one config per table, one split (Parquet shard) per domain.

Every text cell (nested ones too: chat messages, bench histories) passes the scrubber again
on the way out, with placeholders numbered per trajectory; the count of what it still had to
replace is recorded (0 for the tables the scrub stage wrote).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from bench.tables import AGENTWORLDBENCH
from quality.nested import strings_in
from quality.scrub import Placeholders, scrub_text
from quality.secrets import gated_kinds
from quality.tables import (
    SCRUB_FINDINGS,
    SCRUBBED_TRAJECTORIES,
    SCRUBBED_TURNS,
    TRAJECTORY_DEDUP,
    TRAJECTORY_SPLIT,
    TURN_FEATURES,
    TURN_LABELS,
)
from sources.schema import DOMAINS
from sources.storage import file_list, load_sql
from sources.tables import Table
from training.tables import RL_SPLIT, RL_SPLIT_ALL_TURNS, SFT_SPLIT

READ_ROWS = 1024


@dataclass(frozen=True)
class PublishedTable:
    """A release config: its name, the data table it comes from, what it holds."""

    config: str
    table: Table
    description: str
    needs: tuple[Table, ...] = ()  # other tables the export joins

    def domain_files(self, data_dir: Path, domain: str) -> list[Path]:
        """The table's files for one domain (every shard of a sharded table, in order)."""
        if not self.table.partitioned:  # built across domains, filtered per domain
            return [p for p in [self.table.path(data_dir)] if p.exists()]
        return self.table.domain_files(data_dir, domain)

    def inputs(self, data_dir: Path, domain: str) -> list[Path]:
        """The files one domain's shard is exported from."""
        return [*self.domain_files(data_dir, domain),
                *(path for need in self.needs for path in need.domain_files(data_dir, domain))]

    def present(self, data_dir: Path, domain: str) -> bool:
        return bool(self.domain_files(data_dir, domain)) and all(
            need.has(data_dir, domain) for need in self.needs)


PUBLISHED: tuple[PublishedTable, ...] = (
    PublishedTable("trajectories", SCRUBBED_TRAJECTORIES,
                   "one row per trajectory: task, system prompt, outcome, source, metadata"),
    PublishedTable("turns", SCRUBBED_TURNS,
                   "one row per turn: action, observation, their formats, and the turn's "
                   "category, loss weight, the rule that named it, whether it is ambiguous and "
                   "its main features",
                   needs=(TURN_LABELS, TURN_FEATURES)),
    PublishedTable("dedup", TRAJECTORY_DEDUP,
                   "exact and near-duplicate clusters; `kept` marks the member that stays"),
    PublishedTable("split", TRAJECTORY_SPLIT,
                   "train / bench / contaminated pool of each kept trajectory"),
    PublishedTable("sft", SFT_SPLIT, "SFT conversations (system prompt variants, history, "
                                       "target observation with reasoning)"),
    PublishedTable("rl", RL_SPLIT, "RL prompts (one turn per trajectory) with the reference "
                                     "observation and the rule verifier's spec"),
    PublishedTable("rl_all_turns", RL_SPLIT_ALL_TURNS, "RL prompts of every turn (the Echo "
                                                         "Trap ablation)"),
    PublishedTable("agentworldbench", AGENTWORLDBENCH,
                   "AgentWorldBench samples from the bench pool (official JSONL in bench/)"),
    PublishedTable(SCRUB_FINDINGS.name, SCRUB_FINDINGS,
                   "where a secret or personal datum was replaced, its kind and placeholder "
                   "(never the value)"),
)


@dataclass
class ExportStats:
    """Rows per (config, split) and values the release pass still replaced, per kind."""

    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    rescrubbed: Counter[str] = field(default_factory=Counter)


@contextlib.contextmanager
def reader(table: PublishedTable, data_dir: Path, domain: str
           ) -> Iterator[pa.RecordBatchReader]:
    """The table's rows for one domain, in a stable order, as a stream with its schema."""
    files = table.domain_files(data_dir, domain)
    if table.config == "turns":
        sql, params = load_sql(__file__, "turns.sql"), {
            "turns": file_list(files),
            "labels": file_list(TURN_LABELS.domain_files(data_dir, domain)),
            "features": file_list(TURN_FEATURES.domain_files(data_dir, domain))}
    elif not table.table.partitioned:
        sql, params = load_sql(__file__, "dedup.sql"), {"path": str(files[0]), "domain": domain}
    else:  # the shards one after the other, each in its file order
        schema = pq.ParquetFile(files[0]).schema_arrow
        yield pa.RecordBatchReader.from_batches(schema, (
            batch for path in files
            for batch in pq.ParquetFile(path).iter_batches(batch_size=READ_ROWS)))
        return
    with duckdb.connect() as con:
        con.execute("SET threads TO 1")  # one thread: the same order on every build
        yield con.sql(sql, params=params).to_arrow_reader(READ_ROWS)


def write_shard(table: PublishedTable, data_dir: Path, domain: str, out_path: Path,
                stats: ExportStats) -> int:
    """Write one config's shard for one domain, every text cell scrubbed again; its rows."""
    rows = 0
    placeholders: dict[str, Placeholders] = {}
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with reader(table, data_dir, domain) as batches, \
            pq.ParquetWriter(out_path, batches.schema, compression="zstd") as writer:
        for batch in batches:
            records = [_scrubbed(row, placeholders, stats) for row in _gated_rows(batch)]
            writer.write_table(pa.Table.from_pylist(records, schema=batches.schema))
            rows += len(records)
    stats.rows.setdefault(table.config, {})[domain] = rows
    return rows


def _gated_rows(batch: pa.RecordBatch) -> Iterator[tuple[dict[str, Any], dict[str, tuple]]]:
    """Each row with the gated kinds of every string it holds (one polars pass per batch)."""
    rows = batch.to_pylist()
    strings = [s for row in rows for s in strings_in(row)]
    kinds = dict(zip(strings, gated_kinds(strings), strict=True)) if strings else {}
    for row in rows:
        yield row, kinds


def _scrubbed(gated: tuple[dict[str, Any], dict[str, tuple]],
              placeholders: dict[str, Placeholders], stats: ExportStats) -> dict[str, Any]:
    row, kinds = gated
    numbering = placeholders.setdefault(str(row.get("trajectory_id")), Placeholders())

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            if not kinds.get(value):
                return value
            text, replaced = scrub_text(value, numbering, kinds[value])
            stats.rescrubbed.update(kind for kind, _ in replaced)
            return text
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, list):
            return [clean(item) for item in value]
        return value

    return {key: clean(value) for key, value in row.items()}


def domains_present(table: PublishedTable, data_dir: Path) -> list[str]:
    return [domain for domain in DOMAINS if table.present(data_dir, domain)]
