"""Ingest: walk a source, run its reader(s), and write the three canonical tables.

    {data}/raw_trajectories/domain=<d>/shard=<s>/part-0.parquet
    {data}/raw_turns/domain=<d>/shard=<s>/part-0.parquet
    {data}/ingest_quarantine/domain=<d>/shard=<s>/part-0.parquet

(a source file's rows go to the shard its relative path hashes to: sources/shards.py).

Each step is small: `iter_inputs` (sources/ingest_walk.py) lists the files and run folders of a
source in a fixed order (a folder that a run-folder reader claims is one input, with that
reader), `choose_reader` picks
the catalog's reader or detects one by content (once per input), `read_input` runs it over one
input and converts any failure into quarantine, `to_rows` stamps a trajectory with its source,
domain and content-hash IDs, and `write_tables` streams the rows into per-shard sinks
(sources/partition_sinks.py), each
row written once (to a fresh file beside its partition, renamed into place, or merged when
other sources' rows stay there: sources/source_merge.py). Counters
are kept in `IngestStats` as the stream runs, so `records_read == turns_kept + quarantined` can be
checked at the end of every run. Used by `worldtrace ingest` and the Dagster ingest asset.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sources.catalog import SourceSpec
from sources.ids import trajectory_content_hash, trajectory_id
from sources.ingest_partitions import may_plan, plan_partitions, start_workers, write_partitions
from sources.ingest_pool import InputPool, PoolConfig
from sources.ingest_walk import Input, iter_inputs, spec_reader
from sources.partition_sinks import TABLE_SCHEMAS, PartitionSinks, domains_done
from sources.readers import UnknownFormat, detect
from sources.readers.base import FormatError, InputError, Reader
from sources.schema import (
    DOMAINS,
    OUTCOMES,
    Quarantine,
    Trajectory,
)
from sources.shards import DEFAULT_SHARDING, ShardConfig
from sources.source_merge import RunShards, merged_output
from sources.tables import INGEST_QUARANTINE, RAW_TRAJECTORIES, RAW_TURNS


@dataclass
class SourceCounts:
    """What one source produced."""

    inputs: int = 0
    trajectories: int = 0
    turns: int = 0
    quarantined: int = 0
    formats: Counter[str] = field(default_factory=Counter)

    @property
    def records_read(self) -> int:
        """Every record a reader attempted: each became a turn or a quarantine row."""
        return self.turns + self.quarantined

    def add(self, other: SourceCounts) -> None:
        """Add another process's counts of the same source (a reading worker's)."""
        self.inputs += other.inputs
        self.trajectories += other.trajectories
        self.turns += other.turns
        self.quarantined += other.quarantined
        self.formats.update(other.formats)


@dataclass
class IngestStats:
    """Counters for one ingest run, per source."""

    per_source: dict[str, SourceCounts] = field(default_factory=dict)
    skipped_hidden: int = 0
    skipped_docs: int = 0
    skipped_repeats: int = 0  # links back to a file or folder already visited

    def counts(self, source: str) -> SourceCounts:
        return self.per_source.setdefault(source, SourceCounts())

    def total(self, attribute: str) -> int:
        return sum(getattr(counts, attribute) for counts in self.per_source.values())

    def as_table(self) -> list[dict[str, Any]]:
        """One row per source, for metadata and the CLI summary."""
        return [
            {
                "source": name,
                "inputs": counts.inputs,
                "trajectories": counts.trajectories,
                "turns": counts.turns,
                "quarantined": counts.quarantined,
                "records_read": counts.records_read,
                "formats": ", ".join(sorted(counts.formats)),
            }
            for name, counts in sorted(self.per_source.items())
        ]


@dataclass
class IngestedTrajectory:
    """Canonical rows of one trajectory: its trajectory row and its turn rows."""

    trajectory: dict[str, Any]
    turns: list[dict[str, Any]]


@dataclass
class QuarantinedRecord:
    """A canonical quarantine row."""

    row: dict[str, Any]


def relative_name(path: Path, root: Path) -> str:
    """`path` relative to the source root, in POSIX form (stable across machines)."""
    text, prefix = str(path), str(root)
    if prefix != "/" and text.startswith(prefix) and text[len(prefix):len(prefix) + 1] == "/":
        return text[len(prefix) + 1:]  # a path the walk joined under the root: its tail as is
    try:
        return path.relative_to(root).as_posix() or path.name
    except ValueError:
        return path.as_posix()


def choose_reader(entry: Input, spec: SourceSpec) -> Reader | Quarantine:
    """The catalog's reader, the one the walk found, or the one detection picks; a Quarantine
    when none claims the input."""
    named = spec_reader(spec)
    if named is not None:
        return named
    if entry.reader is not None:
        return entry.reader
    path = entry.path
    try:
        return detect(path)
    except UnknownFormat as error:
        return Quarantine(str(path), "file", str(error))
    except OSError as error:
        return Quarantine(str(path), "file", f"cannot read: {error}")


class ReaderBug(RuntimeError):
    """A reader raised something other than an InputError: a bug in our code, never bad data."""


def read_input(path: Path, reader: Reader) -> Iterator[Trajectory | Quarantine]:
    """Run one reader over one input. Broken input (InputError, or a file that cannot be read)
    becomes a quarantine item; any other exception is a bug and raises ReaderBug."""
    try:
        yield from reader.read(path)
    except FormatError as error:
        yield Quarantine(error.path, error.position, f"{reader.name}: {error.reason}")
    except InputError as error:
        yield Quarantine(str(path), "file", f"{reader.name}: {error}")
    except OSError as error:
        yield Quarantine(str(path), "file", f"{reader.name}: cannot read: {error}")
    except Exception as error:
        raise ReaderBug(f"reader {reader.name!r} failed on {path}: {type(error).__name__}: "
                        f"{error} (a bug in the reader, not bad input)") from error


def ingest_source(
    spec: SourceSpec, stats: IngestStats, pool: InputPool | None = None,
    wanted: Callable[[str], bool] | None = None,
) -> Iterator[IngestedTrajectory | QuarantinedRecord]:
    """Canonical rows for every trajectory of one source, quarantine rows for what fails, in
    input order (with a `pool`, inputs are read in its worker processes, the order kept).
    With `wanted`, only the inputs whose path relative to the source root it accepts (one
    shard's inputs) are read.

    The domain is the catalog's when set, else the record's own (AgentWorldBench, chat JSONL),
    else the reader's default.
    """
    counts = stats.counts(spec.name)
    inputs = iter_inputs(spec, stats)
    if wanted is not None:
        inputs = (entry for entry in inputs if wanted(relative_name(entry.path, spec.root)))
    if spec.missing:
        missing = Quarantine(str(spec.path), "path", "source path does not exist")
        records: Iterable[IngestedTrajectory | QuarantinedRecord] = [
            _quarantine_row(missing, spec, spec.domain or "unknown", "none")
        ] if wanted is None or wanted(missing.source_path) else []
    elif pool is None:
        records = (record for entry in inputs for record in input_records(spec, entry, counts))
    else:
        records = pool.records(spec, inputs, counts)
    for record in records:
        count_record(record, counts)
        yield record


def count_record(record: IngestedTrajectory | QuarantinedRecord, counts: SourceCounts) -> None:
    """Count a record as it is handed on (so progress callbacks see exact totals)."""
    if isinstance(record, IngestedTrajectory):
        counts.trajectories += 1
        counts.turns += record.trajectory["n_turns"]
    else:
        counts.quarantined += 1


def input_records(
    spec: SourceSpec, entry: Input, counts: SourceCounts
) -> Iterator[IngestedTrajectory | QuarantinedRecord]:
    """The records of one input (counted into `counts` as an input of its format; the records
    themselves are counted by `count_record`)."""
    path = entry.path
    counts.inputs += 1
    source_path = relative_name(path, spec.root)
    reader = choose_reader(entry, spec)
    if isinstance(reader, Quarantine):
        counts.formats["unknown"] += 1
        yield _quarantine_row(reader, spec, spec.domain or "unknown", "unknown", source_path)
        return
    reader_name = reader.name
    counts.formats[reader_name] += 1
    default_domain = spec.domain or reader.domain
    for item in read_input(path, reader):
        if isinstance(item, Quarantine):
            yield _quarantine_row(item, spec, default_domain, reader_name, source_path)
            continue
        item_domain = spec.domain or item.metadata.get("domain") or default_domain
        if item_domain not in DOMAINS:
            reason = f"domain {item_domain!r} is not one of {', '.join(DOMAINS)}"
            bad_domain = Quarantine(str(path), item.position, reason)
            yield _quarantine_row(bad_domain, spec, "unknown", reader_name, source_path)
            continue
        yield to_rows(item, spec.name, item_domain, reader_name, source_path)


def _quarantine_row(
    item: Quarantine, spec: SourceSpec, domain: str, reader_name: str, source_path: str = ""
) -> QuarantinedRecord:
    return QuarantinedRecord(
        {
            "domain": domain,
            "source": spec.name,
            "source_format": reader_name,
            "source_path": source_path or item.source_path,
            "position": item.position,
            "reason": item.reason,
        }
    )


def to_rows(
    trajectory: Trajectory, source: str, domain: str, source_format: str, source_path: str
) -> IngestedTrajectory:
    """Stamp a reader's trajectory with IDs and source columns."""
    content_hash = trajectory_content_hash(trajectory)
    traj_id = trajectory_id(source, source_path, trajectory.position, content_hash)
    outcome = trajectory.outcome if trajectory.outcome in OUTCOMES else "unknown"
    trajectory_row = {
        "trajectory_id": traj_id,
        "content_hash": content_hash,
        "domain": domain,
        "source": source,
        "source_format": source_format,
        "source_path": source_path,
        "source_position": trajectory.position,
        "task": trajectory.task,
        "system_prompt": trajectory.system_prompt,
        "n_turns": len(trajectory.turns),
        "outcome": outcome,
        "metadata": json.dumps(
            trajectory.metadata, ensure_ascii=False, sort_keys=True, default=str
        ),
    }
    turn_rows = [
        {
            "trajectory_id": traj_id,
            "turn_index": index,
            "domain": domain,
            "source": source,
            "source_format": source_format,
            "action": turn.action,
            "action_kind": turn.action_kind,
            "observation": turn.observation,
            "observation_format": turn.observation_format,
            "tool_name": turn.tool_name,
            "exit_code": turn.exit_code,
            "is_error": turn.is_error,
        }
        for index, turn in enumerate(trajectory.turns)
    ]
    return IngestedTrajectory(trajectory_row, turn_rows)


def write_tables(
    specs: Iterable[SourceSpec],
    data_dir: Path,
    domains: Iterable[str] = (),
    on_trajectory: Callable[[IngestStats], None] | None = None,
    replace: bool = False,
    workers: int = 1,
    shards: ShardConfig = DEFAULT_SHARDING,
    only_shard: str | None = None,
) -> IngestStats:
    """Ingest every source into the canonical tables under `data_dir`.

    Rows of other sources already in `data_dir` are kept; this run's sources replace their own
    rows (re-ingesting is idempotent). A source name already read from another path is refused
    unless `replace` (see `sources.source_merge`). `domains` lists partitions to write even when
    empty (a Dagster partition run names its own). A failure leaves the previous files in place.
    With `workers` > 1 the inputs are read in that many processes: the same bytes, faster (a run
    of many partitions, every source with its domain, gives each worker whole partitions to
    write: sources/ingest_partitions.py; any other, a pool of readers: sources/ingest_pool.py).
    `on_trajectory` sees the run's stats after each trajectory is written (with whole-partition
    workers, after each partition). `shards` says how many shards each domain is cut into;
    `only_shard` (a partition step of one shard) reads only the inputs whose path hashes to that
    shard and rewrites only that shard (and the stale shards a lowered count left), so the
    steps of a domain's shards can run at once.
    """
    stats = IngestStats()
    specs = list(specs)
    if only_shard is not None and only_shard not in shards.keys:
        raise ValueError(f"shard {only_shard!r} is not one of the {shards.shards_per_domain} "
                         f"configured shards {shards.keys}")
    run_shards = RunShards(tuple(shards.keys), only_shard)
    with merged_output(specs, data_dir, TABLE_SCHEMAS, replace, run_shards) as output, \
            ExitStack() as stack:
        sinks = PartitionSinks(output, stack, shards)
        tasks = None
        if workers > 1 and may_plan(specs, shards, only_shard, workers):
            executor = start_workers(workers)
            lists = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ingest-")))
            try:
                tasks = plan_partitions(specs, stats, output, shards, only_shard, workers, lists)
            finally:
                if tasks is None:
                    executor.shutdown(cancel_futures=True)
        if tasks is not None:  # workers that write their partitions' files themselves
            write_partitions(specs, tasks, output, stats, executor, on_trajectory)
            for domain in domains:  # a named domain has its first shard even when empty
                if (domain, only_shard or shards.keys[0]) not in output.partitions():
                    sinks.open(RAW_TURNS.name, domain, only_shard or shards.keys[0])
            return stats
        pool = stack.enter_context(InputPool(PoolConfig(workers))) if workers > 1 else None
        for domain in domains:  # a named domain has its first shard even when empty
            sinks.open(RAW_TURNS.name, domain, only_shard or shards.keys[0])
        wanted = None if only_shard is None else (
            lambda source_path: shards.shard_of(source_path) == only_shard)
        for index, spec in enumerate(specs):
            for record in ingest_source(spec, stats, pool, wanted):
                if isinstance(record, IngestedTrajectory):
                    row = record.trajectory
                    domain, source_path = row["domain"], row["source_path"]
                    sinks.get(RAW_TRAJECTORIES.name, domain, source_path).write(row)
                    sinks.get(RAW_TURNS.name, domain, source_path).write_many(record.turns)
                    if on_trajectory is not None:
                        on_trajectory(stats)
                else:
                    row = record.row
                    sinks.get(INGEST_QUARANTINE.name, row["domain"], row["source_path"]
                              ).write(row)
            sinks.close_domains(domains_done(specs[index + 1:], sinks.sinks))
            sinks.park()
    return stats
