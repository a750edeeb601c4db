"""Words of many lowercased texts, split by a compiled scan of their UTF-8 bytes.

quality/shingles.py's two tokenisations, done in one numba pass instead of a polars regex
(`words`: replace the JSON escapes, then `extract_all` of the runs of non-separators) or
replace-and-split (`whitespace`). Both define a word as a maximal run of code points that are
no separator, which a scan finds directly:

- a separator is a code point of the tokenisation's list or the space; the lists hold ASCII
  characters and a few dozen others (Unicode spaces, typographic punctuation);
- `words` only: a backslash and, when it is one of `n t r " \\ /`, the character after it (a JSON
  escape, matched leftmost as the regex does; a lone backslash is punctuation anyway).

Two scans find the same words (tests/test_word_split.py checks both against a plain-Python
split): an ASCII text (nearly every generated agent text; 63 % of the real traces' bytes), found
by a vectorised OR of its bytes, by a branch-free loop over its bytes (a table
says which byte is a word byte, and a word starts and ends where that flag changes: text
switches between words and spaces every few bytes, so branches on it mispredict: with the
views below, 65 MB of dedup's texts split in 0.2-0.3 CPU s instead of 0.6-0.75), any other
text by decoding its code points. The words come back as one
Arrow string-view array whose views point into the texts' own buffer (no copy of their
bytes), so polars hashes exactly the strings it hashed before; the identifier rule of
quality/volatile.py (`id_like`: ID_MIN_CHARS or more code points, an ASCII digit among them)
is evaluated per word (a digit byte is never part of a multi-byte character, and a word's
code points are its bytes that are no UTF-8 continuation byte).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa

from quality.kernel_cache import cached_njit
from quality.text_pool import LoweredTexts, non_ascii_rows, padded_words
from quality.volatile import DIGITS, ID_MIN_CHARS

_BACKSLASH = 0x5C
_ESCAPED = np.array([ord(c) for c in 'ntr"\\/'], dtype=np.int64)  # after a backslash
# `_Tables.kind` bits: a word byte, an ASCII digit (a word byte too), a byte opening an escape
_WORD, _DIGIT, _ESCAPE = np.uint8(1), np.uint8(2), np.uint8(4)
_MAX_OFFSET = 2**31 - 1  # a string view's offset is an int32
# the low k bytes of a uint64, k = 0..8
_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
if DIGITS != list("0123456789"):
    raise ImportError("word_split tests ASCII digits; volatile.DIGITS changed")


def split_words(data: np.ndarray, offsets: np.ndarray, separators: list[str],
                json_escapes: bool, identifiers: bool = True,
                pool: LoweredTexts | None = None) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The words of the texts (lowercased UTF-8 `data`, text t at data[offsets[t]:offsets[t+1]])
    in text order, each text's offsets into them (int64, len(texts) + 1), and per word whether
    it is identifier-like (if `identifiers`; else an empty array). `pool`: `data` and
    `offsets` as quality/text_pool.py laid them out, whose padded words and non-ASCII flags
    are used instead of made again (a text it flags that lowercased to ASCII takes the
    decoding scan, which finds the same words)."""
    if len(data) > _MAX_OFFSET:
        raise ValueError("texts over 2 GiB at once: split the batch")
    n = len(offsets) - 1
    tables = _tables(separators, json_escapes)
    # each word's start and end, one after the other: room for the most words the texts can
    # hold (words are separated: at most one word per two bytes of a text, rounded up) and
    # one more (the branch-free loop writes one ahead)
    room = len(data) // 2 + n + 1
    bounds = np.empty(2 * room, dtype=np.int32)  # (positions < _MAX_OFFSET)
    counts = np.zeros(n, dtype=np.int64)
    # per bound, whether the word before it held a digit; per word, identifier-like
    digits = np.empty(2 * room if identifiers else 0, dtype=np.uint8)
    id_like = np.empty(room if identifiers else 0, dtype=np.bool_)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    other = pool.other if pool is not None else non_ascii_rows(data, offsets)
    n_words = _scan(data, offsets, other, tables, json_escapes, bounds, counts, digits,
                    id_like)
    views = np.empty((n_words, 2), dtype=np.uint64)
    _views(pool.packed if pool is not None else _packed(data), bounds, views)
    id_like = id_like[:n_words]
    text_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=text_offsets[1:])
    words = pa.Array.from_buffers(pa.string_view(), n_words,
                                  [None, pa.py_buffer(views), pa.py_buffer(data)])
    return words, text_offsets, id_like


class _Tables(NamedTuple):
    """The scan's byte tables (a named tuple: numba takes it as it is): word bytes of ASCII (1)
    and separators (0); each byte's kind for `_scan_ascii_full` (_WORD, _DIGIT, _ESCAPE bits:
    one load a byte instead of three); the bytes an escape takes after it; and the non-ASCII
    separators."""

    word_byte: np.ndarray
    kind: np.ndarray
    escaped: np.ndarray
    other_codes: np.ndarray


def _tables(separators: list[str], json_escapes: bool) -> _Tables:
    word_byte = np.ones(256, dtype=np.uint8)
    word_byte[128:] = 0  # (not read: a text with such a byte takes the decoding scan)
    others = []
    for c in [" ", *separators]:  # one character each
        if ord(c) < 128:
            word_byte[ord(c)] = 0
        else:
            others.append(ord(c))
    escape_start = np.zeros(256, dtype=np.uint8)
    escaped = np.zeros(256, dtype=np.uint8)
    if json_escapes:
        escape_start[_BACKSLASH] = 1
        escaped[_ESCAPED] = 1
    kind = word_byte * _WORD + escape_start * _ESCAPE
    kind[ord("0"): ord("9") + 1] |= _DIGIT
    return _Tables(word_byte, kind, escaped, np.array(sorted(others), dtype=np.int64))


@cached_njit
def _scan(data: np.ndarray, offsets: np.ndarray, other: np.ndarray, tables: _Tables,
          json_escapes: bool, bounds: np.ndarray, counts: np.ndarray, digits: np.ndarray,
          id_like: np.ndarray) -> int:
    """Each word's start and end in `data` (bounds[2w], bounds[2w + 1]), each text's number
    of words and, if `id_like` has room, whether each word is identifier-like; returns the
    number of words. An ASCII text by `_scan_ascii` (or `_scan_ascii_full` for escapes or
    identifiers), a text with another byte (`other`) by `_scan_decoding`."""
    identifiers = len(id_like) > 0
    words = 0
    for t in range(len(offsets) - 1):
        lo, hi = offsets[t], offsets[t + 1]
        if other[t]:
            found = _scan_decoding(data, lo, hi, tables.word_byte, tables.other_codes,
                                   json_escapes, bounds, 2 * words)
        elif json_escapes or identifiers:
            found = _scan_ascii_full(data, lo, hi, tables, bounds, digits, 2 * words)
        else:
            found = _scan_ascii(data, lo, hi, tables.word_byte, bounds, 2 * words)
        if identifiers:
            _identifiers(data, bounds, digits, not other[t], words, words + found, id_like)
        counts[t] = found
        words += found
    return words


# The ASCII scans go by byte flags, without a branch on them: a word starts and ends where the
# flag changes, so every byte writes the next bound's slot and the count moves on only at a
# change. Text switches between words and spaces every few bytes, so a branch on the flag
# mispredicts; uint8 flags and unsigned counters and positions, since numba checks a signed
# index for a negative value (which here doubled the time). Each returns the words found.


@cached_njit(inline="always")
def _scan_ascii(data: np.ndarray, lo: int, hi: int, word_byte: np.ndarray,
                bounds: np.ndarray, at: int) -> int:
    """Words of data[lo:hi], bounds from bounds[at]."""
    n = np.uint64(at)
    previous = np.uint8(0)  # the previous byte was a word byte
    for i in range(np.uint64(lo), np.uint64(hi)):  # (unsigned: see above)
        b = data[i]
        word = word_byte[b]
        n = _mark(bounds, n, i, word ^ previous)
        previous = word
    return _words_found(bounds, n, hi, previous, at)


@cached_njit(inline="always")
def _scan_ascii_full(data: np.ndarray, lo: int, hi: int, tables: _Tables, bounds: np.ndarray,
                     digits: np.ndarray, at: int) -> int:
    """`_scan_ascii` where a backslash that opens a JSON escape (a separator) takes the byte
    after it as a separator too, skipped (the one branch, rarely taken); and, if `digits`
    has room, digits[n] is whether the word before bound n held a digit (each byte writes
    the slot of the next bound, as for the bounds, the flag of the word read so far)."""
    n = np.uint64(at)
    previous = digit = np.uint8(0)
    channel = len(digits) > 0
    i, end = np.uint64(lo), np.uint64(hi)  # (unsigned: see above)
    while i < end:
        kind = tables.kind[data[i]]
        word = kind & _WORD
        if channel:
            digits[n] = digit
            digit = (digit | (kind >> np.uint8(1))) & word  # (_DIGIT >> 1 == _WORD)
        n = _mark(bounds, n, i, word ^ previous)
        previous = word
        if kind & _ESCAPE and i + np.uint64(1) < end and tables.escaped[data[i + np.uint64(1)]]:
            i += np.uint64(1)
        i += np.uint64(1)
    if channel:
        digits[n] = digit
    return _words_found(bounds, n, hi, previous, at)


@cached_njit(inline="always")
def _mark(bounds: np.ndarray, n: np.uint64, i: int, change: np.uint8) -> np.uint64:
    """Write position i into the next bound's slot; keep it (move on) if the flag changed."""
    bounds[n] = i
    return n + np.uint64(change)


@cached_njit(inline="always")
def _words_found(bounds: np.ndarray, n: np.uint64, hi: int, previous: np.uint8, at: int
                 ) -> int:
    """The text's end closes a word still open; the words found since bounds[at]."""
    n = _mark(bounds, n, hi, previous)
    return (np.int64(n) - at) // 2


@cached_njit
def _scan_decoding(data: np.ndarray, lo: int, hi: int, word_byte: np.ndarray,
                   other_codes: np.ndarray, json_escapes: bool, bounds: np.ndarray,
                   at: int) -> int:
    """Words of data[lo:hi], code point by code point (any UTF-8), bounds from bounds[at];
    returns the words found."""
    n = at
    in_word = False
    i = lo
    while i < hi:
        b = data[i]
        step = 1
        if b < 0x80:
            separator = word_byte[b] == 0
            if b == _BACKSLASH and json_escapes and i + 1 < hi:
                for e in _ESCAPED:
                    if data[i + 1] == e:
                        step = 2
        else:
            if b < 0xE0:
                step, code = 2, b & 0x1F
            elif b < 0xF0:
                step, code = 3, b & 0x0F
            else:
                step, code = 4, b & 0x07
            for k in range(1, step):
                code = (code << 6) | (data[i + k] & 0x3F)
            separator = False
            for c in other_codes:
                if c == code:
                    separator = True
        if separator == in_word:  # a word starts or ends here
            bounds[n] = i
            n += 1
            in_word = not in_word
        i += step
    if in_word:
        bounds[n] = hi
        n += 1
    return (n - at) // 2


def _packed(data: np.ndarray) -> np.ndarray:
    """The bytes as padded_words (`_views` reads them with aligned loads)."""
    packed = padded_words(len(data))
    packed.view(np.uint8)[:len(data)] = data
    return packed


@cached_njit
def _views(packed: np.ndarray, bounds: np.ndarray, views: np.ndarray) -> None:
    """Each word's Arrow string view, as two little-endian uint64 (16 bytes: the int32
    length, then up to 12 bytes inline, else a 4-byte prefix, buffer 0 and the int32
    offset). The word's first 16 bytes are put together from the three aligned words of
    `packed` (`_packed`) around it, by shifts, and masked to its length (no branch on the
    length; reading byte by byte was the loop's time)."""
    for w in range(len(views)):
        # (unsigned positions and lengths: numba checks a signed index for a negative value)
        start = np.uint64(bounds[2 * w])
        length = np.uint64(bounds[2 * w + 1]) - start
        at = start >> np.uint64(3)
        shift = np.uint64(8) * (start & np.uint64(7))
        low = packed[at]
        middle, high = packed[at + np.uint64(1)], packed[at + np.uint64(2)]
        # (a shift by 64 is undefined: 63 - shift, then 1, gives 0 where shift is 0)
        first = (low >> shift) | ((middle << (np.uint64(63) - shift)) << np.uint64(1))
        second = (middle >> shift) | ((high << (np.uint64(63) - shift)) << np.uint64(1))
        head = first & _MASKS[min(length, np.uint64(4))]
        rest = (first >> np.uint64(32)) | (second << np.uint64(32))
        views[w, 0] = length | (head << np.uint64(32))
        # (the bytes after the first 4, at most 8: max(length - 4, 0) without a negative)
        inline = rest & _MASKS[min(length, np.uint64(12)) - min(length, np.uint64(4))]
        views[w, 1] = inline if length <= np.uint64(12) else start << np.uint64(32)


@cached_njit(inline="always")
def _identifiers(data: np.ndarray, bounds: np.ndarray, digits: np.ndarray, ascii_only: bool,
                 first: int, last: int, id_like: np.ndarray) -> None:
    """Whether words first..last-1 (of one text) are identifier-like: ID_MIN_CHARS or more
    code points, an ASCII digit among them. In an ASCII text a code point is a byte and the
    scan flagged the digits (digits[2w + 1]); in any other, the word's bytes are read."""
    for w in range(first, last):
        lo, hi = bounds[2 * w], bounds[2 * w + 1]
        if ascii_only:
            id_like[w] = (hi - lo >= ID_MIN_CHARS) & (digits[2 * w + 1] != 0)
        else:
            id_like[w] = hi - lo >= ID_MIN_CHARS and _identifier(data, lo, hi)


@cached_njit(inline="always")
def _identifier(data: np.ndarray, lo: int, hi: int) -> bool:
    """ID_MIN_CHARS or more code points (bytes that are no continuation byte) with an ASCII
    digit among them (counted without a branch per byte)."""
    chars = np.uint64(0)
    digits = np.uint64(0)
    for i in range(lo, hi):
        b = data[i]
        chars += np.uint64((b & np.uint8(0xC0)) != np.uint8(0x80))
        digits += np.uint64(np.uint8(b - np.uint8(0x30)) < np.uint8(10))
    return chars >= ID_MIN_CHARS and digits > 0
