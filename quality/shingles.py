"""Word n-gram shingles, hashed in bulk: polars hashes the words, compiled loops split and join.

A text becomes the set of its word n-grams ("shingles"), each one a 64-bit hash. Building the
n-gram strings in Python is what makes naive MinHash slow (a Python object per shingle), so
nothing here touches a single word in Python:

1. the texts are lowercased into one buffer (ASCII ones by a compiled copy, others by polars:
   quality/text_pool.py); a numba scan of their UTF-8 bytes cuts them at the separators into
   one Arrow column of words, views into that buffer (quality/word_split.py);
2. polars hashes every word to 64 bits (`Series.hash`, fixed seed: stable within a polars
   version, which is all a run needs; nothing stores word hashes);
3. a compiled loop (numba) combines n consecutive word hashes into the shingle hash,
   `mix64(sum_k C_k * w[j+k])` over odd 64-bit constants `C_k`, with no n-gram crossing a text's
   end. A text with 1 to n-1 words is one shingle of all its words; a text with none has none.

Identifier masking (`mask_ids`, turn features only; the rule is quality/volatile.py's `id_like`):
a word of 6 or more characters with a digit in it (a container hostname in a shell prompt
`root@4c2a9f1e8b3d:/app#`, a UUID part, a request id, a timestamped screenshot name) hashes as
one placeholder word. Such ids differ
between runs of the same template, so without the mask every shell prompt would make a
terminal's canned output look new in each trajectory. Short numbers (counts, prices, exit codes,
line numbers) keep their value: they are what a world model has to predict.

Two tokenisations:
- `whitespace` (dedup, and the benchmark): words are what `text.lower().split()` gives; this is
  the definition the planted duplicate truth uses (word 5-grams of the lowercased text).
- `words` (turn features): JSON string escapes (`\\n`, `\\"`) and ASCII punctuation also
  separate words, so `{"path": "/a/b.py"}` and `/a/b.py` share their words `a b py`. Real
  observations are often the action's text re-quoted (a diff of the edit, a tool result echoing
  its JSON arguments), and whitespace words would miss every such match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl
import pyarrow as pa

from quality import patterns
from quality.kernel_cache import cached_njit
from quality.text_pool import lowered_pool
from quality.word_split import split_words

Tokens = Literal["whitespace", "words"]

# What Python's str.split() treats as whitespace, beyond the ASCII space.
_WHITESPACE = [
    "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u1680",
    *[chr(c) for c in range(0x2000, 0x200B)], "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
]
# Escapes of a JSON string first (two characters each, matched before a lone backslash).
_JSON_ESCAPES = ["\\n", "\\t", "\\r", '\\"', "\\\\", "\\/"]
_PUNCTUATION = [c for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~"] + list("“”‘’–—…•«»·")
_SEPARATORS: dict[Tokens, list[str]] = {
    "whitespace": _WHITESPACE,
    "words": _JSON_ESCAPES + _WHITESPACE + _PUNCTUATION,
}

_WORD_HASH_SEED = 20250101
_ID_PLACEHOLDER = np.uint64(0x5A17_1D5A_17ED_0001)  # the hash every masked identifier gets
# Odd multipliers (from splitmix64's golden-ratio sequence) weighting the n positions of a gram,
# and one more marking "a short text of L words" so it cannot equal a full n-gram.
_POSITION_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xD6E8FEB86659FD93,
     0xA0761D6478BD642F, 0xE7037ED1A0B428DB, 0x8EBC6AF09C88C6E3, 0x589965CC75374CC3],
    dtype=np.uint64,
)
_SHORT_TEXT_MULTIPLIER = np.uint64(0x1D8E4E27C47D124F)


@dataclass(frozen=True)
class ShingleConfig:
    """How texts become shingles: n words a gram, and which tokenisation."""

    ngram: int = 5
    tokens: Tokens = "whitespace"
    mask_ids: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.ngram <= len(_POSITION_MULTIPLIERS):
            raise ValueError(f"ngram must be in 1..{len(_POSITION_MULTIPLIERS)}, got {self.ngram}")
        if self.tokens not in _SEPARATORS:
            raise ValueError(f"tokens must be one of {sorted(_SEPARATORS)}, got {self.tokens!r}")

    def __str__(self) -> str:
        return f"{self.ngram}ng_{self.tokens}" + ("_maskids" if self.mask_ids else "")


@dataclass
class Shingled:
    """Shingle hashes of many texts, one flat array: text i owns hashes[offsets[i]:offsets[i+1]].

    Hashes keep repeats (a MinHash does not care); use `unique_per_text` for sets.
    """

    hashes: np.ndarray  # uint64
    offsets: np.ndarray  # int64, len = number of texts + 1

    @property
    def n_texts(self) -> int:
        return len(self.offsets) - 1

    def counts(self) -> np.ndarray:
        """Shingles per text (with repeats)."""
        return np.diff(self.offsets)

    def subset(self, mask: np.ndarray) -> Shingled:
        """The shingles of the texts where `mask` is true, in order."""
        counts = self.counts()[mask]
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return Shingled(self.hashes[np.repeat(mask, self.counts())], offsets)

    def keep(self, keep: np.ndarray) -> Shingled:
        """Each text's shingles where `keep` (a flag per hash) holds, in order."""
        kept_before = np.r_[0, np.cumsum(keep, dtype=np.int64)]
        return Shingled(self.hashes[keep], kept_before[self.offsets])

    def text_ids(self) -> np.ndarray:
        """For every hash, the index of its text."""
        return np.repeat(np.arange(self.n_texts, dtype=np.int64), self.counts())


def sorted_distinct(hashes: np.ndarray) -> np.ndarray:
    """`np.unique(hashes)` by a sort and a neighbour test: numpy 2's unique hashes the values
    and then sorts the distinct ones anyway, 10x slower at 10^4 uint64 and 25x at 10^5 (a
    long trajectory's shingles)."""
    ordered = np.sort(hashes)
    if len(ordered) < 2:
        return ordered
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]]


def word_hashes(texts: Sequence[str] | pa.Array | pa.ChunkedArray | pl.Series,
                tokens: Tokens = "whitespace", mask_ids: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
    """64-bit hashes of every word of every text, and each text's offsets into them."""
    if isinstance(texts, pl.Series):
        texts = texts.to_arrow(compat_level=pl.CompatLevel.oldest())
    elif not isinstance(texts, (pa.Array, pa.ChunkedArray)):
        texts = pa.array(texts, pa.large_string())
    return laid_out_word_hashes([texts], [np.arange(len(texts))], len(texts), tokens, mask_ids)


def protocol_normalised(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """`patterns.normalise_protocol_ids` of a column, the column itself when none of its texts
    says "jsonrpc" (a polars view of its buffers finds none in most batches; the copy back to
    Arrow is then skipped)."""
    texts = pl.Series("text", column)
    normalised = patterns.normalise_protocol_ids(texts)
    if normalised is texts:
        return column
    return normalised.to_arrow(compat_level=pl.CompatLevel.oldest())


def laid_out_word_hashes(columns: Sequence[pa.Array | pa.ChunkedArray],
                         slots: Sequence[np.ndarray], n_texts: int,
                         tokens: Tokens = "whitespace", mask_ids: bool = False
                         ) -> tuple[np.ndarray, np.ndarray]:
    """`word_hashes` of n_texts texts taken from several columns: row r of columns[c] is text
    slots[c][r] (quality/text_pool.py lowercases them into one buffer in that order, a
    compiled scan splits them: quality/word_split.py; polars hashes the words)."""
    pool = lowered_pool(columns, slots, n_texts)
    single = [c for c in _SEPARATORS[tokens] if len(c) == 1]  # (the escapes: a flag)
    words, word_offsets, id_like = split_words(pool.data, pool.offsets, single,
                                               tokens == "words", mask_ids, pool)
    hashes = pl.Series(words).hash(seed=_WORD_HASH_SEED).to_numpy()
    if mask_ids:
        hashes = np.where(id_like, _ID_PLACEHOLDER, hashes)
    return np.ascontiguousarray(hashes, dtype=np.uint64), word_offsets


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place: spreads a linear combination over all 64 bits."""
    tmp = np.empty_like(x)
    for shift, multiplier in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
        np.right_shift(x, np.uint64(shift), out=tmp)
        np.bitwise_xor(x, tmp, out=x)
        if multiplier is not None:
            np.multiply(x, np.uint64(multiplier), out=x)
    return x


def shingle_words(hashes: np.ndarray, offsets: np.ndarray, ngram: int) -> Shingled:
    """Join the word hashes of each text (offsets) into its n-gram shingle hashes."""
    lengths = np.diff(offsets)
    short = (lengths > 0) & (lengths < ngram)  # texts that become one shingle of all words
    out_offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.maximum(lengths - ngram + 1, 0) + short, out=out_offsets[1:])
    out = np.empty(int(out_offsets[-1]), dtype=np.uint64)
    _join_grams(np.ascontiguousarray(hashes, dtype=np.uint64),
                np.ascontiguousarray(offsets, dtype=np.int64), ngram, out)
    return Shingled(out, out_offsets)


@cached_njit
def _join_grams(hashes: np.ndarray, offsets: np.ndarray, ngram: int, out: np.ndarray) -> None:
    """`shingle_words`' loop, compiled (one pass, no n-wide temporaries: numpy's version was
    memory-bound). Sums wrap around mod 2^64, so the order of the terms does not matter: the
    same hashes as `_weighted_sum` + `_mix64`, and as `grams_at` for full n-grams."""
    at = np.uint64(0)
    # (unsigned positions: numba checks a signed index for a negative value on every read)
    width = np.uint64(ngram)
    for t in range(len(offsets) - 1):
        lo, hi = np.uint64(offsets[t]), np.uint64(offsets[t + 1])
        if hi - lo >= width:
            for j in range(lo, hi - width + np.uint64(1)):
                acc = np.uint64(0)
                for k in range(width):
                    acc += hashes[j + k] * _POSITION_MULTIPLIERS[k]
                out[at] = _mix64_one(acc)
                at += np.uint64(1)
        elif hi > lo:
            acc = (hi - lo) * _SHORT_TEXT_MULTIPLIER
            for k in range(hi - lo):
                acc += hashes[lo + k] * _POSITION_MULTIPLIERS[k]
            out[at] = _mix64_one(acc)
            at += np.uint64(1)


@cached_njit(inline="always")
def _mix64_one(x: np.uint64) -> np.uint64:
    """`_mix64` of one value (numba: every constant a uint64, or the arithmetic goes float)."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _weighted_sum(words: list[np.ndarray]) -> np.ndarray:
    """sum_k C_k * words[k]: the n-gram's hash before mixing, from its k-th words."""
    with np.errstate(over="ignore"):
        acc = words[0] * _POSITION_MULTIPLIERS[0]
        for k in range(1, len(words)):
            acc += words[k] * _POSITION_MULTIPLIERS[k]
    return acc


def grams_at(hashes: np.ndarray, word_index: np.ndarray) -> np.ndarray:
    """The hashes `shingle_words` gives full n-grams, here those whose k-th words are
    `hashes[word_index[k]]` (n rows, a column per n-gram)."""
    return _mix64(_weighted_sum([hashes[row] for row in word_index]))


def per_shingle(offsets: np.ndarray, ngram: int, at_start: np.ndarray, of_short: np.ndarray
                ) -> Shingled:
    """Values laid out as `shingle_words` lays out the shingles of texts whose words have
    `offsets`: `at_start[j]` for the n-gram starting at word j (one value per word but the
    last n - 1: an n-gram may not start in the last n - 1 words of its text, those are
    dropped), `of_short[i]` for the one shingle of the i-th text shorter than n words."""
    lengths = np.diff(offsets)
    full = np.maximum(lengths - ngram + 1, 0)  # n-grams per text with at least n words
    short = (lengths > 0) & (lengths < ngram)
    out_offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(full + short, out=out_offsets[1:])
    if len(at_start) and full.any():
        invalid = np.zeros(int(offsets[-1]), dtype=bool)
        for k in range(1, ngram):
            last = offsets[1:] - k
            invalid[last[last >= offsets[:-1]]] = True
        grams = at_start[~invalid[:len(at_start)]]
    else:
        grams = at_start[:0]
    if not short.any():
        return Shingled(grams, out_offsets)
    # full n-grams of the other texts fill every slot but the short texts' own
    out = np.empty(int(out_offsets[-1]), dtype=at_start.dtype)
    slot = np.zeros(len(out), dtype=bool)
    slot[out_offsets[:-1][short]] = True
    out[~slot] = grams
    out[slot] = of_short
    return Shingled(out, out_offsets)


def shingle(texts: Sequence[str] | pa.Array | pa.ChunkedArray | pl.Series,
            config: ShingleConfig = ShingleConfig()) -> Shingled:
    """Shingle hashes of every text (see module docstring)."""
    hashes, offsets = word_hashes(texts, config.tokens, config.mask_ids)
    return shingle_words(hashes, offsets, config.ngram)


def unique_per_text(shingled: Shingled) -> tuple[np.ndarray, np.ndarray]:
    """The distinct shingles of each text: (text index, hash) pairs sorted by text then hash."""
    text = shingled.text_ids()
    order = np.lexsort((shingled.hashes, text))
    text, hashes = text[order], shingled.hashes[order]
    if len(hashes) == 0:
        return text, hashes
    first = np.ones(len(hashes), dtype=bool)
    first[1:] = (hashes[1:] != hashes[:-1]) | (text[1:] != text[:-1])
    return text[first], hashes[first]


# One random 64-bit hash per byte value (splitmix64 of the value): a character n-gram is then a
# word n-gram whose "words" are the bytes of the UTF-8 text, and `shingle_words` joins them.
_BYTE_HASHES = _mix64(np.arange(1, 257, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))


def char_shingles(texts: Sequence[str], ngram: int = 5) -> Shingled:
    """Character n-gram shingles (bytes of the lowercased text, whitespace runs as one space).

    For short texts, where word 5-grams are too few to mean anything (one changed word moves a
    20-shingle Jaccard by 0.3): a changed word touches only about n + len(word) character
    grams of a text of a hundred or more."""
    encoded = [" ".join(text.lower().split()).encode("utf-8") for text in texts]
    lengths = np.fromiter((len(e) for e in encoded), dtype=np.int64, count=len(encoded))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return shingle_words(_BYTE_HASHES[data], offsets, ngram)
