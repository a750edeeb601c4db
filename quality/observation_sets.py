"""Set features of every observation: which of its shingles and words the trajectory has shown
before, in this turn's action, in the previous observation.

For one batch of whole trajectories (rows in trajectory order, turns in order), every text
gets an index: the action of batch row r is text 2r, its observation 2r + 1, so text order is
trajectory order. Each trajectory's texts are walked in that order through a hash table of its
(trajectory, hash) identities: 43 bits of the hash mixed with the trajectory number (and, for
words, a flag bit, see `word_counts`). Per identity the table keeps the first text that had it
and the last two, which say, for an observation, whether the trajectory had it before, whether
the turn's action (index - 1) or the previous observation (index - 2) had it; a hash twice in
one text counts once. Counting those per observation gives the features (quality/tables.py).
Two different shingles of one trajectory share an identity with probability about n^2 / 2^44
(6e-6 for a 10,000-shingle trajectory), which would move one count by one.

These are numba loops (LLVM-compiled, integer-exact) rather than a DuckDB window because of the
size: at a million turns of GUI trajectories there are some 400 million occurrences. The
table of one trajectory fits in cache, where a sort of the batch's packed 64-bit keys (the
previous implementation, same identities and counts) cost 7 times the CPU (7.6 against 1.0 s
for 148k turns), and a `PARTITION BY traj, h ORDER BY pos` over 10x more than the sort. The
per-turn features on top of these counts stay SQL (turn_features.sql).
"""

from __future__ import annotations

import numpy as np

from quality.hash_slots import empty_table, first_slot, table_bits
from quality.kernel_cache import cached_njit

TEXT_BITS = 20  # identities: a hash's bits above these (where packed keys kept a text index)
_IDENT = np.uint64(((1 << 63) - 1) & ~((1 << TEXT_BITS) - 1))
_MIX = np.uint64(0x9E3779B97F4A7C15)  # (trajectory number x this) ^ hash: the identity
_FLAG = np.uint64(1 << 63)
_NONE = -9  # "no such occurrence"
_KEY, _FIRST, _LAST, _BEFORE_LAST = 0, 1, 2, 3  # `_walk`'s state of an identity
_SHINGLE_COUNTS = ("obs_shingles", "in_action", "in_context", "novel", "in_prev_obs")
_WORD_COUNTS = ("new_words", "new_words_from_action", "own_words")


def shingle_counts(hashes: np.ndarray, offsets: np.ndarray, row_trajectory: np.ndarray
                   ) -> dict[str, np.ndarray]:
    """Per batch row: obs_shingles, in_action, in_context, novel, in_prev_obs; and the rows and
    (trajectory, shingle) identities of all observation occurrences, in row order, the
    identities numbered from 0 within each trajectory (for max_jaccard.short_max_jaccard).
    `hashes`/`offsets`: the n actions' texts, then the n observations'."""
    counts, pair_rows, pair_groups = _walk(hashes, offsets, np.zeros(0, np.bool_),
                                           row_trajectory, False, 0)
    out = dict(zip(_SHINGLE_COUNTS, counts, strict=True))
    out["pair_rows"] = pair_rows
    out["pair_shingles"] = pair_groups
    return out


def word_counts(hashes: np.ndarray, offsets: np.ndarray, row_trajectory: np.ndarray,
                common: np.ndarray, chrome_min_observations: int) -> dict[str, np.ndarray]:
    """Per batch row: new_words, new_words_from_action, own_words (quality/tables.py).

    Chrome is a word in `common` (the partition's common words, see `common_words`; a flag
    bit of its identity) or on at least half of its trajectory's observations (toolbars,
    prompts, headers), the latter counted only in trajectories of `chrome_min_observations`+
    turns."""
    flagged = np.zeros(0, np.bool_)
    if len(common) and len(hashes):
        flagged = common_flags(np.ascontiguousarray(hashes, np.uint64),
                               np.asarray(common, np.uint64))
    counts, _, _ = _walk(hashes, offsets, flagged, row_trajectory, True,
                         chrome_min_observations)
    return dict(zip(_WORD_COUNTS, counts[:3], strict=True))


def common_flags(hashes: np.ndarray, common: np.ndarray) -> np.ndarray:
    """Per hash, whether it is one of `common` (a few hundred words, which make some 70 % of
    the words of generated agent text): a linear probe of a table of them small enough to
    stay in L1 (polars' `is_in` took 1.5x the time, 0.30 against 0.20 CPU s for the 148k
    corpus' 32M words). Slot value 0 is the empty slot, so a common hash 0 is kept apart."""
    bits = table_bits(2 * len(common))  # (at most a quarter full: short probes)
    table = np.zeros(1 << bits, np.uint64)
    _fill(table, bits, common)
    return _probe(hashes, table, bits, bool(np.any(common == 0)))


@cached_njit
def _fill(table, bits, keys):
    """The nonzero keys into `table` (2^bits slots, 0: empty), each once."""
    wrap = np.uint64(len(table) - 1)
    for key in keys:
        if key == 0:
            continue
        slot = np.uint64(first_slot(key, bits))
        while table[slot] != 0 and table[slot] != key:
            slot = (slot + np.uint64(1)) & wrap
        table[slot] = key


@cached_njit
def _probe(hashes, table, bits, zero):
    """Per hash, whether `table` (`_fill`) holds it; a hash 0 is held if `zero`."""
    out = np.empty(len(hashes), np.bool_)
    wrap = np.uint64(len(table) - 1)
    # (unsigned positions and slots: numba checks a signed index for a negative value)
    for i in range(np.uint64(len(hashes))):
        key = hashes[i]
        slot = np.uint64(first_slot(key, bits))
        while table[slot] != key and table[slot] != 0:
            slot = (slot + np.uint64(1)) & wrap
        out[i] = table[slot] == key if key != 0 else zero
    return out


def sampled_texts(n: int, min_texts: int = 50, sample: int = 4096) -> np.ndarray:
    """The texts `common_words` counts, of n: an evenly spaced sample of at most `sample`
    (indices, sorted); none when there are fewer than `min_texts` to tell common words from
    repeated ones. A caller may tokenise only these (`common_words` of them alone picks them
    all: the spacing of n' <= sample texts is every text)."""
    if n < min_texts:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, num=min(n, sample)).astype(np.int64))


def common_words(hashes: np.ndarray, offsets: np.ndarray, min_share: float,
                 min_texts: int = 50, sample: int = 4096) -> np.ndarray:
    """Words on at least `min_share` of the texts (of `sampled_texts`) that have words, sorted;
    none when there are fewer than `min_texts` texts."""
    picked = sampled_texts(len(offsets) - 1, min_texts, sample)
    counts = np.diff(offsets)[picked]
    if not len(picked) or counts.sum() == 0:
        return np.zeros(0, dtype=np.uint64)
    need = min_share * np.count_nonzero(counts)
    words, texts_with = _frequent(np.ascontiguousarray(hashes, np.uint64),
                                  np.asarray(offsets, np.int64), picked, need)
    return np.sort(words[texts_with >= need])


@cached_njit
def _walk(hashes, offsets, flagged, row_trajectory, words, chrome_min):
    """Both kinds of counts (`words` picks which), trajectory by trajectory: counts[5, n], and
    for shingles the row and identity of every observation occurrence, in row order (the
    identity as a number from 0 within its trajectory)."""
    n = len(offsets) // 2
    starts = [0]
    for r in range(1, n):
        if row_trajectory[r] != row_trajectory[r - 1]:
            starts.append(r)
    if n:  # (no rows: no trajectory, and no row_trajectory[0] to read its number from)
        starts.append(n)
    counts = np.zeros((5, n), np.int64)
    n_obs = offsets[2 * n] - offsets[n] if not words else 0
    pair_rows = np.empty(n_obs, np.int64)
    pair_groups = np.empty(n_obs, np.int64)
    n_pairs = 0
    largest = 0
    for s in range(len(starts) - 1):
        size = (offsets[starts[s + 1]] - offsets[starts[s]]
                + offsets[n + starts[s + 1]] - offsets[n + starts[s]])
        largest = max(largest, size)
    table, _ = empty_table(largest)
    # per identity, side by side (one cache line for a probe's reads): its key (as int64),
    # its first text, its last two texts
    state = np.empty((largest, 4), np.int64)
    group_slot = np.empty(largest, np.int64)
    observations = np.zeros(largest, np.int64)
    occurrence_group = np.empty(largest, np.int64)
    occurrence_row = np.empty(largest, np.int64)
    has_flags = len(flagged) > 0
    for s in range(len(starts) - 1):
        lo, hi = starts[s], starts[s + 1]
        mix = np.uint64(row_trajectory[lo]) * _MIX
        # the trajectory's own table size: its slots stay in cache, where probes spread over
        # the largest trajectory's table missed it
        bits = table_bits(offsets[hi] - offsets[lo] + offsets[n + hi] - offsets[n + lo])
        wrap = np.uint64((1 << bits) - 1)
        groups = 0
        n_occ = 0
        for r in range(lo, hi):
            for side in range(2):
                k = r + side * n
                t = 2 * r + side
                # the text's counts in locals, stored once after it (a store to counts per
                # occurrence kept them in memory: numba cannot tell counts from the tables)
                c0 = c1 = c2 = c3 = c4 = 0
                # (unsigned positions and slots: numba checks a signed index for a negative
                # value on every read)
                for j in range(np.uint64(offsets[k]), np.uint64(offsets[k + 1])):
                    key = (hashes[j] ^ mix) & _IDENT
                    if has_flags and flagged[j]:
                        key |= _FLAG
                    slot = np.uint64(first_slot(key, bits))
                    while True:
                        g = table[slot]
                        if g < 0 or state[g, _KEY] == np.int64(key):
                            break
                        slot = (slot + np.uint64(1)) & wrap
                    if g < 0:
                        g = groups
                        groups += 1
                        table[slot] = g
                        state[g, _KEY] = np.int64(key)
                        group_slot[g] = slot
                        observations[g] = 0
                        f, p, p2 = t, _NONE, _NONE
                    elif state[g, _LAST] == t:
                        continue  # twice in one text: once
                    else:
                        f, p, p2 = state[g, _FIRST], state[g, _LAST], state[g, _BEFORE_LAST]
                    if p == _NONE:
                        state[g, _FIRST] = t
                    state[g, _BEFORE_LAST] = p
                    state[g, _LAST] = t
                    if side == 0:
                        continue
                    if words:
                        c0 += f >= t - 1
                        c1 += f == t - 1
                        observations[g] += 1
                        if p != t - 1:  # own_words, unless chrome (known at the end)
                            occurrence_group[n_occ] = g
                            occurrence_row[n_occ] = r
                            n_occ += 1
                    else:
                        c0 += 1
                        c1 += p == t - 1
                        c2 += f < t - 1
                        c3 += f == t
                        c4 += (p == t - 2) or (p == t - 1 and p2 == t - 2)
                        pair_rows[n_pairs] = r
                        pair_groups[n_pairs] = g
                        n_pairs += 1
                if side == 1:
                    counts[0, r] = c0
                    counts[1, r] = c1
                    counts[2, r] = c2
                    counts[3, r] = c3
                    counts[4, r] = c4
        turns = hi - lo
        for i in range(n_occ):
            g = occurrence_group[i]
            chrome = ((np.uint64(state[g, _KEY]) & _FLAG) != 0) or (
                turns >= chrome_min and 2 * observations[g] >= turns)
            if not chrome:
                counts[2, occurrence_row[i]] += 1
        for g in range(groups):
            table[group_slot[g]] = -1
    return counts, pair_rows[:n_pairs], pair_groups[:n_pairs]


_BUCKET_BITS = 18  # counters of `_frequent`'s first pass (1 MB: in cache, unlike a table of
# every distinct word of 4,096 observations, up to a million, whose misses cost more than a sort)


@cached_njit
def _frequent(hashes, offsets, picked, need):
    """Each hash that may be in `need` or more of the picked texts (every one that is, and
    some that are not), and in how many of them it is (twice in one text counts once).

    Two passes: occurrences counted per bucket of the hash (a word's texts are at most its
    occurrences, at most its bucket's count), then an exact count of the hashes in the
    buckets that reach `need`: the few common words and what shares their buckets."""
    buckets = np.zeros(1 << _BUCKET_BITS, np.uint32)
    for k in range(len(picked)):
        for j in range(offsets[picked[k]], offsets[picked[k] + 1]):
            buckets[first_slot(hashes[j], _BUCKET_BITS)] += 1
    return _texts_with(hashes, offsets, picked, buckets >= need)


@cached_njit
def _texts_with(hashes, offsets, picked, wanted):
    """Each distinct hash of the picked texts whose bucket (`first_slot`, _BUCKET_BITS) is
    `wanted`, in order of first sight, and in how many of the texts it is: an
    open-addressing table of the full 64-bit hashes (quality/hash_slots.py), doubled when
    half full (here, between calls of the counting loop: arrays reassigned inside a loop
    cost numba a reference count update per pass, 5x the loop's time)."""
    table, bits = empty_table(1 << 12)
    keys = np.empty(len(table) // 2, np.uint64)
    texts = np.empty(len(table) // 2, np.int64)
    last = np.empty(len(table) // 2, np.int64)  # the last text that had it
    n, k, j = _count_texts(hashes, offsets, picked, wanted, table, bits, keys, texts, last,
                           0, 0, offsets[picked[0]] if len(picked) else 0)
    while k < len(picked):  # stopped at a new hash, the table half full
        table, bits = _doubled(table, bits, keys, n)
        keys = _grown(keys, len(table) // 2)
        texts = _grown(texts, len(table) // 2)
        last = _grown(last, len(table) // 2)
        n, k, j = _count_texts(hashes, offsets, picked, wanted, table, bits, keys, texts,
                               last, n, k, j)
    return keys[:n], texts[:n]


@cached_njit
def _count_texts(hashes, offsets, picked, wanted, table, bits, keys, texts, last, n, k, j):
    """`_texts_with`'s count from word j of picked text k on; returns the entries, and where
    it stopped: (n, len(picked), _) at the end, else before a new hash that would fill the
    table past half."""
    while k < len(picked):
        while j < offsets[picked[k] + 1]:
            key = hashes[j]
            if wanted[first_slot(key, _BUCKET_BITS)]:
                slot = first_slot(key, bits)
                while table[slot] >= 0 and keys[table[slot]] != key:
                    slot = (slot + 1) & (len(table) - 1)
                g = table[slot]
                if g < 0:
                    if 2 * (n + 1) > len(table):
                        return n, k, j
                    g = n
                    n += 1
                    table[slot] = g
                    keys[g] = key
                    texts[g] = 0
                    last[g] = -1
                if last[g] != k:
                    last[g] = k
                    texts[g] += 1
            j += 1
        k += 1
        if k < len(picked):
            j = offsets[picked[k]]
    return n, k, j


@cached_njit
def _doubled(table, bits, keys, n):
    """A table of twice the slots holding entries 0..n-1 (their keys in `keys`)."""
    bigger, more = empty_table(len(table))
    for g in range(n):
        slot = first_slot(keys[g], more)
        while bigger[slot] >= 0:
            slot = (slot + 1) & (len(bigger) - 1)
        bigger[slot] = g
    return bigger, more


@cached_njit
def _grown(values, size):
    """`values` copied into an array of `size` entries (the rest unset)."""
    out = np.empty(size, values.dtype)
    out[:len(values)] = values
    return out
