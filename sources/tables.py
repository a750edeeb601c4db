"""Write ingested sources as the three canonical tables, hive-partitioned by domain.

    {data}/raw_trajectories/domain=<d>/part-0.parquet
    {data}/raw_turns/domain=<d>/part-0.parquet
    {data}/ingest_quarantine/domain=<d>/part-0.parquet

Used by both the `worldtrace ingest` CLI and the Dagster ingest asset; sinks open per domain
as rows arrive, so a corpus of many domains streams through in one pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path

import pyarrow as pa

from sources.catalog import SourceSpec
from sources.ingest import IngestedTrajectory, IngestStats, ingest_source
from sources.schema import QUARANTINE_SCHEMA, TRAJECTORY_SCHEMA, TURN_SCHEMA
from sources.storage import ParquetSink, partition_path

TABLE_SCHEMAS: dict[str, pa.Schema] = {
    "raw_trajectories": TRAJECTORY_SCHEMA,
    "raw_turns": TURN_SCHEMA,
    "ingest_quarantine": QUARANTINE_SCHEMA,
}


class DomainSinks:
    """One ParquetSink per (table, domain); the first row of a domain opens all three tables,
    so every domain partition has all three files (an empty quarantine is a file too)."""

    def __init__(self, data_dir: Path, stack: ExitStack) -> None:
        self.data_dir = data_dir
        self.stack = stack
        self.sinks: dict[tuple[str, str], ParquetSink] = {}

    def get(self, table: str, domain: str) -> ParquetSink:
        if (table, domain) not in self.sinks:
            for name, schema in TABLE_SCHEMAS.items():
                path = partition_path(self.data_dir, name, domain)
                self.sinks[name, domain] = self.stack.enter_context(ParquetSink(path, schema))
        return self.sinks[table, domain]


def write_tables(
    specs: Iterable[SourceSpec],
    data_dir: Path,
    domains: Iterable[str] = (),
    on_trajectory: Callable[[IngestStats], None] | None = None,
) -> IngestStats:
    """Ingest every source into the canonical tables under `data_dir`.

    `domains` lists partitions to write even when empty (a Dagster partition run names its own).
    A failure leaves the previous files in place (each sink writes to a temp file first).
    """
    stats = IngestStats()
    with ExitStack() as stack:
        sinks = DomainSinks(data_dir, stack)
        for domain in domains:
            sinks.get("raw_turns", domain)
        for spec in specs:
            for record in ingest_source(spec, stats):
                if isinstance(record, IngestedTrajectory):
                    domain = record.trajectory["domain"]
                    sinks.get("raw_trajectories", domain).write(record.trajectory)
                    sinks.get("raw_turns", domain).write_many(record.turns)
                    if on_trajectory is not None:
                        on_trajectory(stats)
                else:
                    sinks.get("ingest_quarantine", record.row["domain"]).write(record.row)
    return stats
