"""The compiled word split (quality/word_split.py) against a plain-Python definition of a word.

Both of its scans are checked: the branch-free one of ASCII texts (with and without JSON
escapes) and the decoding one of any other text; and the string views it builds (inline words
of up to 12 bytes, longer ones pointing into the buffer, words at the buffer's very end).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from quality import shingles, word_split
from quality.text_pool import string_buffers
from quality.volatile import ID_MIN_CHARS
from quality.word_split import split_words

ESCAPED = 'ntr"\\/'


def python_words(text: str, separators: set[str], json_escapes: bool) -> list[str]:
    """Maximal runs of code points that are no separator; with `json_escapes`, a backslash
    followed by one of n t r " \\ / takes that character with it (leftmost first)."""
    words, word, i = [], "", 0
    while i < len(text):
        c = text[i]
        step = 2 if json_escapes and c == "\\" and text[i + 1: i + 2] in set(ESCAPED) else 1
        if c in separators or step == 2:
            if word:
                words.append(word)
            word = ""
        else:
            word += c
        i += step
    return words + ([word] if word else [])


def python_id_like(word: str) -> bool:
    return len(word) >= ID_MIN_CHARS and any(c in "0123456789" for c in word)


def split(texts: list[str], tokens: str) -> tuple[list[str], list[int], list[bool]]:
    data, offsets = string_buffers(pa.array(texts, pa.large_string()))
    separators = [c for c in shingles._SEPARATORS[tokens] if len(c) == 1]
    words, text_offsets, id_like = split_words(np.array(data), offsets - offsets[0],
                                               separators, tokens == "words")
    return words.to_pylist(), text_offsets.tolist(), id_like.tolist()


def random_texts(seed: int, pieces: list[str], count: int = 3000) -> list[str]:
    rng = np.random.default_rng(seed)
    return ["".join(rng.choice(pieces, size=int(rng.integers(0, 40)))) for _ in range(count)]


ASCII_PIECES = ["\\", "\\\\", "\\n", "\\\\n", '\\"', "\\/", "\\x", "n", "t", "r", " ", "\t",
                "\n", "\x0b", "\x1c", "\x1f", "ab", "q", "7", "x1y2z3", "longerword123456",
                *list("!\"#$%&'()*+,-./:;<=>?@[]^`{|}~_")]
OTHER_PIECES = [*ASCII_PIECES, "é", "Ω", "日本", "\U0001f600", *shingles._WHITESPACE,
                *shingles._PUNCTUATION]


@pytest.mark.parametrize("tokens", ["whitespace", "words"])
@pytest.mark.parametrize("pieces", [ASCII_PIECES, OTHER_PIECES], ids=["ascii", "any"])
def test_words_offsets_and_identifiers_match_the_definition(tokens, pieces):
    texts = random_texts(5, pieces)
    separators = {" ", *shingles._SEPARATORS[tokens]}
    expected = [python_words(t, separators, tokens == "words") for t in texts]
    words, offsets, id_like = split(texts, tokens)
    assert words == [w for ws in expected for w in ws]
    assert np.diff(offsets).tolist() == [len(ws) for ws in expected]
    assert id_like == [python_id_like(w) for ws in expected for w in ws]


def test_views_inline_long_and_at_the_buffer_end():
    # lengths around the 4-byte prefix and the 12-byte inline limit, multi-byte characters,
    # and words ending at (and near) the buffer's last byte
    words = ["a" * k + str(k % 10) for k in range(0, 20)] + ["é" * k for k in range(1, 9)]
    texts = [" ".join(words), words[-1], "x", "abcdefghijklm", "abcdefghijkl", "ab1"]
    got, _, _ = split(texts, "whitespace")
    assert got == [w for t in texts for w in t.split()]


def test_empty_input_and_empty_texts():
    assert split([], "words") == ([], [0], [])
    assert split(["", " \t", ""], "whitespace") == ([], [0, 0, 0, 0], [])


def python_view(data: bytes, start: int, end: int) -> tuple[int, int]:
    """Arrow's string view of data[start:end] (buffer 0) as two little-endian uint64."""
    word = data[start:end]
    if len(word) <= 12:
        raw = len(word).to_bytes(4, "little") + word.ljust(12, b"\0")
    else:
        raw = (len(word).to_bytes(4, "little") + word[:4] + (0).to_bytes(4, "little")
               + start.to_bytes(4, "little"))
    return int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little")


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 15, 16, 17, 300])
def test_views_kernel_at_every_alignment_matches_the_definition(size):
    rng = np.random.default_rng(size)
    data = rng.integers(1, 256, size=size, dtype=np.uint8)
    # every (start, end) up to 20 bytes long, ending anywhere up to the buffer's end
    pairs = [(s, e) for s in range(size + 1) for e in range(s, min(size, s + 20) + 1)]
    bounds = np.array(pairs, dtype=np.int32).reshape(-1)
    views = np.empty((len(pairs), 2), dtype=np.uint64)
    word_split._views(word_split._packed(data), bounds, views)
    assert [tuple(v) for v in views.tolist()] == [python_view(data.tobytes(), s, e)
                                                 for s, e in pairs]
