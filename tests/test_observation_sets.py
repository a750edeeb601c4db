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
