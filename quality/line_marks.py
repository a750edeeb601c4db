"""Masked texts without their line marks (quality/reply_features.py's LINE_MARKS): a file
view's line numbers ("12:"), a diff's or a quote's marker ("+ ", "> ") and a shell prompt in
front of a command ("root@0:/app# "), each after the spaces and tabs that open a line.

This was polars' `str.replace_all(LINE_MARKS, "")` over every masked text, whose multi-line
`^` made the regex engine stop at each line (0.8 CPU s per 148k observations). A compiled
scan of the UTF-8 bytes writes the same text for a text of ASCII characters, where the
pattern's Unicode `\\d` and `\\w` are `[0-9]` and `[0-9A-Za-z_]`; a text with any other
character still goes to polars' regex (tests/test_line_marks.py compares the two).

How the scan reads the pattern (`^[ \\t]*(\\d+:|[+>] |[\\w.-]+@[\\w.-]+:[~/\\w.-]*[#$] ?)`,
leftmost-first as Rust's regex): a line starts a text or follows a line feed (Rust's
multi-line `^`: not a carriage return); the spaces and tabs are taken whole, since every
alternative opens with something else; no class of a repeat holds the character that must
follow it (`:`, `@`, `#` or `$`), so each repeat is taken whole and never backtracks; the
first alternative that matches wins; a match never holds a line feed, so the next one is on
a later line.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from quality.kernel_cache import cached_njit
from quality.text_pool import non_ascii_rows, string_buffers

# Per ASCII byte: 1 for [0-9], 2 for [\w.-] (letters, digits, "_", ".", "-"), 4 for the
# prompt's path ([~/\w.-]).
_DIGIT, _NAME, _PATH = 1, 2, 4
_CLASSES = np.zeros(256, np.uint8)
for _b in range(128):
    _c = chr(_b)
    _word = _c.isascii() and (_c.isalnum() or _c in "_.-")
    _CLASSES[_b] = (_DIGIT * _c.isdigit() + _NAME * _word + _PATH * (_word or _c in "~/"))


def drop_line_marks(column: pa.Array, pattern: str) -> pa.LargeStringArray:
    """Each text of a string column (a null as "") without the matches of `pattern` (the
    line marks, as LINE_MARKS writes them: used for the texts that are not ASCII)."""
    column = column.fill_null("")
    data, offsets = string_buffers(column)
    other = np.flatnonzero(non_ascii_rows(data, offsets))
    # (the texts that are not ASCII by polars' regex first; the scan copies them in)
    done = pl.Series(column.take(pa.array(other, pa.int64())), dtype=pl.String)
    done_data, done_offsets = string_buffers(
        done.str.replace_all(pattern, "").to_arrow(compat_level=pl.CompatLevel.oldest()))
    out = np.empty(len(data), dtype=np.uint8)  # (a text only loses bytes)
    out_offsets = np.zeros(len(offsets), dtype=np.int64)
    _drop_marks(data, offsets, other.astype(np.int64), done_data, done_offsets, _CLASSES,
                out, out_offsets)
    return pa.LargeStringArray.from_buffers(len(out_offsets) - 1, pa.py_buffer(out_offsets),
                                            pa.py_buffer(out))


@cached_njit
def _drop_marks(data: np.ndarray, offsets: np.ndarray, other: np.ndarray,
                done_data: np.ndarray, done_offsets: np.ndarray, classes: np.ndarray,
                out: np.ndarray, out_offsets: np.ndarray) -> None:
    """Write text k without its line marks to out[out_offsets[k]:...]; the texts `other`
    (ascending) are written as done_data's k-th text instead."""
    at, next_other = 0, 0
    for k in range(len(offsets) - 1):
        if next_other < len(other) and other[next_other] == k:
            lo, hi = done_offsets[next_other], done_offsets[next_other + 1]
            out[at:at + hi - lo] = done_data[lo:hi]
            at += hi - lo
            next_other += 1
        else:
            at = _drop_text(data, offsets[k], offsets[k + 1], classes, out, at)
        out_offsets[k + 1] = at


@cached_njit
def _drop_text(data: np.ndarray, lo: int, hi: int, classes: np.ndarray, out: np.ndarray,
               at: int) -> int:
    """One ASCII text data[lo:hi] without its line marks, written from out[at]; the end.
    (Unsigned positions: numba then checks no index for a negative wrap, 5x faster.)"""
    i, stop, end = np.uint64(lo), np.uint64(hi), np.uint64(at)
    while i < stop:
        i = _mark_end(data, i, stop, classes)  # (i: a line's start)
        while i < stop:  # the rest of the line, its line feed included
            b = data[i]
            out[end] = b
            end += np.uint64(1)
            i += np.uint64(1)
            if b == 0x0A:
                break
    return np.int64(end)


@cached_njit(inline="always")
def _mark_end(data: np.ndarray, start: np.uint64, hi: np.uint64,
              classes: np.ndarray) -> np.uint64:
    """Where the line mark that opens the line at `start` ends (`start`: none there)."""
    i, one = start, np.uint64(1)
    while i < hi and (data[i] == 0x20 or data[i] == 0x09):
        i += one
    if i >= hi:
        return start
    b = data[i]
    if classes[b] & _DIGIT:  # \d+:
        j = i
        while j < hi and (classes[data[j]] & _DIGIT) != 0:
            j += one
        if j < hi and data[j] == 0x3A:
            return j + one
    if (b == 0x2B or b == 0x3E) and i + one < hi and data[i + one] == 0x20:  # [+>] and a space
        return i + np.uint64(2)
    return _prompt_end(data, i, hi, start, classes)


@cached_njit(inline="always")
def _prompt_end(data: np.ndarray, i: np.uint64, hi: np.uint64, start: np.uint64,
                classes: np.ndarray) -> np.uint64:
    """Where a shell prompt ([\\w.-]+@[\\w.-]+:[~/\\w.-]*[#$] ?) from data[i] ends (`start`:
    none there)."""
    j, one = i, np.uint64(1)
    while j < hi and (classes[data[j]] & _NAME) != 0:
        j += one
    if j == i or j >= hi or data[j] != 0x40:
        return start
    j += one
    host = j
    while j < hi and (classes[data[j]] & _NAME) != 0:
        j += one
    if j == host or j >= hi or data[j] != 0x3A:
        return start
    j += one
    while j < hi and (classes[data[j]] & _PATH) != 0:
        j += one
    if j >= hi or (data[j] != 0x23 and data[j] != 0x24):
        return start
    j += one
    if j < hi and data[j] == 0x20:
        j += one
    return j
