"""Texts with every whitespace run collapsed to one space and no space at either end.

repeat_masked's keys (quality/reply_features.py) were polars'
`str.replace_all(r"\\s\\s+|[\\s&&[^ ]]", " ").str.strip_chars()`: a regex match for every
newline and every run of two spaces, most of the masked texts' time. A compiled scan of the
UTF-8 bytes writes the same text: each maximal run of whitespace becomes one space (the
regex's greedy `\\s\\s+` takes the whole run, a lone space or other whitespace character is
replaced by one space), and the runs at either end go (`strip_chars`, after which only a
space can be there). Whitespace is Rust's `\\s` and `char::is_whitespace`, both Unicode's
White_Space: the ASCII ones (tab, line feed, vertical tab, form feed, carriage return,
space) and 19 others, found by their UTF-8 lead bytes (tests/test_flat_texts.py compares
every code point with polars).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from quality.kernel_cache import cached_njit
from quality.text_pool import string_buffers


def flat_texts(texts: pl.Series) -> list[str]:
    """Each text (a null as "") with whitespace runs collapsed and stripped, as polars'
    replace_all + strip_chars would write it."""
    column = texts.fill_null("").to_arrow(compat_level=pl.CompatLevel.oldest())
    return flat_arrow_texts(column).to_pylist()


def flat_arrow_texts(column: pa.Array) -> pa.LargeStringArray:
    """flat_texts of an Arrow string column without nulls, as an Arrow column."""
    data, offsets = string_buffers(column)
    out = np.empty(len(data), dtype=np.uint8)  # (a flat text is never longer)
    out_offsets = np.zeros(len(offsets), dtype=np.int64)
    _collapse(data, offsets, out, out_offsets)
    return pa.LargeStringArray.from_buffers(len(column), pa.py_buffer(out_offsets),
                                           pa.py_buffer(out))


@cached_njit(inline="always")
def _space_bytes(data: np.ndarray, i: np.uint64, end: np.uint64) -> np.uint64:
    """The UTF-8 length of the whitespace character at data[i], or 0 if it is none."""
    b = data[i]
    if b == 0x20 or 0x09 <= b <= 0x0D:
        return np.uint64(1)
    if b < 0xC2 or b > 0xE3:
        return np.uint64(0)
    b1 = data[i + np.uint64(1)] if i + np.uint64(1) < end else 0
    if b == 0xC2:  # U+0085, U+00A0
        return np.uint64(2 if b1 == 0x85 or b1 == 0xA0 else 0)
    b2 = data[i + np.uint64(2)] if i + np.uint64(2) < end else 0
    if b == 0xE1:  # U+1680
        return np.uint64(3 if b1 == 0x9A and b2 == 0x80 else 0)
    if b == 0xE2:
        if b1 == 0x80:  # U+2000-U+200A, U+2028, U+2029, U+202F
            return np.uint64(3 if b2 <= 0x8A or b2 == 0xA8 or b2 == 0xA9 or b2 == 0xAF else 0)
        return np.uint64(3 if b1 == 0x81 and b2 == 0x9F else 0)  # U+205F
    if b == 0xE3:  # U+3000
        return np.uint64(3 if b1 == 0x80 and b2 == 0x80 else 0)
    return np.uint64(0)


# Per ASCII byte: 1 for whitespace (tab, line feed, vertical tab, form feed, carriage return,
# space), 0 otherwise; and the byte a flat text writes for it (a space for whitespace).
_ASCII_SPACE = np.array([int(b == 0x20 or 0x09 <= b <= 0x0D) for b in range(128)], np.uint8)
_WRITTEN = np.array([0x20 if _ASCII_SPACE[b] else b for b in range(128)], np.uint8)


@cached_njit
def _collapse(data: np.ndarray, offsets: np.ndarray, out: np.ndarray,
              out_offsets: np.ndarray) -> None:
    """Write text k (data[offsets[k]:offsets[k+1]]) flat to out[out_offsets[k]:...]."""
    at = 0
    for k in range(len(offsets) - 1):
        lo, hi = offsets[k], offsets[k + 1]
        high = np.uint8(0)
        for b in data[lo:hi]:  # (an OR over the text, which LLVM vectorises)
            high |= b
        if high < 0x80:
            at = _collapse_ascii(data, lo, hi, out, at)
        else:
            at = _collapse_utf8(data, lo, hi, out, at)
        out_offsets[k + 1] = at


@cached_njit(inline="always")
def _collapse_ascii(data: np.ndarray, lo: int, hi: int, out: np.ndarray, at: int) -> int:
    """An ASCII text, without branches on its bytes (text switches between words and spaces
    every few bytes, which would mispredict): every byte is written (whitespace as a space),
    but the end moves past it only when it is no whitespace after whitespace; whitespace
    counts as coming before the text, so none leads; a trailing space is taken back at the
    end. (Unsigned positions: numba then checks no index for a negative wrap, 3x faster.)"""
    end, before = np.uint64(at), np.uint64(1)
    for i in range(np.uint64(lo), np.uint64(hi)):
        b = data[i]
        space = np.uint64(_ASCII_SPACE[b])
        out[end] = _WRITTEN[b]
        end += np.uint64(1) - (space & before)
        before = space
    if before and end > at:
        end -= np.uint64(1)
    return np.int64(end)


@cached_njit
def _collapse_utf8(data: np.ndarray, lo: int, hi: int, out: np.ndarray, at: int) -> int:
    """Any text: a space is written before a non-space byte only when whitespace came before
    it and something was written already (so none leads and none trails)."""
    end, pending, i, stop = np.uint64(at), False, np.uint64(lo), np.uint64(hi)
    while i < stop:
        n = np.uint64(0) if 0x20 < data[i] < 0x80 else _space_bytes(data, i, stop)
        if n:
            pending = True
            i += n
            continue
        if pending and end > at:
            out[end] = 0x20
            end += np.uint64(1)
        pending = False
        out[end] = data[i]
        end += np.uint64(1)
        i += np.uint64(1)
    return np.int64(end)
