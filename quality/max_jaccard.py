"""jaccard_max_prev for large observations: the MinHash estimate of the best Jaccard with an
earlier observation of the same trajectory.

short_pairs.sql computes the exact value when both observations are small (at most
`exact_max` shingles) and jaccard_prev is always exact; this covers the remaining pairs, those
two or more turns apart where either observation is large, from the 128-value signatures
(standard error sqrt(J (1 - J) / 128): 0.019 at J = 0.95). A numba loop over each
trajectory's pairs: no T x T x 128 temporaries (a numpy version compared row blocks, 256 x T x
128 bytes at a time, at 3x the CPU); the estimate is the share of equal values, exactly as
numpy's mean of the comparison gives it (a count over the number of values).
"""

from __future__ import annotations

import numba
import numpy as np


def long_max_jaccard(trajectory: np.ndarray, size: np.ndarray, signatures: np.ndarray,
                     exact_max: int) -> np.ndarray:
    """Per turn row: best estimated Jaccard with an observation two or more turns earlier in
    the same trajectory, over pairs where either has more than `exact_max` shingles; NaN if
    there is no such pair. Rows are grouped by trajectory, in turn order."""
    n = len(trajectory)
    starts = np.flatnonzero(np.r_[True, trajectory[1:] != trajectory[:-1]]) if n else []
    return _best(np.r_[np.asarray(starts, np.int64), n].astype(np.int64),
                 np.ascontiguousarray(size, np.int64), np.ascontiguousarray(signatures),
                 int(exact_max))


@numba.njit(cache=True)
def _best(bounds, size, sig, exact_max):
    """`long_max_jaccard` over the trajectories that start at `bounds[:-1]`; only those of 3+
    turns with a large observation have such pairs."""
    best = np.full(len(size), np.nan)
    k = sig.shape[1]
    for s in range(len(bounds) - 1):
        lo, hi = bounds[s], bounds[s + 1]
        if hi - lo < 3 or not np.any(size[lo:hi] > exact_max):
            continue
        for i in range(lo + 2, hi):
            if size[i] == 0:
                continue
            large = size[i] > exact_max
            top = -1.0
            for j in range(lo, i - 1):
                if size[j] == 0 or not (large or size[j] > exact_max):
                    continue
                equal = 0
                for c in range(k):
                    equal += sig[i, c] == sig[j, c]
                top = max(top, equal / k)
            if top >= 0:
                best[i] = top
    return best
