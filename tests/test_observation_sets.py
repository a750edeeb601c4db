"""The set counts (quality/observation_sets.py) against their definitions, spelt out in plain
Python over random batches: a small vocabulary (so words repeat within a text, in the turn's
action, in earlier observations), trajectories of 1 to 12 turns, common words flagged."""

from __future__ import annotations

import numpy as np
import pytest

from quality import observation_sets


def _reference(hashes, offsets, traj, common, chrome_min):
    """Per row the eight counts, from each trajectory's sets of action and observation words."""
    n = len(traj)
    text = [set(hashes[offsets[k]:offsets[k + 1]].tolist()) for k in range(2 * n)]
    out = {name: [0] * n for name in ("obs_shingles", "in_action", "in_context", "novel",
                                      "in_prev_obs", "new_words", "new_words_from_action",
                                      "own_words")}
    pairs = []
    for r in range(n):
        rows = [q for q in range(n) if traj[q] == traj[r]]
        before = [q for q in rows if q < r]
        action, obs = text[r], text[n + r]
        shown = set().union(*(text[q] | text[n + q] for q in before)) if before else set()
        previous = text[n + before[-1]] if before else set()
        for h in obs:
            out["obs_shingles"][r] += 1
            out["in_action"][r] += h in action
            out["in_context"][r] += h in shown
            out["novel"][r] += h not in shown and h not in action
            out["in_prev_obs"][r] += h in previous
            out["new_words"][r] += h not in shown
            out["new_words_from_action"][r] += h not in shown and h in action
            observations = sum(h in text[n + q] for q in rows)
            chrome = h in common or (len(rows) >= chrome_min and 2 * observations >= len(rows))
            out["own_words"][r] += h not in action and not chrome
            pairs.append((r, h))
    return out, pairs


@pytest.mark.parametrize("seed", range(6))
def test_set_counts_follow_their_definitions(seed):
    rng = np.random.default_rng(seed)
    traj = np.repeat(np.arange(8), rng.integers(1, 13, size=8)).astype(np.int64)
    n = len(traj)
    offsets = np.r_[0, np.cumsum(rng.integers(0, 9, size=2 * n))].astype(np.int64)
    # vocabulary hashes differ in their top bits, as identities (43 of them) must
    vocab = rng.integers(1, 2**20, size=25, dtype=np.uint64) << np.uint64(40)
    hashes = vocab[rng.integers(0, len(vocab), size=int(offsets[-1]))]
    common = np.sort(vocab[:3])
    expected, pairs = _reference(hashes, offsets, traj, set(common.tolist()), 5)
    got = observation_sets.shingle_counts(hashes, offsets, traj)
    got.update(observation_sets.word_counts(hashes, offsets, traj, common, 5))
    for name, values in expected.items():
        assert got[name].tolist() == values, name
    assert any(expected["own_words"]) and any(expected["in_prev_obs"])  # cases that count
    # pairs: each observation's distinct shingles, numbered within the trajectory, in row order
    assert got["pair_rows"].tolist() == sorted(r for r, _ in pairs)
    number = {}
    for r, k in zip(got["pair_rows"].tolist(), got["pair_shingles"].tolist(), strict=True):
        number.setdefault((int(traj[r]), k), set()).add(r)
    assert sorted(sorted(rows) for rows in number.values()) == sorted(
        sorted({r for r, h in pairs if traj[r] == t and h == g})
        for t, g in {(int(traj[r]), h) for r, h in pairs})

def test_no_turns_no_counts():
    empty = np.zeros(0, np.uint64)
    got = observation_sets.shingle_counts(empty, np.zeros(1, np.int64), np.zeros(0, np.int64))
    got.update(observation_sets.word_counts(empty, np.zeros(1, np.int64),
                                            np.zeros(0, np.int64), empty, 5))
    assert all(len(values) == 0 for values in got.values())


@pytest.mark.parametrize(("n_texts", "vocabulary"), [(0, 10), (1, 10), (300, 50), (3000, 60_000)])
def test_texts_with_counts_each_hash_once_per_text(n_texts, vocabulary):
    """The compiled table of common_words against a plain count over the picked texts: every
    distinct hash once, in how many texts it is; a vocabulary past the first table's 4,096
    entries makes it double (several times), hash 0 and the top hash included."""
    rng = np.random.default_rng(n_texts)
    offsets = np.r_[0, np.cumsum(rng.integers(0, 40, size=n_texts))].astype(np.int64)
    words = rng.integers(0, vocabulary, size=int(offsets[-1])).astype(np.uint64)
    hashes = np.where(words == 1, np.uint64(2**64 - 1), words * np.uint64(0x9E3779B97F4A7C15))
    picked = np.arange(0, n_texts, 2, dtype=np.int64)
    every = np.ones(1 << observation_sets._BUCKET_BITS, np.bool_)
    keys, texts = observation_sets._texts_with(hashes, offsets, picked, every)
    expected = _texts_of(hashes, offsets, picked)
    assert dict(zip(keys.tolist(), texts.tolist(), strict=True)) == expected
    assert len(keys) == len(expected)


@pytest.mark.parametrize("need", [0.5, 3, 40, 10_000])
def test_frequent_keeps_every_hash_in_enough_texts(need):
    """`_frequent`'s bucket pass drops no hash that is in `need` or more texts (Zipf words,
    each in many texts or few), and its counts are exact."""
    rng = np.random.default_rng(7)
    offsets = np.r_[0, np.cumsum(rng.integers(0, 60, size=2000))].astype(np.int64)
    hashes = rng.zipf(1.3, size=int(offsets[-1])).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    picked = np.arange(0, 2000, 3, dtype=np.int64)
    keys, texts = observation_sets._frequent(hashes, offsets, picked, need)
    expected = _texts_of(hashes, offsets, picked)
    got = dict(zip(keys.tolist(), texts.tolist(), strict=True))
    assert all(expected[h] == c for h, c in got.items())
    assert {h for h, c in expected.items() if c >= need} <= set(got)
    assert len(got) < len(expected) or need < 1


def _texts_of(hashes, offsets, picked):
    """Per distinct hash of the picked texts, in how many of them it is."""
    expected: dict[int, int] = {}
    for k in picked:
        for h in set(hashes[offsets[k]:offsets[k + 1]].tolist()):
            expected[h] = expected.get(h, 0) + 1
    return expected


@pytest.mark.parametrize("n_common", [0, 1, 7, 300])
def test_common_flags_are_membership(n_common):
    """common_flags against Python's `in` over a set, hash 0 and near-full tables included."""
    rng = np.random.default_rng(n_common)
    vocabulary = rng.integers(0, 2**64, size=1000, dtype=np.uint64)
    vocabulary[:2] = [0, 2**64 - 1]
    common = rng.choice(vocabulary, size=n_common, replace=False) if n_common else vocabulary[:0]
    hashes = rng.choice(vocabulary, size=5000)
    wanted = set(common.tolist())
    expected = np.array([h in wanted for h in hashes.tolist()], dtype=bool)
    assert np.array_equal(observation_sets.common_flags(hashes, common), expected)
    if n_common:
        with_zero = np.r_[common, np.uint64(0)]
        assert observation_sets.common_flags(np.zeros(3, np.uint64), with_zero).all()
