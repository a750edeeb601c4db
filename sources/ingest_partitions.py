"""Reading workers that own whole partitions: each writes the Parquet files of its shards itself.

With `InputPool` (sources/ingest_pool.py) the workers read and the parent writes: every row is
pickled, sent through a pipe, unpickled and converted by the parent, whose share of the CPU
(about a fifth) caps what two cores can do. When a run holds many partitions (domain x shard)
and every source names its domain, the partition of each input is known before it is read (the
domain is the source's, the shard the hash of the input's path), so the parent only walks the
sources and plans: a worker takes one partition at a time, reads its inputs in the run's order
(sources in order, inputs in walk order) and writes its three fresh files; the parent places
them as before (sources/source_merge.py). A partition's rows and row groups are those of a
one-process run, so the files are the same bytes.

Partitions go to the workers largest first (by input bytes), so the last ones to finish are
small. A run with fewer than two partitions a worker keeps the pool, which splits within one.
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sources.catalog import SourceSpec
from sources.ingest_pool import input_bytes
from sources.ingest_walk import Input, iter_inputs
from sources.partition_sinks import open_partition_sinks
from sources.readers import get_reader
from sources.schema import DOMAINS
from sources.shards import ShardConfig
from sources.source_merge import RunOutput
from sources.storage import ParquetSink, remove_stale_beside
from sources.tables import INGEST_QUARANTINE, RAW_TRAJECTORIES, RAW_TURNS

if TYPE_CHECKING:
    from sources.ingest import IngestStats, SourceCounts

PARTITIONS_PER_WORKER = 2  # fewer, and one partition's inputs may keep one worker busy alone
WAITING_LINES = 1024  # inputs a task holds before it appends them to its list file
TABLE_NAMES = (RAW_TRAJECTORIES.name, RAW_TURNS.name, INGEST_QUARANTINE.name)  # a worker's files


@dataclass
class PartitionTask:
    """One partition: its inputs in the run's order, listed in a file as the walk finds them
    (about 440k inputs at 10M turns, some 270 MB as Python objects: the parent stays flat), and
    the fresh files its worker writes."""

    domain: str
    shard: str
    fresh: dict[str, Path]  # table name -> fresh path (the parent's, so it places them)
    inputs_file: Path
    inputs: int = 0
    bytes: int = 0
    waiting: list[str] = field(default_factory=list)

    def add(self, source_index: int, entry: Input) -> None:
        """List an input (a JSON line: any character of a path survives)."""
        reader = entry.reader.name if entry.reader is not None else None
        self.waiting.append(json.dumps([source_index, reader, str(entry.path)]) + "\n")
        self.inputs += 1
        if len(self.waiting) >= WAITING_LINES:
            self.flush()

    def flush(self) -> None:
        with open(self.inputs_file, "a", encoding="utf-8") as listing:
            listing.writelines(self.waiting)
        self.waiting = []

    def entries(self) -> Iterator[tuple[int, Input]]:
        """(source index, input) in the order they were listed."""
        with open(self.inputs_file, encoding="utf-8") as listing:
            for line in listing:
                source_index, reader, path = json.loads(line)
                yield source_index, Input(Path(path),
                                          None if reader is None else get_reader(reader))


def may_plan(specs: list[SourceSpec], shards: ShardConfig, only_shard: str | None,
             workers: int) -> bool:
    """Whether the run can be cut into partition tasks before it is read: every source names
    its domain and exists, and its domains x shards give each worker two partitions (the walk
    may still find fewer)."""
    if not all(spec.domain in DOMAINS and not spec.missing for spec in specs):
        return False
    most = len({spec.domain for spec in specs}) * (1 if only_shard else len(shards.keys))
    return most >= PARTITIONS_PER_WORKER * workers


def start_workers(workers: int) -> ProcessPoolExecutor:
    """The partition workers, started (each one's interpreter and imports take about half a
    second) while the parent walks the sources for the plan."""
    context = multiprocessing.get_context("spawn")  # no inherited threads or open files
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    for _ in range(workers):
        executor.submit(warm_up)
    return executor


def warm_up() -> None:
    """In a worker: import what reading a partition needs."""
    from sources import ingest  # noqa: F401
    from sources.readers import all_readers

    all_readers()


def plan_partitions(specs: list[SourceSpec], stats: IngestStats, output: RunOutput,
                    shards: ShardConfig, only_shard: str | None, workers: int, lists: Path
                    ) -> list[PartitionTask] | None:
    """The run cut into partition tasks, largest first, their input lists in the folder
    `lists`; None when it cannot be cut before reading (a source without a known domain, or a
    missing path: their rows' partitions are known only from the records) or is too narrow to
    keep the workers busy."""
    from sources.ingest import IngestStats, relative_name

    if not may_plan(specs, shards, only_shard, workers):
        return None
    tasks: dict[tuple[str, str], PartitionTask] = {}
    walked = IngestStats()  # the walk's skips, counted into `stats` only if the plan is used
    for index, spec in enumerate(specs):
        assert spec.domain is not None
        for entry in iter_inputs(spec, walked):
            shard = shards.shard_of(relative_name(entry.path, spec.root))
            if only_shard is not None and shard != only_shard:
                continue
            task = tasks.get((spec.domain, shard))
            if task is None:
                fresh = {table: output.fresh_path(table, spec.domain, shard)
                         for table in TABLE_NAMES}
                task = tasks[spec.domain, shard] = PartitionTask(
                    spec.domain, shard, fresh, lists / f"{spec.domain}-{shard}.jsonl")
            task.add(index, entry)
            try:
                task.bytes += input_bytes(entry.path)
            except OSError:  # unreadable: its worker quarantines it with the reason
                pass
    if len(tasks) < PARTITIONS_PER_WORKER * workers:
        return None
    for task in tasks.values():
        task.flush()
    stats.skipped_hidden += walked.skipped_hidden
    stats.skipped_docs += walked.skipped_docs
    stats.skipped_repeats += walked.skipped_repeats
    return sorted(tasks.values(), key=lambda task: (-task.bytes, task.domain, task.shard))


def write_partitions(specs: list[SourceSpec], tasks: list[PartitionTask], output: RunOutput,
                     stats: IngestStats, executor: ProcessPoolExecutor,
                     on_partition: Callable[[IngestStats], None] | None = None) -> None:
    """Run every task in the `executor`'s workers (shut down on return); each partition that
    got rows is registered with `output` (placed on success). On a failure no fresh file of
    the run stays behind."""
    try:
        with executor:
            futures = {executor.submit(write_partition, specs, task): task for task in tasks}
            try:
                for future in as_completed(futures):
                    task = futures[future]
                    wrote, counts = future.result()
                    if wrote:
                        for table in TABLE_NAMES:
                            output.open_path(table, task.domain, task.shard)
                    for index, source_counts in counts.items():
                        stats.counts(specs[index].name).add(source_counts)
                    if on_partition is not None:
                        on_partition(stats)
            except BaseException:
                executor.shutdown(wait=True, cancel_futures=True)
                raise
    except BaseException:
        for task in tasks:  # completed partitions' files, and a killed worker's temporaries
            for path in task.fresh.values():
                path.unlink(missing_ok=True)
                remove_stale_beside(path)
        raise


def write_partition(specs: list[SourceSpec], task: PartitionTask
                    ) -> tuple[bool, dict[int, SourceCounts]]:
    """In a worker: read a partition's inputs and write its three fresh files (opened with its
    first row, as the parent's sinks are: a partition without rows gets no files). Returns
    whether it wrote and each source's counts."""
    from sources.ingest import (
        IngestedTrajectory,
        SourceCounts,
        count_record,
        input_records,
    )

    counts: dict[int, SourceCounts] = {}
    with ExitStack() as stack:
        sinks: dict[str, ParquetSink] = {}
        for index, entry in task.entries():
            source_counts = counts.setdefault(index, SourceCounts())
            for record in input_records(specs[index], entry, source_counts):
                count_record(record, source_counts)
                if not sinks:
                    sinks = open_partition_sinks(task.fresh, stack)
                if isinstance(record, IngestedTrajectory):
                    sinks[RAW_TRAJECTORIES.name].write(record.trajectory)
                    sinks[RAW_TURNS.name].write_many(record.turns)
                else:
                    sinks[INGEST_QUARANTINE.name].write(record.row)
    return bool(sinks), counts

