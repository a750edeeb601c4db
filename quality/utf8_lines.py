"""UTF-8 text as Python's str methods see it, for compiled loops: code points decoded from
the bytes, a table of Python's own Unicode answers (isspace, isalnum, isdecimal) for every
code point, and str.find's search.

The functions read a byte buffer (uint8) of valid UTF-8 (Arrow's strings are). UTF-8's byte
order is its code points' order, and a needle found at a byte position starts a code point
there, so bytes compare and search as str does.

(A call that takes an array costs numba two atomic reference counts wherever its branches
keep them from being pruned: about 20 ns, more than a line's work. Per-byte and per-line
work is therefore written out in the loops that need it, or inlined (inline="always").
Bytes are read by `at`: numba reads data[k] for a signed k with a test for k < 0, which
costs a branch a byte and keeps LLVM from merging eight byte reads into one word.)
"""

from __future__ import annotations

import functools
import string

import numba
import numpy as np

from quality.kernel_cache import cached_njit

SPACE, ALNUM, DECIMAL = 1, 2, 4  # bits of code_point_flags()
CONTENT, BREAK, BLANK, WORD = 1, 2, 4, 8  # bits of byte_classes()


@numba.njit(inline="always")
def at(data: np.ndarray, k: int) -> int:
    """data[k] for an index k >= 0, read as unsigned: no wraparound test (2-5x faster scans)."""
    return data[np.uint64(k)]


@functools.cache
def code_point_flags() -> np.ndarray:
    """uint8 per code point (0x110000): SPACE (str.isspace), ALNUM (str.isalnum: what re's
    \\w is besides "_") and DECIMAL (str.isdecimal: re's \\d). numpy's string functions answer
    from Python's Unicode database (the test checks every code point), in 0.07 s, not 1 s."""
    chars = np.arange(0x110000, dtype=np.uint32).view("<U1")
    return (np.strings.isspace(chars).astype(np.uint8) * SPACE
            | np.strings.isalnum(chars).astype(np.uint8) * ALNUM
            | np.strings.isdecimal(chars).astype(np.uint8) * DECIMAL)


@functools.cache
def byte_classes() -> np.ndarray:
    """uint8 per byte value: CONTENT where the byte is part of a content character
    (quality/line_shares.py HAS_CONTENT: anything but ASCII punctuation and whitespace, so
    every byte of a non-ASCII character), BREAK where a str.splitlines line break may start
    (\n \v \f \r \x1c \x1d \x1e, and the lead bytes of \x85, \u2028, \u2029), BLANK for
    ASCII str.isspace (\\t-\\r, \\x1c-\\x1f, space), WORD for ASCII re \\w (letters, digits, _)."""
    table = np.full(256, CONTENT, np.uint8)
    table[[ord(c) for c in string.punctuation + string.whitespace]] = 0
    table[[10, 11, 12, 13, 28, 29, 30, 0xC2, 0xE2]] |= BREAK
    table[[c for c in range(128) if chr(c).isspace()]] |= BLANK
    table[[c for c in range(128) if chr(c).isalnum() or c == 95]] |= WORD
    return table


@cached_njit
def decode(data: np.ndarray, start: int) -> tuple[int, int]:
    """(code point, its length in bytes) of the character that starts at `start`."""
    b = np.int64(data[start])
    if b < 0x80:
        return b, 1
    if b < 0xE0:
        return ((b & 0x1F) << 6) | (np.int64(data[start + 1]) & 0x3F), 2
    if b < 0xF0:
        return (((b & 0x0F) << 12) | ((np.int64(data[start + 1]) & 0x3F) << 6)
                | (np.int64(data[start + 2]) & 0x3F)), 3
    return (((b & 0x07) << 18) | ((np.int64(data[start + 1]) & 0x3F) << 12)
            | ((np.int64(data[start + 2]) & 0x3F) << 6) | (np.int64(data[start + 3]) & 0x3F)), 4


@cached_njit
def char_start(data: np.ndarray, byte: int) -> int:
    """Where the character holding `byte` starts."""
    while at(data, byte) & 0xC0 == 0x80:
        byte -= 1
    return byte


@cached_njit
def code_points(data: np.ndarray, start: int, end: int, most: int) -> int:
    """len() of the span's text, counted up to `most` + 1 (the caller asks "longer than?")."""
    count = 0
    for k in range(start, end):
        count += at(data, k) & 0xC0 != 0x80
        if count > most:
            break
    return count


@cached_njit
def needle_skips(data: np.ndarray, start: int, end: int) -> tuple[np.uint64, int]:
    """(bloom mask, skip) of a needle for find: CPython's fastsearch preparation."""
    last = end - start - 1
    bloom, skip = np.uint64(0), last
    for k in range(last):
        bloom |= np.uint64(1) << np.uint64(data[start + k] & 63)
        if data[start + k] == data[end - 1]:
            skip = last - k - 1
    return bloom | (np.uint64(1) << np.uint64(data[end - 1] & 63)), skip


@cached_njit
def find(hay: np.ndarray, end: int, needle: np.ndarray, n_start: int, n_end: int,
         bloom: np.uint64, skip: int, first: int) -> int:
    """First position >= first of the needle's bytes in hay[:end], else -1: str.find's
    algorithm (CPython's default fastsearch: the window's last byte, then a skip past a byte
    the needle lacks). `bloom` and `skip`: needle_skips; the needle is not empty."""
    size = n_end - n_start
    last = at(needle, n_end - 1)
    pos = first
    while pos <= end - size:
        after = pos + size  # (the byte after the window: skip past it if the needle lacks it)
        if at(hay, after - 1) == last:
            k = 0
            while k < size - 1 and at(hay, pos + k) == at(needle, n_start + k):
                k += 1
            if k == size - 1:
                return pos
            if after < end and not bloom & (np.uint64(1) << np.uint64(at(hay, after) & 63)):
                pos += size
            else:
                pos += skip
        elif after < end and not bloom & (np.uint64(1) << np.uint64(at(hay, after) & 63)):
            pos += size
        pos += 1
    return -1
