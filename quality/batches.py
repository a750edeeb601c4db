"""Reading turns in batches of whole trajectories.

The ingest stage writes each trajectory's turns as one run of consecutive rows, in turn order
(sorted by trajectory_id or in the order the sources were read; either works). The reader takes
row batches and holds back the last, possibly unfinished, trajectory for the next batch, so
memory is bounded by the batch size (or by one trajectory, if a single one is larger). A
trajectory whose rows are not contiguous is an error, not a silent split.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def trajectory_batches(path: Path, columns: Sequence[str] | None = None,
                       batch_rows: int = 16_000, batch_bytes: int | None = None
                       ) -> Iterator[pa.Table]:
    """Tables of whole trajectories, each cut once it reaches `batch_rows` rows or
    `batch_bytes` bytes of text (the string columns): memory follows the text, not the rows,
    and a 3 KB accessibility tree weighs what it costs."""
    columns = list(columns) if columns is not None else None
    if columns is not None and "trajectory_id" not in columns:
        columns.append("trajectory_id")
    read_rows = min(batch_rows, _READ_ROWS)
    pending: list[pa.RecordBatch] = []
    rows = size = 0
    finished: set[str] = set()
    for batch in pq.ParquetFile(path).iter_batches(batch_size=read_rows, columns=columns):
        pending.append(batch)
        rows += batch.num_rows
        size += _text_bytes(batch) if batch_bytes else 0
        if rows < batch_rows and (batch_bytes is None or size < batch_bytes):
            continue
        table = pa.Table.from_batches(pending)
        cut = pc.index(table["trajectory_id"], table["trajectory_id"][-1]).as_py()
        if cut == 0:
            continue  # one trajectory so far: keep reading until it ends
        done, rest = table.slice(0, cut), table.slice(cut)
        _check_contiguous(done["trajectory_id"], finished, path)
        yield done
        pending = rest.to_batches()
        rows = rest.num_rows
        size = sum(_text_bytes(b) for b in pending) if batch_bytes else 0
    if rows:
        table = pa.Table.from_batches(pending)
        _check_contiguous(table["trajectory_id"], finished, path)
        yield table


_READ_ROWS = 2048


def _text_bytes(batch: pa.RecordBatch) -> int:
    return sum(batch.column(i).nbytes for i, f in enumerate(batch.schema)
               if pa.types.is_large_string(f.type) or pa.types.is_string(f.type))


def _check_contiguous(ids: pa.ChunkedArray, finished: set[str], path: Path) -> None:
    """Every trajectory is one run of rows: no id may start a second run."""
    runs = pc.unique(ids).to_pylist()
    starts = int(pc.sum(pc.not_equal(ids[1:], ids[:-1])).as_py() or 0) + 1 if len(ids) else 0
    if starts != len(runs) or not finished.isdisjoint(runs):
        raise ValueError(f"{path}: the turns of a trajectory are not in consecutive rows")
    finished.update(runs)


def run_numbers(ids: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """For sorted ids: each row's run number (0, 0, 1, ...) and its position within the run."""
    run = pl.Series(ids).rle_id().to_numpy().astype(np.int64)
    starts = np.flatnonzero(np.r_[True, run[1:] != run[:-1]])
    lengths = np.diff(np.r_[starts, len(run)])
    ordinal = np.arange(len(run), dtype=np.int64) - np.repeat(starts, lengths)
    return run, ordinal


def rows_of(batch: pa.Table, value_set: pa.Array) -> pa.Table:
    """The rows of `batch` whose trajectory_id is in `value_set`, as slices of its runs of
    such rows: whole trajectories are left out, so the rows kept are a few long runs, and a
    slice copies no text (a filter copies every text, which a reader that combines the
    chunks then copies again)."""
    wanted = pc.is_in(batch["trajectory_id"], value_set=value_set).to_numpy(
        zero_copy_only=False)
    if wanted.all():
        return batch
    edges = np.flatnonzero(np.diff(np.r_[False, wanted, False]))
    runs = [batch.slice(lo, hi - lo) for lo, hi in zip(edges[::2], edges[1::2], strict=True)]
    return pa.concat_tables(runs) if runs else batch.slice(0, 0)
