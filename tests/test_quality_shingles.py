"""Shingling and MinHash: the vectorised versions agree with the plain definitions."""

from __future__ import annotations

import re

import datasketch
import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from quality import shingles
from quality.minhash import (
    LshConfig,
    MinHashConfig,
    estimate_jaccard,
    input_hash32,
    permutations,
    signature_array,
    signature_bytes,
    signatures,
    signatures_from_arrow,
    signatures_from_bytes,
    split_signatures,
    to_datasketch,
)
from quality.shingles import ShingleConfig, Shingled, shingle, unique_per_text, word_hashes
from quality.volatile import id_like

TEXTS = [
    "Hello  World\tthis is\na test of the shingle code",
    "",
    "   \n ",
    "one",
    "a b c d",
    "one two three four five",
    "x\u00a0y\u2003z w v u",  # non-breaking and em spaces are whitespace to str.split()
]


def python_shingles(text: str, n: int) -> set[str]:
    words = text.lower().split()
    if len(words) < n:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i:i + n]) for i in range(len(words) - n + 1)}


def test_whitespace_words_are_str_split():
    _, offsets = word_hashes(TEXTS + [None])
    assert np.diff(offsets).tolist() == [len(t.split()) for t in TEXTS] + [0]


def test_words_tokens_split_punctuation_and_json_escapes():
    hashes, offsets = word_hashes(['{"path": "/a/b.py", "text": "x\\ny"}'], "words")
    expected, _ = word_hashes(["path a b py text x y"], "words")
    assert hashes.tolist() == expected.tolist()


def _replace_and_split(text: str) -> list[str]:
    """The `words` tokens by their definition: lowercase, each JSON escape (leftmost, before a
    lone backslash) and each separator replaced by a space, split."""
    lowered = re.sub("|".join(re.escape(e) for e in shingles._JSON_ESCAPES), " ", text.lower())
    separators = shingles._WHITESPACE + shingles._PUNCTUATION
    return re.sub("[" + re.escape("".join(separators)) + "]", " ", lowered).split(" ")


def test_words_tokens_are_replace_and_split_on_random_texts():
    # escapes next to lone backslashes, every separator, letters, digits and non-ASCII
    pieces = [*shingles._JSON_ESCAPES, "\\", "\\\\n", *shingles._WHITESPACE,
              *shingles._PUNCTUATION, "ab", "Q", "7", "é", "Ω", "x1y2z3", " "]
    rng = np.random.default_rng(3)
    texts = ["".join(rng.choice(pieces, size=int(rng.integers(0, 40)))) for _ in range(3000)]
    hashes, offsets = word_hashes(texts, "words", mask_ids=True)
    words = [[w for w in _replace_and_split(t) if w] for t in texts]
    expected, expected_offsets = word_hashes([" ".join(w) for w in words], "words",
                                             mask_ids=True)
    assert np.diff(offsets).tolist() == [len(w) for w in words]
    assert hashes.tolist() == expected.tolist()
    assert offsets.tolist() == expected_offsets.tolist()


def test_word_hashes_are_polars_hashes_masked_where_id_like_says():
    # the compiled split hands polars the very strings, and masks what volatile.id_like masks
    # (characters, not bytes: "éé1abc" is an id, "éé1a" (6 bytes) and "éééé" are not)
    words = ["éé1abc", "éé1a", "éééé", "abcde9", "abcd9", "x\u2003", "ωωωωω1", "a" * 13,
             "b" * 12, "0123456789abcdef", "日本語1文字"]
    text = " ".join(words)
    hashes, _ = word_hashes([text], "whitespace", mask_ids=True)
    split = pl.Series(text.lower().split())
    expected = pl.select(pl.when(id_like(pl.lit(split))).then(
        pl.lit(shingles._ID_PLACEHOLDER, dtype=pl.UInt64)).otherwise(
        pl.lit(split).hash(seed=shingles._WORD_HASH_SEED))).to_series()
    assert hashes.tolist() == expected.to_list()
    assert int(np.count_nonzero(hashes == shingles._ID_PLACEHOLDER)) == 5


def test_identifier_masking_only_touches_long_words_with_digits():
    a, _ = word_hashes(["root@4c2a9f1e8b3d:/app# ls 42"], "words", mask_ids=True)
    b, _ = word_hashes(["root@9f00aa11bb22:/app# ls 42"], "words", mask_ids=True)
    c, _ = word_hashes(["root@9f00aa11bb22:/app# ls 43"], "words", mask_ids=True)
    unmasked, _ = word_hashes(["root@4c2a9f1e8b3d:/app# ls 42"], "words")
    assert a.tolist() == b.tolist()  # container ids differ, prompt is the same
    assert a.tolist() != c.tolist()  # a short number keeps its value
    assert a.tolist() != unmasked.tolist()


@pytest.mark.parametrize("tokens", ["whitespace", "words"])
def test_a_text_that_lowercases_to_ascii_splits_as_that_ascii_text(tokens):
    """A text whose source is not ASCII but whose lowercase is (the Kelvin sign lowercases to
    `k`) is split by the decoding scan, on the text pool's flag: the same words, hashes and
    identifiers as the ASCII text itself gives."""
    source = ["\u212a1234567 ab\\nc,\u212aelvin 42", "plain k1234567"]
    ascii_texts = [t.replace("\u212a", "k") for t in source]
    assert word_hashes(source, tokens, mask_ids=True)[0].tolist() == word_hashes(
        ascii_texts, tokens, mask_ids=True)[0].tolist()
    assert word_hashes(source, tokens)[0].tolist() == word_hashes(ascii_texts, tokens)[0].tolist()


@pytest.mark.parametrize("n", [1, 3, 5])
def test_shingle_sets_match_the_definition(n):
    shingled = shingle(TEXTS, ShingleConfig(ngram=n))
    text, hashes = unique_per_text(shingled)
    for i, t in enumerate(TEXTS):
        expected = python_shingles(t, n)
        assert int(np.count_nonzero(text == i)) == len(expected)
        # the shingle of a text that is exactly one n-gram is that n-gram inside longer texts
        for gram in expected:
            one = shingle([gram], ShingleConfig(ngram=n)).hashes
            assert one[0] in set(hashes[text == i].tolist())


def test_short_text_shingle_differs_from_full_ngram():
    short = shingle(["a b c d"], ShingleConfig(ngram=5)).hashes
    full = shingle(["a b c d e"], ShingleConfig(ngram=5)).hashes
    assert len(short) == len(full) == 1 and short[0] != full[0]


def test_signatures_equal_datasketch_with_the_same_hash_function():
    shingled = shingle(TEXTS)
    ours = signatures(shingled)

    def hashfunc(data: bytes) -> int:
        return int(input_hash32(shingle([data.decode()]).hashes)[0])

    for text, row in zip(TEXTS, ours, strict=True):
        reference = datasketch.MinHash(num_perm=128, seed=1, hashfunc=hashfunc)
        reference.update_batch([g.encode() for g in python_shingles(text, 5)])
        assert np.array_equal(reference.hashvalues, row)


@pytest.mark.parametrize(("num_perm", "seed"), [(128, 1), (64, 7), (256, 42), (1, 0)])
def test_permutations_are_datasketchs(num_perm: int, seed: int):
    """The parameters drawn here are those of datasketch's affine32 MinHash, to the bit."""
    a, b = permutations(MinHashConfig(num_perm=num_perm, seed=seed))
    reference = datasketch.MinHash(num_perm=num_perm, seed=seed, scheme="affine32").permutations
    assert a.dtype == b.dtype == np.uint32
    assert np.array_equal(a, reference[0]) and np.array_equal(b, reference[1])


def test_signature_roundtrip_and_estimate():
    words = [f"w{i}" for i in range(400)]
    a = " ".join(words[:300])
    b = " ".join(words[60:360])  # 236 of 356 shingles shared: Jaccard 0.663
    sig = signatures(shingle([a, b]))
    back = signatures_from_arrow(signature_array(sig), 128)
    assert np.array_equal(back, sig)
    exact = len(python_shingles(a, 5) & python_shingles(b, 5)) / len(
        python_shingles(a, 5) | python_shingles(b, 5))
    assert abs(estimate_jaccard(sig[0], sig[1]) - exact) < 0.12
    assert to_datasketch(sig[0]).jaccard(to_datasketch(sig[1])) == estimate_jaccard(sig[0], sig[1])


def test_signature_bytes_roundtrip():
    """The staged form (one little-endian binary value a row) gives the matrix back: whole,
    sliced (an offset into the buffer), in several chunks, and empty."""
    sig = np.random.default_rng(3).integers(0, 2**32, size=(7, 128), dtype=np.uint32)
    column = signature_bytes(sig)
    assert column.type == pa.binary(512) and column[1].as_py() == sig[1].astype("<u4").tobytes()
    assert np.array_equal(signatures_from_bytes(column, 128), sig)
    assert np.array_equal(signatures_from_bytes(column.slice(2, 4), 128), sig[2:6])
    chunked = pa.chunked_array([column.slice(0, 3), column.slice(3)])
    assert np.array_equal(signatures_from_bytes(chunked, 128), sig)
    assert signatures_from_bytes(column.slice(7), 128).shape == (0, 128)
    with pytest.raises(ValueError):
        signatures_from_bytes(column, 64)


def test_empty_text_has_the_empty_signature():
    sig = signatures(shingle(["", "a b c d e"]), MinHashConfig())
    assert (sig[0] == 0xFFFFFFFF).all() and not (sig[1] == 0xFFFFFFFF).all()


def test_lsh_s_curve():
    lsh = LshConfig()
    assert (lsh.bands, lsh.rows) == (16, 8)
    assert lsh.candidate_probability(0.8) == pytest.approx(0.947, abs=1e-3)
    assert lsh.candidate_probability(0.5) == pytest.approx(0.061, abs=1e-3)
    assert str(lsh) == "16b_8r_t0.8"


def python_signature(hashes: list[int]) -> list[int]:
    """datasketch's affine32 MinHash (128 permutations, seed 1) of these 64-bit shingle
    hashes, in plain Python."""
    a, b = (x.tolist() for x in permutations(MinHashConfig()))
    row = [0xFFFFFFFF] * len(a)
    for value in hashes:
        h = value >> 32
        h = ((h ^ (h >> 16)) * 0x85EBCA6B) & 0xFFFFFFFF
        h = ((h ^ (h >> 13)) * 0xC2B2AE35) & 0xFFFFFFFF
        h ^= h >> 16
        row = [min(r, (ap * h + bp) & 0xFFFFFFFF) for r, ap, bp in zip(row, a, b, strict=True)]
    return row


def test_signature_kernel_matches_plain_python_for_every_count_and_split():
    # 0..11 shingles a text (the kernel takes four at a time, then the rest one by one)
    rng = np.random.default_rng(3)
    lengths = np.arange(12).repeat(2)
    offsets = np.r_[0, np.cumsum(lengths)]
    hashes = rng.integers(0, 2**64, int(offsets[-1]), dtype=np.uint64)
    first = rng.random(len(hashes)) < 0.6
    texts = [hashes[offsets[t]:offsets[t + 1]] for t in range(len(lengths))]
    flags = [first[offsets[t]:offsets[t + 1]] for t in range(len(lengths))]
    shingled = Shingled(hashes, offsets)
    assert signatures(shingled).tolist() == [python_signature(h.tolist()) for h in texts]
    kept, other = split_signatures(shingled, first)
    pairs = list(zip(texts, flags, strict=True))
    assert kept.tolist() == [python_signature(h[f].tolist()) for h, f in pairs]
    assert other.tolist() == [python_signature(h[~f].tolist()) for h, f in pairs]


@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000])
def test_sorted_distinct_is_np_unique(n):
    rng = np.random.default_rng(n)
    hashes = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
    hashes = np.concatenate([hashes, hashes[: n // 3], np.full(n % 3, 2**64 - 1, np.uint64)])
    got = shingles.sorted_distinct(hashes)
    want = np.unique(hashes)
    assert got.dtype == want.dtype and np.array_equal(got, want)
