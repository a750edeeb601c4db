"""Many sources in one output: a write replaces the rows of the sources it ingests, no others.

`worldtrace ingest A --out D` then `worldtrace ingest B --out D` keeps both A and B: each
partition (a shard of a domain, sources/shards.py) is rewritten as (its old rows of every other
source) + (this run's rows), grouped by
source name in sorted order and re-chunked into fixed-size row groups, so re-ingesting a source
gives byte-identical files whatever the order the sources were added in. IDs stay unique across
sources (the source name is part of every trajectory ID). Each row is written once: a run's
sinks write fresh files beside the partitions, and a fresh file that holds the partition's only
source is renamed into place (the merge would copy it unchanged); only a partition shared with
other sources is merged. A killed run's leftovers are removed by the next run.

Which path each source was read from is recorded beside the tables, one small JSON per shard
of a domain (sources/source_manifest.py).

A run whose source name is already in the output but was read from another path would replace
someone else's data under the same name: it is refused (`SourceConflict`) unless the caller
passes replace=True (`worldtrace ingest --replace`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sources.catalog import SourceSpec
from sources.source_manifest import (
    Manifest,
    load_manifest,
    manifest_path,
    recorded_domains,
    retire_legacy_manifest,
    write_shard_manifest,
)
from sources.storage import (
    COMPRESSION,
    FRESH_SUFFIX,
    ROWS_PER_BATCH,
    atomic_path,
    owner_tag,
    partition_dir,
    partition_path,
    remove_stale_temps,
    shard_keys,
)


class SourceConflict(ValueError):
    """A source name already in the output, read from another path."""


def source_entry(spec: SourceSpec) -> dict[str, str]:
    """What identifies a source's input: its absolute path and format."""
    return {"path": str(spec.path.absolute()), "format": spec.format}


def check_conflicts(specs: Iterable[SourceSpec], data_dir: Path, replace: bool) -> None:
    """Refuse a run that would replace another path's rows under the same source name."""
    if replace:
        return
    wanted = {spec.name: source_entry(spec) for spec in specs}
    for domain in recorded_domains(data_dir):
        for name, entry in load_manifest(data_dir, domain).items():
            if name in wanted and entry["path"] != wanted[name]["path"]:
                raise SourceConflict(
                    f"{data_dir}: source {name!r} (domain {domain}) was read from "
                    f"{entry['path']}; this run reads {wanted[name]['path']}. Give this source "
                    f"another name (--source NAME), or pass --replace to replace its rows."
                )


def _source_names(path: Path | None) -> set[str]:
    if path is None or not path.is_file():
        return set()
    column = pq.read_table(path, columns=["source"]).column("source")
    return set(pc.unique(column).to_pylist())


def _batches_of(path: Path, source: str) -> Iterator[pa.RecordBatch]:
    """The rows of one source in a partition file, in file order, one row group at a time."""
    parquet = pq.ParquetFile(path)
    for index in range(parquet.num_row_groups):
        group = parquet.read_row_group(index)
        rows = group.filter(pc.equal(group.column("source"), source))
        yield from rows.to_batches()


def merge_partition(
    final: Path, fresh: Path | None, schema: pa.Schema, run_sources: set[str]
) -> set[str]:
    """Rewrite `final` as its rows of other sources plus `fresh` (this run's rows), atomically.

    Returns the sources the merged file holds. `fresh` is None when this run wrote nothing to
    the domain (its sources' old rows there are dropped all the same).
    """
    old = final if final.is_file() else None
    keep_old = _source_names(old) - run_sources
    new = _source_names(fresh)
    plan = sorted([(name, old) for name in keep_old] + [(name, fresh) for name in new])
    with atomic_path(final) as tmp:
        with pq.ParquetWriter(tmp, schema, compression=COMPRESSION) as writer:
            pending: list[pa.RecordBatch] = []
            count = 0
            for name, path in plan:
                assert path is not None
                for batch in _batches_of(path, name):
                    pending.append(batch)
                    count += batch.num_rows
                    while count >= ROWS_PER_BATCH:
                        pending, count = _write_chunk(writer, schema, pending, ROWS_PER_BATCH)
            if count:
                _write_chunk(writer, schema, pending, count)
    return keep_old | new


def _write_chunk(
    writer: pq.ParquetWriter, schema: pa.Schema, pending: list[pa.RecordBatch], size: int
) -> tuple[list[pa.RecordBatch], int]:
    """Write the first `size` pending rows as one row group; return what is left."""
    table = pa.Table.from_batches(pending, schema=schema)
    writer.write_table(table.slice(0, size), row_group_size=size)
    rest = table.slice(size)
    return rest.to_batches(), rest.num_rows


class RunOutput:
    """Where one run's sinks write: a fresh file beside each final partition file (one shard of
    a domain; `.part-0.parquet.fresh-<pid>`, hidden from hive readers), written once. On
    success each fresh file is renamed onto its partition when nothing else is to be kept there
    (the common case: a first ingest, or a re-ingest of the same sources), else merged with the
    kept rows.
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.written: set[tuple[str, str, str]] = set()

    def fresh_path(self, table: str, domain: str, shard: str) -> Path:
        final = partition_path(self.data_dir, table, domain, shard)
        return final.with_name(f".{final.name}{FRESH_SUFFIX}{owner_tag()}")

    def open_path(self, table: str, domain: str, shard: str) -> Path:
        """The fresh path a sink writes, remembered so that it is placed or dropped."""
        self.written.add((table, domain, shard))
        return self.fresh_path(table, domain, shard)

    def partitions(self) -> set[tuple[str, str]]:
        """(domain, shard) of every partition the run wrote."""
        return {(domain, shard) for _, domain, shard in self.written}

    def discard(self) -> None:
        for table, domain, shard in self.written:
            self.fresh_path(table, domain, shard).unlink(missing_ok=True)


@dataclass(frozen=True)
class RunShards:
    """Which shards of its domains a run writes: `keys`, the configured shards of a domain;
    `only`, the one shard a partition step owns (None: every shard, a whole-domain run). A
    shard on disk outside `keys` (the shard count was lowered) is stale: every run of the domain
    removes its sources' rows from it, and deletes it once it holds no source."""

    keys: tuple[str, ...] = ("0",)
    only: str | None = None

    def owns(self, shard: str) -> bool:
        return self.only is None or shard == self.only or shard not in self.keys


@contextlib.contextmanager
def merged_output(
    specs: list[SourceSpec], data_dir: Path, schemas: dict[str, pa.Schema], replace: bool = False,
    shards: RunShards = RunShards(),
) -> Iterator[RunOutput]:
    """The run's fresh partition files, moved or merged into `data_dir` on success.

    Checks for conflicts before anything is read, and first removes what a killed run left
    (its fresh and temporary files, an old `_staging-<pid>` folder; see
    `storage.remove_stale_temps`). On an exception the fresh files are dropped and `data_dir`
    is untouched.
    """
    check_conflicts(specs, data_dir, replace)
    remove_stale_temps(data_dir, list(schemas))
    output = RunOutput(data_dir)
    try:
        yield output
        run = {spec.name: source_entry(spec) for spec in specs}
        merge_into(data_dir, output, schemas, run, shards)
    finally:
        output.discard()


def place_partition(
    final: Path, fresh: Path | None, schema: pa.Schema, run_sources: set[str]
) -> set[str]:
    """Put this run's `fresh` rows into `final`: a rename when `final` keeps no other source
    and `fresh` holds at most one (its rows are then already in merge order and chunking),
    else `merge_partition`. Returns the sources `final` holds."""
    if fresh is not None and not (_source_names(final if final.is_file() else None)
                                  - run_sources):
        new = _source_names(fresh)
        if len(new) <= 1:
            os.replace(fresh, final)
            return new
    return merge_partition(final, fresh, schema, run_sources)


def merge_into(
    data_dir: Path, output: RunOutput, schemas: dict[str, pa.Schema], run: Manifest,
    shards: RunShards = RunShards(),
) -> None:
    """Place every partition the run wrote into `data_dir`; in a domain where the manifest
    records one of this run's sources, every shard on disk that the run owns loses that
    source's old rows (the run's rows of it are in the shards it wrote; a changed shard count
    moves them), and each touched shard's manifest is rewritten.

    Only those domains and shards are touched: other domains, and the other shards of a domain,
    may be written by a concurrent partition run.
    """
    written = output.partitions()
    recorded = {domain for domain in recorded_domains(data_dir)
                if set(load_manifest(data_dir, domain)) & set(run)}
    on_disk = {(domain, shard) for domain in recorded for table in schemas
               for shard in shard_keys(data_dir, table, domain) if shards.owns(shard)}
    touched = written | on_disk
    for domain, shard in sorted(touched):
        present: set[str] = set()
        for table, schema in schemas.items():
            fresh = output.fresh_path(table, domain, shard)
            final = partition_path(data_dir, table, domain, shard)
            present |= place_partition(final, fresh if fresh.is_file() else None, schema,
                                       set(run))
        if shard not in shards.keys and not present:  # stale and empty: gone
            for table in schemas:
                shutil.rmtree(partition_dir(data_dir, table, domain, shard), ignore_errors=True)
            manifest_path(data_dir, domain, shard).unlink(missing_ok=True)
        else:
            write_shard_manifest(data_dir, domain, shard, run, present)
    for domain in sorted({domain for domain, _ in touched}):
        retire_legacy_manifest(data_dir, domain, shard_keys(data_dir, next(iter(schemas)),
                                                            domain))
