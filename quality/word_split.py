"""Words of many lowercased texts, split by a compiled scan of their UTF-8 bytes.

quality/shingles.py's two tokenisations, done in one numba pass instead of a polars regex
(`words`: replace the JSON escapes, then `extract_all` of the runs of non-separators) or
replace-and-split (`whitespace`). Both define a word as a maximal run of code points that are
no separator, which a scan finds directly:

- a separator is a code point of the tokenisation's list or the space; the lists hold ASCII
  characters and a few dozen others (Unicode spaces, typographic punctuation), checked by a
  128-entry table and a short list;
- `words` only: a backslash and, when it is one of `n t r " \\ /`, the character after it (a JSON
  escape, matched leftmost as the regex does; a lone backslash is punctuation anyway).

The words come back as one Arrow string-view array (their bytes copied out of the texts; polars
takes views without a copy), so polars hashes exactly the strings it hashed before; the
identifier rule of quality/volatile.py (`id_like`: ID_MIN_CHARS or more code points, an ASCII
digit among them) is evaluated in the same scan (a digit byte is never part of a multi-byte
character).
"""

from __future__ import annotations

import numba
import numpy as np
import polars as pl
import pyarrow as pa

from quality.volatile import DIGITS, ID_MIN_CHARS

_BACKSLASH = 0x5C
_ESCAPED = np.array([ord(c) for c in 'ntr"\\/'], dtype=np.int64)  # after a backslash
if DIGITS != list("0123456789"):
    raise ImportError("word_split tests ASCII digits; volatile.DIGITS changed")


def split_words(texts: pl.Series, separators: list[str], json_escapes: bool
                ) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The words of the (lowercased, non-null) `texts` in text order, each text's offsets into
    them (int64, len(texts) + 1), and per word whether it is identifier-like."""
    arrow = texts.to_arrow(compat_level=pl.CompatLevel.oldest())
    if not isinstance(arrow, pa.LargeStringArray):
        arrow = arrow.cast(pa.large_string())
    n = len(arrow)
    _, offset_buffer, data_buffer = arrow.buffers()
    offsets = np.frombuffer(offset_buffer, dtype=np.int64)[arrow.offset: arrow.offset + n + 1]
    data = (np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None
            else np.zeros(0, dtype=np.uint8))
    ascii_table = np.zeros(128, dtype=np.bool_)
    others = []
    for c in [" ", *separators]:  # one character each
        if ord(c) < 128:
            ascii_table[ord(c)] = True
        else:
            others.append(ord(c))
    other_codes = np.array(sorted(others), dtype=np.int64)
    # room for the most words and bytes the texts can hold (words are separated: at most one
    # word per two bytes of a text, rounded up), trimmed once the scan has counted them
    counts = np.zeros(n, dtype=np.int64)
    word_bytes = np.empty(len(data), dtype=np.uint8)
    views = np.zeros((len(data) // 2 + n + 1, 16), dtype=np.uint8)  # (calloc: pages on use)
    id_like = np.empty(len(data) // 2 + n + 1, dtype=np.bool_)
    n_words = _scan(data, offsets, ascii_table, other_codes, json_escapes, counts, word_bytes,
                    views, id_like)
    views, id_like = views[:n_words], id_like[:n_words]
    text_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=text_offsets[1:])
    words = pa.Array.from_buffers(pa.string_view(), n_words,
                                  [None, pa.py_buffer(views), pa.py_buffer(word_bytes)])
    return words, text_offsets, id_like


@numba.njit(cache=True, nogil=True)
def _scan(data: np.ndarray, offsets: np.ndarray, ascii_table: np.ndarray,
          other_codes: np.ndarray, json_escapes: bool, counts: np.ndarray,
          word_bytes: np.ndarray, views: np.ndarray, id_like: np.ndarray) -> int:
    """Copy the words' bytes out, one after the other, write each word's Arrow string view
    (16 bytes: the length, then up to 12 bytes inline, else a 4-byte prefix, buffer 0 and
    the offset; little-endian int32s), count each text's words; returns the number of
    words."""
    words = 0
    used = 0
    for t in range(len(offsets) - 1):
        i, end = offsets[t], offsets[t + 1]
        in_word = False
        start = 0  # where the word being read starts in word_bytes
        chars = 0
        digit = False
        while i <= end:
            step = 1
            separator = True  # the text's end closes a word like a separator
            if i < end:
                b = data[i]
                if b < 0x80:
                    separator = ascii_table[b]
                    if b == _BACKSLASH and json_escapes and i + 1 < end:
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
            if separator:
                if in_word:
                    _write_view(views[words], word_bytes, start, used - start)
                    id_like[words] = chars >= ID_MIN_CHARS and digit
                    counts[t] += 1
                    words += 1
                    in_word = False
            else:
                if not in_word:
                    in_word, start, chars, digit = True, used, 0, False
                chars += 1
                digit = digit or (0x30 <= data[i] <= 0x39)
                for k in range(step):
                    word_bytes[used + k] = data[i + k]
                used += step
            i += step
    return words


@numba.njit(cache=True, inline="always")
def _write_view(view: np.ndarray, word_bytes: np.ndarray, start: int, length: int) -> None:
    for k in range(4):
        view[k] = (length >> (8 * k)) & 0xFF
    if length <= 12:
        for k in range(length):
            view[4 + k] = word_bytes[start + k]
    else:
        for k in range(4):
            view[4 + k] = word_bytes[start + k]
            view[12 + k] = (start >> (8 * k)) & 0xFF
