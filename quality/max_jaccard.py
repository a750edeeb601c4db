"""jaccard_max_prev for large observations: the MinHash estimate of the best Jaccard with an
earlier observation of the same trajectory.

short_pairs.sql computes the exact value when both observations are small (at most
`exact_max` shingles) and jaccard_prev is always exact; this covers the remaining pairs, those
two or more turns apart where either observation is large, from the 128-value signatures
(standard error sqrt(J (1 - J) / 128): 0.019 at J = 0.95). A trajectory's pairs are compared in
row blocks so that a 5,000-turn trajectory needs (256 x 5,000 x 128) bytes at a time, not T^2.
"""

from __future__ import annotations

import numpy as np

_BLOCK = 256


def long_max_jaccard(trajectory: np.ndarray, size: np.ndarray, signatures: np.ndarray,
                     exact_max: int) -> np.ndarray:
    """Per turn row: best estimated Jaccard with an observation two or more turns earlier in
    the same trajectory, over pairs where either has more than `exact_max` shingles; NaN if
    there is no such pair. Rows are grouped by trajectory, in turn order."""
    n = len(trajectory)
    best = np.full(n, np.nan)
    starts = np.flatnonzero(np.r_[True, trajectory[1:] != trajectory[:-1]])
    ends = np.r_[starts[1:], n]
    for lo, hi in zip(starts, ends, strict=True):
        if hi - lo >= 3 and np.any(size[lo:hi] > exact_max):
            best[lo:hi] = _pairwise_best(signatures[lo:hi], size[lo:hi], exact_max)
    return best


def _pairwise_best(sig: np.ndarray, size: np.ndarray, exact_max: int) -> np.ndarray:
    t = len(sig)
    best = np.full(t, np.nan)
    nonempty = size > 0
    large = size > exact_max
    later = np.arange(t)
    for lo in range(0, t, _BLOCK):
        hi = min(lo + _BLOCK, t)
        estimate = (sig[lo:hi, None, :] == sig[None, :, :]).mean(axis=2)
        usable = ((later[None, :] <= later[lo:hi, None] - 2)
                  & (large[lo:hi, None] | large[None, :]) & nonempty[None, :])
        top = np.where(usable, estimate, -1.0).max(axis=1)
        best[lo:hi] = np.where((top >= 0) & nonempty[lo:hi], top, np.nan)
    return best
