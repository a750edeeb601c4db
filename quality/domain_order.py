"""The order of a domain's turns over all its shards: the order a one-shard ingest writes them.

Three turn features are counted over a whole domain (quality/corpus_columns.py), and two of those
counts depend on row order: the common-word sample takes evenly spaced row groups, and a
corpus-frequency bucket is verified against its first member. So that a domain cut into shards
gets the features of the same domain in one shard, both read the rows in one order, whatever
the sharding: the order of one shard.

A one-shard ingest writes a domain's rows by source name, then in the order the source's files
were read: a walk of its folders with every folder's entries sorted by name
(sources/ingest.py), so files come in the order of their relative paths compared part by part.
Each shard holds a subsequence of that order (whole files, in the same order), so merging the
shards by (source, path parts) gives the one-shard order back. The key is only compared across
shards: a shard's own rows stay in its file order (a symlink, listed after real entries, or a
glob's own order keep their place), and a single shard is its file, as it is.

Per shard this reads two small columns of the raw tables (trajectory ids, and each
trajectory's source and path), never the text. The result is an array of positions per shard
(8 bytes a turn).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np
import pyarrow.parquet as pq

from quality.batches import run_numbers
from sources.storage import ROWS_PER_BATCH


@dataclass(frozen=True)
class DomainOrder:
    """Where each shard's rows sit in the domain's order."""

    positions: list[np.ndarray]  # per shard: each row's position in the domain order
    trajectories: list[np.ndarray]  # per shard: each row's trajectory number (domain order)
    group_sizes: list[int]  # the domain's row groups, in order (as one shard would have them)

    @property
    def rows(self) -> int:
        return sum(self.group_sizes)


def file_order(turns_path: Path) -> DomainOrder:
    """One file (a single shard) in its own order and row groups."""
    parquet = pq.ParquetFile(turns_path)
    ids = parquet.read(columns=["trajectory_id"])["trajectory_id"]
    trajectory, _ = run_numbers(ids)
    groups = [parquet.metadata.row_group(g).num_rows
              for g in range(parquet.metadata.num_row_groups)]
    return DomainOrder([np.arange(len(trajectory), dtype=np.int64)], [trajectory], groups)


def domain_order(turns_paths: Sequence[Path], trajectories_paths: Sequence[Path]
                 ) -> DomainOrder:
    """The one-shard order of a domain's shards (raw_turns and raw_trajectories of each shard,
    in shard order). With several shards the row groups are those a one-shard ingest writes
    (ROWS_PER_BATCH rows each)."""
    if len(turns_paths) == 1:
        return file_order(turns_paths[0])
    runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # starts, lengths, ordinal
    keyed: list[list[tuple[str, tuple[str, ...], int, int]]] = []
    for shard, (turns, trajectories) in enumerate(zip(turns_paths, trajectories_paths,
                                                      strict=True)):
        ids = pq.read_table(turns, columns=["trajectory_id"])["trajectory_id"]
        run, ordinal = run_numbers(ids)
        starts = np.flatnonzero(np.r_[True, run[1:] != run[:-1]]) if len(run) else run
        lengths = np.diff(np.r_[starts, len(run)])
        where = _source_paths(trajectories)
        keys = []
        for local, identifier in enumerate(ids.take(starts).to_pylist()):
            if identifier not in where:
                raise ValueError(f"{turns}: trajectory {identifier} has turns but no row in "
                                 f"{trajectories}")
            source, path = where[identifier]
            keys.append((source, PurePosixPath(path).parts, shard, local))
        runs.append((starts, lengths, ordinal))
        keyed.append(keys)
    positions = [np.empty(len(ordinal), np.int64) for _, _, ordinal in runs]
    trajectories = [np.empty(len(ordinal), np.int64) for _, _, ordinal in runs]
    start = 0
    merged = heapq.merge(*keyed, key=lambda key: key[:2])  # each shard keeps its own order
    for number, (_, _, shard, local) in enumerate(merged):
        first, length = runs[shard][0][local], runs[shard][1][local]
        positions[shard][first:first + length] = start + np.arange(length)
        trajectories[shard][first:first + length] = number
        start += length
    groups = [ROWS_PER_BATCH] * (start // ROWS_PER_BATCH)
    if start % ROWS_PER_BATCH:
        groups.append(start % ROWS_PER_BATCH)
    return DomainOrder(positions, trajectories, groups)


def _source_paths(trajectories_path: Path) -> dict[str, tuple[str, str]]:
    """trajectory_id -> (source, source_path) of one shard's raw_trajectories."""
    table = pq.read_table(trajectories_path, columns=["trajectory_id", "source", "source_path"])
    return dict(zip(table["trajectory_id"].to_pylist(),
                    zip(table["source"].to_pylist(), table["source_path"].to_pylist(),
                        strict=True), strict=True))
