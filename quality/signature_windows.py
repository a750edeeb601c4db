"""A domain's staged signatures (one column of its shards' staged_turn_features) read in windows
of rows in the domain's order, one row group of each shard at a time, for the corpus
frequencies (quality/corpus_frequency.py), which must not hold the domain's (turns x 128)
matrix.

Each shard holds a subsequence of the domain's order (quality/domain_order.py: whole
trajectories, in their one-shard order), so a window of domain positions takes the next rows
of every shard, and every shard is read once from front to back. A read may begin at a later
row: it skips the row groups before it, unread.

The staged signatures are one 512-byte value a row (minhash.signature_bytes), which Parquet
reads without a list's levels and numpy views without a copy. A window of a one-shard domain
is a row group of it, as read (not two copied together).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from quality.minhash import signatures_from_bytes

WINDOW_ROWS = 1 << 14  # rows of a window: 8 MB of 128 uint32 signatures


class _ShardRows:
    """One shard's signature rows in order, from row `skip` on, read a row group at a time."""

    def __init__(self, path: Path, column: str, num_perm: int, skip: int) -> None:
        self._parquet = pq.ParquetFile(path)
        self._column, self._num_perm = column, num_perm
        sizes = [self._parquet.metadata.row_group(g).num_rows
                 for g in range(self._parquet.metadata.num_row_groups)]
        starts = np.cumsum([0, *sizes])
        self._group = int(np.searchsorted(starts, skip, side="right")) - 1
        self._rows = np.zeros((0, num_perm), np.uint32)
        self._at = 0
        if self._group < len(sizes):
            self._read_group()
            self._at = skip - int(starts[self._group - 1])

    def _read_group(self) -> None:
        table = self._parquet.read_row_group(self._group, columns=[self._column])
        self._rows = signatures_from_bytes(table[self._column], self._num_perm)
        self._group += 1
        self._at = 0

    def take(self, n: int) -> np.ndarray:
        """The next `n` rows."""
        parts = []
        while n:
            if self._at == len(self._rows):
                self._read_group()
            part = self._rows[self._at:self._at + n]
            parts.append(part)
            self._at += len(part)
            n -= len(part)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def rest(self) -> Iterator[np.ndarray]:
        """Every row not taken yet, a row group at a time, as read."""
        if self._at < len(self._rows):
            yield self._rows[self._at:]
        while self._group < self._parquet.metadata.num_row_groups:
            self._read_group()
            yield self._rows
        self._at = len(self._rows)


def check_staged_rows(staged_paths: Sequence[Path], positions: Sequence[np.ndarray]) -> None:
    """Raise ValueError unless every staged shard has its shard's rows, in domain order."""
    for path, where in zip(staged_paths, positions, strict=True):
        staged = pq.ParquetFile(path).metadata.num_rows
        if staged != len(where):
            raise ValueError(f"{path}: {staged} staged rows, but its shard has {len(where)} "
                             "turns (stage the features again)")
        if len(where) > 1 and not bool(np.all(where[1:] > where[:-1])):
            raise ValueError(f"{path}: the shard's rows are not in the domain's order")


def domain_windows(staged_paths: Sequence[Path], positions: Sequence[np.ndarray], column: str,
                   num_perm: int, start: int = 0, window: int = WINDOW_ROWS
                   ) -> Iterator[tuple[int, np.ndarray]]:
    """(first position, (rows, num_perm) uint32 signatures) of the domain's rows from `start`
    on, `window` rows at a time (a one-shard domain's: a row group at a time); `positions`:
    each shard's rows' places in the domain order (increasing: check_staged_rows)."""
    total = sum(len(where) for where in positions)
    shards = [_ShardRows(Path(path), column, num_perm, int(np.searchsorted(where, start)))
              for path, where in zip(staged_paths, positions, strict=True)]
    if len(shards) == 1:  # the domain's rows are the shard's: its row groups as read
        for block in shards[0].rest():
            yield start, block
            start += len(block)
        return
    for lo in range(start, total, window):
        hi = min(lo + window, total)
        block = np.empty((hi - lo, num_perm), np.uint32)
        for shard, where in zip(shards, positions, strict=True):
            first, last = np.searchsorted(where, [lo, hi])
            if last > first:
                block[where[first:last] - lo] = shard.take(int(last - first))
        yield lo, block
