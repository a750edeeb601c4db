"""long_max_jaccard (quality/max_jaccard.py) against its definition in plain Python."""

from __future__ import annotations

import numpy as np

from quality.max_jaccard import long_max_jaccard


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
