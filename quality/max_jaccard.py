"""jaccard_max_prev: the best Jaccard of an observation with an earlier one of its trajectory.

`short_max_jaccard` is the exact value over pairs of small observations (at most `exact_max`
shingles): only pairs that share a shingle, found through each shingle's chain of earlier
small observations (what a self-join on (trajectory, shingle) finds, at about a third of
DuckDB's CPU). `long_max_jaccard` covers the remaining pairs, those two or more turns apart where
either observation is large (jaccard_prev is always exact), from the 128-value MinHash
signatures (standard error sqrt(J (1 - J) / 128): 0.019 at J = 0.95): a numba loop over each
trajectory's pairs, with no T x T x 128 temporaries (numpy row blocks, 256 x T x 128 bytes at
a time, took over 10x the CPU); the estimate is the share of equal values, exactly as numpy's mean
of the comparison gives it (a count over the number of values).
"""

from __future__ import annotations

import numpy as np

from quality.kernel_cache import cached_njit


def short_max_jaccard(trajectory: np.ndarray, pair_rows: np.ndarray, pair_shingles: np.ndarray,
                      size: np.ndarray, exact_max: int) -> np.ndarray:
    """Per row: the exact best Jaccard with an earlier observation of its trajectory when both
    have 1 to `exact_max` distinct shingles (`size`), NaN if no such pair shares a shingle.
    `pair_rows`, `pair_shingles`: every (row, shingle) of the observations, in row order, the
    shingles numbered within each trajectory (observation_sets.shingle_counts); rows are
    grouped by `trajectory`, in turn order."""
    return _short_best(np.ascontiguousarray(trajectory, np.int64),
                       np.ascontiguousarray(pair_rows, np.int64),
                       np.ascontiguousarray(pair_shingles, np.int64),
                       np.ascontiguousarray(size, np.int64), int(exact_max))


@cached_njit
def _short_best(trajectory, pair_rows, pair_shingles, size, exact_max):
    n, m = len(size), len(pair_rows)
    best = np.full(n, np.nan)
    shingles = pair_shingles.max() + 1 if m else 0
    latest = np.full(shingles, -1, np.int64)  # a shingle's latest small occurrence
    chain = np.full(m, -1, np.int64)  # an occurrence's previous small one of its shingle
    shared = np.zeros(n, np.int64)
    touched = np.empty(n, np.int64)
    opened = 0  # first occurrence of the current trajectory's rows
    a = 0
    while a < m:
        r = pair_rows[a]
        b = a
        while b < m and pair_rows[b] == r:
            b += 1
        if trajectory[r] != trajectory[pair_rows[opened]]:  # numbers restart: forget them
            for o in range(opened, a):
                latest[pair_shingles[o]] = -1
            opened = a
        if size[r] <= exact_max:
            k = 0
            for o in range(a, b):
                e = latest[pair_shingles[o]]
                while e >= 0:
                    row = pair_rows[e]
                    if shared[row] == 0:
                        touched[k] = row
                        k += 1
                    shared[row] += 1
                    e = chain[e]
            top = -1.0
            for i in range(k):
                row = touched[i]
                top = max(top, shared[row] / (size[r] + size[row] - shared[row]))
                shared[row] = 0
            if k:
                best[r] = top
            for o in range(a, b):
                chain[o] = latest[pair_shingles[o]]
                latest[pair_shingles[o]] = o
        a = b
    return best


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


@cached_njit
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
