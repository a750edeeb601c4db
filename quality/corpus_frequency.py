"""corpus_frequency: in how many distinct trajectories of a partition a near-identical
observation occurs (its own trajectory included), by MinHash LSH with verification.

Each observation's signature is cut into bands; observations that agree on a whole band share
that band's bucket. Bucket size alone overcounts when many observations share a large frame
(every screen of one Android app repeats the same toolbar and status bar lines): a band whose
minima all fall inside the frame is shared by a fixed fraction of that app's screens whatever
their content, so in every bucket each member is checked against the bucket's first member with
the whole signature (estimated Jaccard >= `min_jaccard`) before it counts. An observation's
frequency is the largest number of distinct trajectories among the verified members of its
buckets (1 when it matches nothing). Everything is numpy over the partition's signature matrix
(128 uint32 a turn: 73 MB for 143k turns).
"""

from __future__ import annotations

import numpy as np

from quality.minhash import LshConfig

_BAND_MULTIPLIERS = np.random.default_rng(20250101).integers(
    1, 2**63, size=64, dtype=np.uint64) | np.uint64(1)
_CHUNK = 65536  # rows compared at once: 65536 x 128 bools = 8 MB


def band_keys(block: np.ndarray) -> np.ndarray:
    """One 64-bit key per row of a (rows, r) uint32 band: equal rows, equal keys."""
    key = np.zeros(len(block), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(block.shape[1]):
            key = (key ^ block[:, j].astype(np.uint64)) * _BAND_MULTIPLIERS[j]
    return key


def corpus_frequency(signatures: np.ndarray, trajectory: np.ndarray, has_shingles: np.ndarray,
                     lsh: LshConfig) -> np.ndarray:
    """Frequency per observation (0 where `has_shingles` is false: no signature to compare)."""
    best = np.where(has_shingles, 1, 0).astype(np.int64)
    rows = np.flatnonzero(has_shingles)
    if len(rows) < 2:
        return best
    for band in range(lsh.bands):
        block = signatures[rows, band * lsh.rows:(band + 1) * lsh.rows]
        keys = band_keys(block)
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        sizes = np.diff(np.r_[starts, len(order)])
        group = np.repeat(np.arange(len(starts)), sizes)
        shared = sizes[group] > 1
        members = rows[order][shared]
        if len(members) == 0:
            continue
        group = group[shared]
        representative = rows[order[starts]][group]
        verified = _similar(signatures, members, representative, lsh.threshold)
        count = _distinct_per_group(group[verified], trajectory[members[verified]],
                                    len(starts))
        frequency = np.where(verified, count[group], 1)
        best[members] = np.maximum(best[members], frequency)
    return best


def _similar(signatures: np.ndarray, a: np.ndarray, b: np.ndarray, threshold: float
             ) -> np.ndarray:
    """Estimated Jaccard(a[i], b[i]) >= threshold, chunked to bound memory."""
    out = np.empty(len(a), dtype=bool)
    for lo in range(0, len(a), _CHUNK):
        hi = lo + _CHUNK
        out[lo:hi] = (signatures[a[lo:hi]] == signatures[b[lo:hi]]).mean(axis=1) >= threshold
    return out


def _distinct_per_group(group: np.ndarray, trajectory: np.ndarray, n_groups: int
                        ) -> np.ndarray:
    """Number of distinct trajectories in each group."""
    if len(group) == 0:
        return np.zeros(n_groups, dtype=np.int64)
    pairs = np.unique(group.astype(np.int64) * (int(trajectory.max()) + 1) + trajectory)
    return np.bincount(pairs // (int(trajectory.max()) + 1), minlength=n_groups)
