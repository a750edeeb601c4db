"""The Parquet sinks of one ingest run: one per (table, domain, shard), opened with a shard's
first row, finished early once no later source can write their domain (sources/ingest.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path

import pyarrow as pa

from sources.catalog import SourceSpec
from sources.schema import DOMAINS
from sources.shards import ShardConfig
from sources.source_merge import RunOutput
from sources.storage import ParquetSink
from sources.tables import INGEST_QUARANTINE, RAW_TRAJECTORIES, RAW_TURNS

# Text a sink holds as Python rows before it compresses them (ParquetSink.park): a trajectory
# sink's 4,096 rows are many turns, wide (Android's: 9 KB a row); a turn sink's rows are capped
# by their count (4,096 rows: 2-12 MB of the generated domains), flat with the run's size.
PENDING_BYTES: dict[str, int | None] = {
    RAW_TRAJECTORIES.name: 4 << 20, RAW_TURNS.name: None, INGEST_QUARANTINE.name: 4 << 20}
TABLE_SCHEMAS: dict[str, pa.Schema] = {  # the tables ingest writes (sources/tables.py)
    table.name: table.schema for table in (RAW_TRAJECTORIES, RAW_TURNS, INGEST_QUARANTINE)}


def open_partition_sinks(paths: dict[str, Path], stack: ExitStack) -> dict[str, ParquetSink]:
    """A partition's three sinks, table name -> sink, writing to `paths` (table name -> file),
    each closed (its file moved into place) when `stack` closes."""
    return {name: stack.enter_context(ParquetSink(path, TABLE_SCHEMAS[name],
                                                  max_pending_bytes=PENDING_BYTES[name]))
            for name, path in paths.items()}


class PartitionSinks:
    """One ParquetSink per (table, domain, shard); the first row of a shard opens all three
    tables, so every partition has all three files (an empty quarantine is a file too). A row
    goes to the shard of its source file (`source_path`)."""

    def __init__(self, output: RunOutput, stack: ExitStack, shards: ShardConfig) -> None:
        self.output = output
        self.stack = stack
        self.shards = shards
        self.sinks: dict[tuple[str, str, str], ParquetSink] = {}
        self.closed: set[str] = set()  # domains whose files are finished

    def get(self, table: str, domain: str, source_path: str) -> ParquetSink:
        return self.open(table, domain, self.shards.shard_of(source_path))

    def open(self, table: str, domain: str, shard: str) -> ParquetSink:
        if (table, domain, shard) not in self.sinks:
            if domain in self.closed:
                raise RuntimeError(f"a row of domain {domain!r} after its files were finished "
                                   "(a bug: no later source was to write that domain)")
            paths = {name: self.output.open_path(name, domain, shard) for name in TABLE_SCHEMAS}
            for name, sink in open_partition_sinks(paths, self.stack).items():
                self.sinks[name, domain, shard] = sink
        return self.sinks[table, domain, shard]

    def park(self) -> None:
        """Compress the rows every sink holds for its next row group (when a source ends: the
        sinks of its domains may get no row again before the run ends)."""
        for sink in self.sinks.values():
            sink.park()

    def close_domains(self, done: set[str]) -> None:
        """Finish the files of the domains no later source can write (their last row group
        is the one the run's end would write: the same bytes), so their rows stop waiting."""
        for key in [key for key in self.sinks if key[1] in done]:
            self.sinks.pop(key).close()
        self.closed |= done


def domains_done(later: list[SourceSpec], sinks: Iterable[tuple[str, str, str]]) -> set[str]:
    """The domains of open sinks that none of the `later` sources can write: a source with a
    domain writes only that domain (its quarantine rows too); one without may write any."""
    if any(spec.domain not in DOMAINS for spec in later):
        return set()
    return {domain for _, domain, _ in sinks} - {spec.domain for spec in later}
