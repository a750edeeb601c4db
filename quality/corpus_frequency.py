"""corpus_frequency: in how many distinct trajectories of a partition a near-identical
observation occurs (its own trajectory included), by MinHash LSH with verification.

Each observation's signature is cut into bands; observations that agree on a whole band share
that band's bucket. Bucket size alone overcounts when many observations share a large frame
(every screen of one Android app repeats the same toolbar and status bar lines): a band whose
minima all fall inside the frame is shared by a fixed fraction of that app's screens whatever
their content, so in every bucket each member is checked against the bucket's first member (in
the partition's order) with the whole signature (estimated Jaccard >= `min_jaccard`) before it
counts. An observation's frequency is the largest number of distinct trajectories among the
verified members of its buckets (1 when it matches nothing).

The signatures are read in windows of rows, in the partition's order (`Windows`: from the
staged files, quality/signature_windows.py), never held whole: a domain of 2.39M turns has 1.2
GB of them. Three numba steps, with a few integers a turn in memory:

1. keys: each row's band keys (a 64-bit hash of the band's values) in one read;
2. buckets, a band at a time: each row's bucket as its first member's position (-1 alone in
   its bucket), written over the band's keys;
3. verification: the rows that are first of a bucket with other members, their signatures
   held `chunk_rows` at a time (one read per chunk, from the chunk's first row on), each
   member compared with its bucket's first; then per band the distinct trajectories of the
   verified members.

Memory: 8 bytes a turn per band (keys, then buckets), 26 more (trajectory, frequency, verified
bits, counts), one band's tables while it is bucketed, one window and one chunk of signatures:
measured on 4 synthetic shards, +343 / +468 / +665 MB at 0.3M / 1.2M / 2.4M turns (about 150
bytes a turn), against +601 / +1,626 / +2,856 MB with the (turns x 128) matrix read whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from quality.hash_slots import empty_table, first_slot
from quality.kernel_cache import cached_njit
from quality.minhash import LshConfig

_BAND_MULTIPLIERS = np.random.default_rng(20250101).integers(
    1, 2**63, size=64, dtype=np.uint64) | np.uint64(1)
NO_SHINGLES = np.uint32(0xFFFFFFFF)  # every minimum of an empty set's signature
CHUNK_BYTES = 64 << 20  # the first rows' signatures held at once during verification

# Windows(start) yields (position, block): the (rows, num_perm) uint32 signatures of the
# partition's rows from `position` on, in order, from row `start` (a window may begin earlier).
Windows = Callable[[int], Iterator[tuple[int, np.ndarray]]]


def band_keys(block: np.ndarray) -> np.ndarray:
    """One 64-bit key per row of a (rows, r) uint32 band: equal rows, equal keys (the keys
    `_window_keys` computes)."""
    key = np.zeros(len(block), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(block.shape[1]):
            key = (key ^ block[:, j].astype(np.uint64)) * _BAND_MULTIPLIERS[j]
    return key


def corpus_frequency(windows: Windows, rows: int, trajectory: np.ndarray, lsh: LshConfig,
                     num_perm: int, chunk_rows: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Frequency per row of the partition (0 where it has no shingles: no signature to
    compare), and which rows have shingles. `trajectory`: each row's trajectory number."""
    trajectory = np.ascontiguousarray(trajectory, np.int64)
    keys, has_shingles = _keys(windows, rows, lsh)
    best = has_shingles.astype(np.int64)
    if int(has_shingles.sum()) < 2:
        return best, has_shingles
    present = np.flatnonzero(has_shingles)
    for band in range(lsh.bands):  # keys[band] becomes the band's first positions
        _band_firsts(keys[band], present, keys[band].view(np.int64))
    firsts = keys.view(np.int64)
    verified = _verify(windows, firsts, float(lsh.threshold), num_perm,
                       chunk_rows or max(1, CHUNK_BYTES // (4 * num_perm)))
    count = np.zeros(rows, np.int64)
    span = np.int64(trajectory.max()) + 1
    for band in range(lsh.bands):
        _band_counts(firsts[band], verified, np.uint8(1 << band), trajectory, span, count, best)
    return best, has_shingles


def _keys(windows: Windows, rows: int, lsh: LshConfig) -> tuple[np.ndarray, np.ndarray]:
    """Every row's band keys (bands, rows) and whether it has shingles, in one read."""
    keys = np.empty((lsh.bands, rows), np.uint64)
    has_shingles = np.zeros(rows, np.bool_)
    for start, block in windows(0):
        _window_keys(block, start, lsh.rows, _BAND_MULTIPLIERS, keys, has_shingles)
    return keys, has_shingles


def _verify(windows: Windows, firsts: np.ndarray, threshold: float, num_perm: int,
            chunk_rows: int) -> np.ndarray:
    """Bit b of each row: verified against its bucket's first row in band b."""
    verified = np.zeros(firsts.shape[1], np.uint8)
    leading = np.flatnonzero(_leading_rows(firsts))
    for lo in range(0, len(leading), chunk_rows):
        chunk = leading[lo:lo + chunk_rows]
        held = np.empty((len(chunk), num_perm), np.uint32)
        for start, block in windows(int(chunk[0])):
            _verify_window(block, start, firsts, chunk, held, threshold, verified)
    return verified


@cached_njit
def _window_keys(block, start, rows_per_band, multipliers, keys, has_shingles):
    """Band keys (as `band_keys`) and the has-shingles flag of a window's rows."""
    for i in range(block.shape[0]):
        at = start + i
        for c in range(block.shape[1]):
            if block[i, c] != NO_SHINGLES:
                has_shingles[at] = True
                break
        for band in range(keys.shape[0]):
            key = np.uint64(0)
            for j in range(rows_per_band):
                key = (key ^ np.uint64(block[i, band * rows_per_band + j])) * multipliers[j]
            keys[band, at] = key


@cached_njit
def _band_firsts(keys, present, firsts):
    """One band's buckets (rows of `present`, in order, with equal keys): each row's bucket
    as the position of its first member, -1 where the bucket has no other. `firsts` may be
    `keys` itself (each row's key is read before its first is written)."""
    m = len(present)
    table, bits = empty_table(m)
    capacity = len(table)
    bucket_key = np.empty(m, np.uint64)
    first = np.empty(m, np.int64)
    size = np.zeros(m, np.int64)
    bucket = np.empty(m, np.int64)
    buckets = 0
    for i in range(m):
        key = keys[present[i]]
        slot = first_slot(key, bits)
        while table[slot] >= 0 and bucket_key[table[slot]] != key:
            slot = (slot + 1) & (capacity - 1)
        if table[slot] < 0:
            table[slot] = buckets
            bucket_key[buckets] = key
            first[buckets] = present[i]
            buckets += 1
        bucket[i] = table[slot]
        size[bucket[i]] += 1
    firsts[:] = -1
    for i in range(m):
        if size[bucket[i]] >= 2:
            firsts[present[i]] = first[bucket[i]]


@cached_njit
def _leading_rows(firsts):
    """Rows that are the first of a bucket with other members, in any band."""
    leading = np.zeros(firsts.shape[1], np.bool_)
    for band in range(firsts.shape[0]):
        for at in range(firsts.shape[1]):
            if firsts[band, at] == at:
                leading[at] = True
    return leading


@cached_njit
def _verify_window(block, start, firsts, chunk, held, threshold, verified):
    """A window's rows: those of `chunk` (sorted first rows) held, then each row compared
    with its bucket's first where that first is in the chunk (a first precedes its
    members, so it is held by then)."""
    lo, hi = chunk[0], chunk[-1]
    k = block.shape[1]
    for i in range(block.shape[0]):
        at = start + i
        if lo <= at <= hi:
            s = np.searchsorted(chunk, at)
            if chunk[s] == at:
                held[s, :] = block[i, :]
        for band in range(firsts.shape[0]):
            r = firsts[band, at]
            if r < lo or r > hi:
                continue
            s = np.searchsorted(chunk, r)
            equal = 0
            for c in range(k):
                equal += block[i, c] == held[s, c]
            if equal / k >= threshold:
                verified[at] |= np.uint8(1 << band)


@cached_njit
def _band_counts(firsts, verified, bit, trajectory, span, count, best):
    """One band: the distinct trajectories of each bucket's verified members (`count`, at
    the bucket's first position; zero again on return), and `best` raised to it for each
    verified member (to 1 for the others)."""
    members = 0
    for at in range(len(firsts)):
        members += firsts[at] >= 0
    seen, bits = empty_table(members)
    capacity = len(seen)
    for at in range(len(firsts)):
        r = firsts[at]
        if r < 0 or not verified[at] & bit:
            continue
        pair = r * span + trajectory[at]
        slot = first_slot(pair, bits)
        while seen[slot] >= 0 and seen[slot] != pair:
            slot = (slot + 1) & (capacity - 1)
        if seen[slot] < 0:
            seen[slot] = pair
            count[r] += 1
    for at in range(len(firsts)):
        r = firsts[at]
        if r >= 0:
            frequency = count[r] if verified[at] & bit else 1
            best[at] = max(best[at], frequency)
    for at in range(len(firsts)):
        if firsts[at] >= 0:
            count[firsts[at]] = 0
