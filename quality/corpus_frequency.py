"""corpus_frequency: in how many distinct trajectories of a partition a near-identical
observation occurs (its own trajectory included), by MinHash LSH with verification.

Each observation's signature is cut into bands; observations that agree on a whole band share
that band's bucket. Bucket size alone overcounts when many observations share a large frame
(every screen of one Android app repeats the same toolbar and status bar lines): a band whose
minima all fall inside the frame is shared by a fixed fraction of that app's screens whatever
their content, so in every bucket each member is checked against the bucket's first member with
the whole signature (estimated Jaccard >= `min_jaccard`) before it counts. An observation's
frequency is the largest number of distinct trajectories among the verified members of its
buckets (1 when it matches nothing). One numba loop a band over the partition's signature
matrix (128 uint32 a turn: 73 MB for 143k turns).
"""

from __future__ import annotations

import numba
import numpy as np

from quality.hash_slots import empty_table, first_slot
from quality.minhash import LshConfig

_BAND_MULTIPLIERS = np.random.default_rng(20250101).integers(
    1, 2**63, size=64, dtype=np.uint64) | np.uint64(1)


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
    signatures = np.ascontiguousarray(signatures)
    trajectory = np.ascontiguousarray(trajectory, np.int64)
    for band in range(lsh.bands):
        _band_frequency(signatures, rows, trajectory, band * lsh.rows, (band + 1) * lsh.rows,
                        float(lsh.threshold), _BAND_MULTIPLIERS, best)
    return best


@numba.njit(cache=True)
def _band_frequency(signatures, rows, trajectory, lo, hi, threshold, multipliers, best):
    """One band's buckets (rows with equal `band_keys` of columns lo:hi), their members
    verified against the bucket's first row, and `best` raised to each verified member's
    number of distinct trajectories among the verified (1 for the unverified). A numba loop
    with hash tables: the numpy version (a stable argsort of the keys, gathers of the
    compared signatures, a np.unique of (bucket, trajectory)) took 2 to 3x the CPU."""
    m = len(rows)
    table, bits = empty_table(m)
    capacity = len(table)
    keys = np.empty(m, np.uint64)
    bucket = np.empty(m, np.int64)
    first = np.empty(m, np.int64)
    size = np.zeros(m, np.int64)
    buckets = 0
    for i in range(m):
        key = np.uint64(0)
        for j in range(hi - lo):
            key = (key ^ np.uint64(signatures[rows[i], lo + j])) * multipliers[j]
        slot = first_slot(key, bits)
        while table[slot] >= 0 and keys[first[table[slot]]] != key:
            slot = (slot + 1) & (capacity - 1)
        if table[slot] < 0:
            table[slot] = buckets
            first[buckets] = i
            buckets += 1
        keys[i] = key
        bucket[i] = table[slot]
        size[bucket[i]] += 1
    # distinct (bucket, trajectory) pairs of the verified members: a second table
    span = np.int64(trajectory.max()) + 1
    seen, _ = empty_table(m)
    count = np.zeros(buckets, np.int64)
    verified = np.zeros(m, np.bool_)
    k = signatures.shape[1]
    for i in range(m):
        b = bucket[i]
        if size[b] < 2:
            continue
        a, r = rows[i], rows[first[b]]
        equal = 0
        for c in range(k):
            equal += signatures[a, c] == signatures[r, c]
        if equal / k < threshold:
            continue
        verified[i] = True
        pair = b * span + trajectory[a]
        slot = first_slot(pair, bits)
        while seen[slot] >= 0 and seen[slot] != pair:
            slot = (slot + 1) & (capacity - 1)
        if seen[slot] < 0:
            seen[slot] = pair
            count[b] += 1
    for i in range(m):
        b = bucket[i]
        if size[b] >= 2:
            frequency = count[b] if verified[i] else 1
            best[rows[i]] = max(best[rows[i]], frequency)
