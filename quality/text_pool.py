"""Lowercased texts of several string columns, laid out one after the other in one byte buffer.

What the tokenisers of quality/shingles.py scan: the texts lowercased as polars'
`str.to_lowercase` lowercases them, in an order the caller chooses (dedup: each trajectory's
task, then its turns' actions and observations interleaved), without building that
interleaved column and lowercasing it as a whole first (a `take` and a polars pass over every
byte, then a copy out of polars).

- An ASCII text (most agent text: logs, JSON, markup) is lowercased by a compiled copy that maps
  `A`-`Z` to `a`-`z`: for a text of ASCII characters only that is exactly what polars (Rust's
  `str::to_lowercase`) returns, since the only context-dependent rule in Unicode's lowercase
  mapping (a final capital sigma) is about a non-ASCII letter (tests/test_text_pool.py
  compares every ASCII character and random ASCII texts with polars);
- any other text is lowercased by polars itself (its bytes may change length: `İ` lowercases to
  three bytes), then copied.

A null text is the empty text, as `fill_null("")` made it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from quality.kernel_cache import cached_njit


def lowered_texts(columns: Sequence[pa.Array | pa.ChunkedArray], slots: Sequence[np.ndarray],
                  n_texts: int) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of the texts, lowercased, and each text's offsets into them (int64,
    n_texts + 1): row r of columns[c] is text slots[c][r]; every text slot is filled once."""
    pool = lowered_pool(columns, slots, n_texts)
    return pool.data, pool.offsets


class LoweredTexts(NamedTuple):
    """`lowered_texts`' bytes and offsets; the same bytes as little-endian uint64 words
    zero-padded by two words and more (`data` is a view of them: the word split reads any 16
    bytes from a position up to the end with aligned loads); per text, whether its source
    had a byte over 0x7F (every other text is ASCII)."""

    data: np.ndarray
    offsets: np.ndarray
    packed: np.ndarray
    other: np.ndarray


def lowered_pool(columns: Sequence[pa.Array | pa.ChunkedArray], slots: Sequence[np.ndarray],
                 n_texts: int) -> LoweredTexts:
    """`lowered_texts`, with what the word split would otherwise compute again from the bytes
    (a padded copy of them, and a pass to tell the ASCII texts)."""
    parts = [_Column.of(chunk, chunk_slots) for column, slot in zip(columns, slots, strict=True)
             for chunk, chunk_slots in _chunks(column, np.asarray(slot, dtype=np.int64))]
    lengths = np.zeros(n_texts, dtype=np.int64)
    other = np.zeros(n_texts, dtype=np.bool_)
    for part in parts:
        lengths[part.slots] = np.diff(part.offsets)
        other[part.slots] = part.other
        if part.lowered is not None:
            lengths[part.slots[part.other]] = np.diff(part.lowered[1])
    offsets = np.zeros(n_texts + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    size = int(offsets[-1])
    packed = padded_words(size)
    out = packed.view(np.uint8)[:size]
    for part in parts:
        ascii_rows = np.flatnonzero(~part.other)
        _copy_rows(part.data, part.offsets, ascii_rows, offsets[part.slots[ascii_rows]],
                   True, out)
        if part.lowered is not None:
            data, lowered_offsets = part.lowered
            _copy_rows(data, lowered_offsets, np.arange(len(lowered_offsets) - 1),
                       offsets[part.slots[part.other]], False, out)
    return LoweredTexts(out, offsets, packed, other)


def _chunks(column: pa.Array | pa.ChunkedArray, slots: np.ndarray
            ) -> list[tuple[pa.Array, np.ndarray]]:
    """A column's arrays and their rows' slots: a chunked column chunk by chunk (each is copied
    into the pool anyway; combining them first copied every text once more)."""
    if not isinstance(column, pa.ChunkedArray):
        return [(column, slots)]
    if len(column) != len(slots):
        raise ValueError("one slot per row is needed")
    starts = np.r_[0, np.cumsum([len(chunk) for chunk in column.chunks], dtype=np.int64)]
    return [(chunk, slots[lo:hi]) for chunk, lo, hi
            in zip(column.chunks, starts[:-1], starts[1:], strict=True)]


def padded_words(size: int) -> np.ndarray:
    """Room for `size` bytes as little-endian uint64 words, zero from the word holding byte
    `size` on and two words more (the word split reads any 16 bytes from a position up to
    `size` with two aligned loads); the caller fills the bytes before `size`."""
    packed = np.empty(size // 8 + 3, dtype=np.uint64)
    packed[size // 8:] = 0
    return packed


class _Column:
    """One column's bytes and offsets, which of its rows are not ASCII, and those rows
    lowercased by polars (bytes, offsets)."""

    def __init__(self, data: np.ndarray, offsets: np.ndarray, slots: np.ndarray,
                 other: np.ndarray, lowered: tuple[np.ndarray, np.ndarray] | None) -> None:
        self.data, self.offsets, self.slots = data, offsets, slots
        self.other, self.lowered = other, lowered

    @classmethod
    def of(cls, column: pa.Array | pa.ChunkedArray, slots: np.ndarray) -> _Column:
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if not isinstance(column, pa.LargeStringArray):
            column = column.cast(pa.large_string())
        if column.null_count:  # (fill_null copies every text even when none is null)
            column = pc.fill_null(column, "")
        if len(column) != len(slots):
            raise ValueError("one slot per row is needed")
        data, offsets = string_buffers(column)
        other = non_ascii_rows(data, offsets)
        lowered = None
        if other.any():
            lower = pl.Series(column.filter(pa.array(other))).str.to_lowercase()
            lowered = string_buffers(lower.to_arrow(compat_level=pl.CompatLevel.oldest()))
        return cls(data, offsets, slots, other, lowered)


def string_buffers(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string array's UTF-8 bytes and its offsets (int64, len + 1; a slice's own)."""
    if not isinstance(column, pa.LargeStringArray):
        column = column.cast(pa.large_string())
    _, offset_buffer, data_buffer = column.buffers()
    offsets = np.frombuffer(offset_buffer, dtype=np.int64)[column.offset:
                                                            column.offset + len(column) + 1]
    data = (np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None
            else np.zeros(0, dtype=np.uint8))
    return data, offsets


@cached_njit
def _copy_rows(data: np.ndarray, offsets: np.ndarray, rows: np.ndarray, to: np.ndarray,
               lower: bool, out: np.ndarray) -> None:
    """Copy row rows[k]'s bytes to out[to[k]:], `A`-`Z` lowered to `a`-`z` if `lower` (by
    arithmetic on slices, which LLVM vectorises: a byte table lookup did not, 6x slower)."""
    for k in range(len(rows)):
        lo, hi = offsets[rows[k]], offsets[rows[k] + 1]
        source = data[lo:hi]
        target = out[to[k]: to[k] + hi - lo]
        if lower:
            for i in range(len(source)):
                b = source[i]
                target[i] = b + np.uint8(32) * np.uint8(np.uint8(b - np.uint8(65)) < np.uint8(26))
        else:
            target[:] = source


@cached_njit
def non_ascii_rows(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per row: a byte over 0x7F in it (an OR over the row, which LLVM vectorises: 6x faster
    than pyarrow's string_is_ascii here)."""
    other = np.empty(len(offsets) - 1, dtype=np.bool_)
    for k in range(len(other)):
        high = np.uint8(0)
        for b in data[offsets[k]: offsets[k + 1]]:
            high |= b
        other[k] = high >= 0x80
    return other
