"""jaccard_max_prev (quality/max_jaccard.py) against its definitions in plain Python."""

from __future__ import annotations

import numpy as np

from quality.max_jaccard import long_max_jaccard, short_max_jaccard


def test_long_max_jaccard_is_the_best_share_of_equal_values_two_turns_back():
    rng = np.random.default_rng(3)
    trajectory = np.repeat(np.arange(6), [1, 2, 3, 7, 12, 5]).astype(np.int64)
    n = len(trajectory)
    size = rng.choice([0, 5, 64, 65, 300], size=n).astype(np.int64)
    size[trajectory == 5] = 10  # a trajectory without a large observation: no estimate
    signatures = rng.integers(0, 3, size=(n, 16)).astype(np.uint32)
    expected = []
    for i in range(n):
        shares = [float(np.mean(signatures[i] == signatures[j])) for j in range(i - 1)
                  if trajectory[j] == trajectory[i] and size[i] and size[j]
                  and (size[i] > 64 or size[j] > 64) and trajectory[i] != 5]
        expected.append(max(shares) if shares else None)
    got = long_max_jaccard(trajectory, size, signatures, 64)
    assert [None if np.isnan(v) else float(v) for v in got] == expected
    assert sum(v is not None for v in expected) >= 5


def test_short_max_jaccard_is_the_exact_best_over_small_earlier_observations():
    rng = np.random.default_rng(5)
    trajectory = np.repeat(np.arange(5), [1, 4, 9, 15, 6]).astype(np.int64)
    n = len(trajectory)
    sets = [set(rng.choice(12, size=rng.choice([0, 2, 5, 9]), replace=False).tolist())
            for _ in range(n)]
    size = np.array([len(s) for s in sets], np.int64)
    pairs = [(r, h) for r in range(n) for h in sorted(sets[r])]
    # shingles numbered within each trajectory (the numbers recur in the next trajectory, as
    # observation_sets.shingle_counts numbers them): here the shingle itself
    got = short_max_jaccard(trajectory, np.array([r for r, _ in pairs]),
                            np.array([h for _, h in pairs]), size, 7)
    expected = []
    for r in range(n):
        shares = [len(sets[r] & sets[e]) / len(sets[r] | sets[e]) for e in range(r)
                  if trajectory[e] == trajectory[r] and 0 < size[e] <= 7 and 0 < size[r] <= 7
                  and sets[r] & sets[e]]
        expected.append(max(shares) if shares else None)
    assert [None if np.isnan(v) else float(v) for v in got] == expected
    assert sum(v is not None for v in expected) >= 5
