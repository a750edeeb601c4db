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

import numba
import numpy as np
import polars as pl

from quality.hash_slots import empty_table, first_slot

TEXT_BITS = 20  # identities: a hash's bits above these (where packed keys kept a text index)
_IDENT = np.uint64(((1 << 63) - 1) & ~((1 << TEXT_BITS) - 1))
_MIX = np.uint64(0x9E3779B97F4A7C15)  # (trajectory number x this) ^ hash: the identity
_FLAG = np.uint64(1 << 63)
_NONE = -9  # "no such occurrence"
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
        flagged = pl.Series(hashes).is_in(pl.Series(common).implode()).to_numpy()
    counts, _, _ = _walk(hashes, offsets, flagged, row_trajectory, True,
                         chrome_min_observations)
    return dict(zip(_WORD_COUNTS, counts[:3], strict=True))


def common_words(hashes: np.ndarray, offsets: np.ndarray, min_share: float,
                 min_texts: int = 50, sample: int = 4096) -> np.ndarray:
    """Words on at least `min_share` of the texts (of an evenly spaced sample of at most
    `sample` of them); none when there are fewer than `min_texts` texts to tell common words
    from repeated ones."""
    n = len(offsets) - 1
    if n < min_texts:
        return np.zeros(0, dtype=np.uint64)
    picked = np.unique(np.linspace(0, n - 1, num=min(n, sample)).astype(np.int64))
    counts = np.diff(offsets)[picked]
    if not len(picked) or counts.sum() == 0:
        return np.zeros(0, dtype=np.uint64)
    # each picked text's distinct words (small sorts in one numba loop: 4,096 np.unique calls
    # cost 1.7x the CPU), then in how many texts each one is; sorted output
    distinct = _distinct_per_text(hashes, np.asarray(offsets, np.int64), picked)
    words, texts_with = np.unique(distinct, return_counts=True)
    return words[texts_with >= min_share * np.count_nonzero(counts)]


@numba.njit(cache=True)
def _walk(hashes, offsets, flagged, row_trajectory, words, chrome_min):
    """Both kinds of counts (`words` picks which), trajectory by trajectory: counts[5, n], and
    for shingles the row and identity of every observation occurrence, in row order (the
    identity as a number from 0 within its trajectory)."""
    n = len(offsets) // 2
    starts = [0]
    for r in range(1, n):
        if row_trajectory[r] != row_trajectory[r - 1]:
            starts.append(r)
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
    table, bits = empty_table(largest)
    capacity = len(table)
    group_key = np.empty(largest, np.uint64)
    group_slot = np.empty(largest, np.int64)
    first = np.empty(largest, np.int64)
    last = np.empty(largest, np.int64)
    before_last = np.empty(largest, np.int64)
    observations = np.zeros(largest, np.int64)
    occurrence_group = np.empty(largest, np.int64)
    occurrence_row = np.empty(largest, np.int64)
    has_flags = len(flagged) > 0
    for s in range(len(starts) - 1):
        lo, hi = starts[s], starts[s + 1]
        mix = np.uint64(row_trajectory[lo]) * _MIX
        groups = 0
        n_occ = 0
        for r in range(lo, hi):
            for side in range(2):
                k = r + side * n
                t = 2 * r + side
                for j in range(offsets[k], offsets[k + 1]):
                    key = (hashes[j] ^ mix) & _IDENT
                    if has_flags and flagged[j]:
                        key |= _FLAG
                    slot = first_slot(key, bits)
                    while True:
                        g = table[slot]
                        if g < 0 or group_key[g] == key:
                            break
                        slot = (slot + 1) & (capacity - 1)
                    if g < 0:
                        g = groups
                        groups += 1
                        table[slot] = g
                        group_key[g] = key
                        group_slot[g] = slot
                        observations[g] = 0
                        f, p, p2 = t, _NONE, _NONE
                    elif last[g] == t:
                        continue  # twice in one text: once
                    else:
                        f, p, p2 = first[g], last[g], before_last[g]
                    if p == _NONE:
                        first[g] = t
                    before_last[g] = p
                    last[g] = t
                    if side == 0:
                        continue
                    if words:
                        counts[0, r] += f >= t - 1
                        counts[1, r] += f == t - 1
                        observations[g] += 1
                        if p != t - 1:  # own_words, unless chrome (known at the end)
                            occurrence_group[n_occ] = g
                            occurrence_row[n_occ] = r
                            n_occ += 1
                    else:
                        counts[0, r] += 1
                        counts[1, r] += p == t - 1
                        counts[2, r] += f < t - 1
                        counts[3, r] += f == t
                        counts[4, r] += (p == t - 2) or (p == t - 1 and p2 == t - 2)
                        pair_rows[n_pairs] = r
                        pair_groups[n_pairs] = g
                        n_pairs += 1
        turns = hi - lo
        for i in range(n_occ):
            g = occurrence_group[i]
            chrome = ((group_key[g] & _FLAG) != 0) or (
                turns >= chrome_min and 2 * observations[g] >= turns)
            if not chrome:
                counts[2, occurrence_row[i]] += 1
        for g in range(groups):
            table[group_slot[g]] = -1
    return counts, pair_rows[:n_pairs], pair_groups[:n_pairs]


@numba.njit(cache=True)
def _distinct_per_text(hashes, offsets, picked):
    """The distinct hashes of each picked text, text after text (each sorted)."""
    total = 0
    for k in picked:
        total += offsets[k + 1] - offsets[k]
    out = np.empty(total, hashes.dtype)
    end = 0
    for k in picked:
        words = np.sort(hashes[offsets[k]:offsets[k + 1]])
        for i in range(len(words)):
            if i == 0 or words[i] != words[i - 1]:
                out[end] = words[i]
                end += 1
    return out[:end]
