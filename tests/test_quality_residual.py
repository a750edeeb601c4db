"""The residual signatures (quality/residual.py) are those of MinHashing each set whole."""

from __future__ import annotations

import numpy as np
import pytest

from quality import residual as residual_module
from quality.minhash import MinHashConfig, signatures
from quality.residual import observation_signatures, residual_shingles
from quality.shingles import Shingled, shingle_words


def _by_definition(words: np.ndarray, offsets: np.ndarray, n: int, ngram: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Signatures of each observation's shingles and of the shingles of its words left once
    those of its own action are taken out; the share taken out."""
    observation_sig, residual_sig, share = [], [], []
    config = MinHashConfig()
    for row in range(n):
        action = set(words[offsets[row]:offsets[row + 1]].tolist())
        own = words[offsets[n + row]:offsets[n + row + 1]]
        left = np.array([w for w in own.tolist() if w not in action], dtype=np.uint64)
        for sigs, text in ((observation_sig, own), (residual_sig, left)):
            sigs.append(signatures(shingle_words(text, np.array([0, len(text)]), ngram),
                                   config)[0])
        share.append((len(own) - len(left)) / len(own) if len(own) else np.nan)
    return np.array(observation_sig), np.array(residual_sig), np.array(share)


@pytest.mark.parametrize("ngram", [1, 3, 5])
def test_residual_signatures_equal_minhash_of_the_whole_sets(ngram):
    rng = np.random.default_rng(ngram)
    n = 400
    # texts of 0 to 30 words from a small vocabulary: actions share words with their
    # observation, observations lose none, some, most or all of their words
    lengths = rng.integers(0, 30, size=2 * n)
    lengths[n:n + 20] = rng.integers(0, ngram + 1, size=20)  # short observations
    vocabulary = rng.integers(0, 2**63, size=40, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    words = vocabulary[rng.integers(0, 40, size=int(lengths.sum()))]
    offsets = np.r_[0, np.cumsum(lengths)]
    split = int(offsets[n])
    observation = shingle_words(words[split:], offsets[n:] - split, ngram)
    residual = residual_shingles(words, offsets, n, observation, ngram)
    got_observation, got_residual = observation_signatures(observation, residual,
                                                           MinHashConfig())
    expected_observation, expected_residual, share = _by_definition(words, offsets, n, ngram)
    assert np.array_equal(got_observation, expected_observation)
    assert np.array_equal(got_residual, expected_residual)
    assert np.array_equal(residual.share, share, equal_nan=True)
    # the cases are there: observations that lose some words, all, none
    assert 0 < np.count_nonzero(share == 1) and 0 < np.count_nonzero((share > 0) & (share < 1))
    assert 0 < np.count_nonzero(share == 0)


def test_shingled_keep_keeps_each_texts_flagged_hashes():
    shingled = Shingled(np.arange(6, dtype=np.uint64), np.array([0, 2, 2, 6]))
    kept = shingled.keep(np.array([True, False, True, True, False, True]))
    assert kept.hashes.tolist() == [0, 2, 3, 5] and kept.offsets.tolist() == [0, 1, 1, 4]


def test_taken_is_each_observation_word_in_its_own_action():
    """The compiled membership test against a plain one: per observation word, whether its
    turn's action has it (never another turn's), and the running count; empty actions and
    observations, actions past the smallest table's 8 words, a hash equal to another turn's."""
    rng = np.random.default_rng(3)
    n = 300
    lengths = rng.integers(0, 40, size=2 * n)
    lengths[:10] = 0  # actions without words
    lengths[n + 10:n + 20] = 0  # observations without words
    vocabulary = rng.integers(0, 2**64, size=60, dtype=np.uint64)
    words = vocabulary[rng.integers(0, 60, size=int(lengths.sum()))]
    offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    in_action, taken_before = residual_module._taken(words, offsets, n)
    expected = [w in set(words[offsets[r]:offsets[r + 1]].tolist())
                for r in range(n) for w in words[offsets[n + r]:offsets[n + r + 1]].tolist()]
    assert in_action.tolist() == expected
    assert taken_before.tolist() == np.r_[0, np.cumsum(expected)].tolist()
    assert 0 < sum(expected) < len(expected)
