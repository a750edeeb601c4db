"""Set features of every observation: which of its shingles and words the trajectory has shown
before, in this turn's action, in the previous observation.

For one batch of whole trajectories (rows in trajectory order, turns in order), every text
gets an index: the action of batch row r is text 2r, its observation 2r + 1, so text order is
trajectory order. Each occurrence of a hash becomes one 64-bit key: a flag bit (see
`word_counts`), 43 bits that identify (trajectory, hash), and 20 bits of text index. Sorting
the keys lines up all occurrences of a hash in a trajectory, in text order: the first says
where it was first seen, the one or two before an observation's say whether the turn's
action (index - 1) or the previous observation (index - 2) had it. Counting those flags per
observation gives the features (quality/tables.py). Two trajectories whose identities
collide in 43 bits sit in separate runs (their text indices do not overlap) and are split
apart; two different shingles of one trajectory collide with probability about n^2 / 2^44
(6e-6 for a 10,000-shingle trajectory), which would move one count by one.

This is a plain numpy sort of integers rather than a DuckDB window because of its size: at a
million turns of GUI trajectories there are some 400 million occurrences, and sorting packed
keys measured over 10x faster here than `PARTITION BY traj, h ORDER BY pos` over the same rows.
The per-turn features on top of these counts stay SQL (turn_features.sql), and so does the exact
Jaccard of small observation pairs (short_pairs.sql).
"""

from __future__ import annotations

import numpy as np
import polars as pl

TEXT_BITS = 20  # text indices: 2 x 524,288 turns a batch at most
MAX_BATCH_ROWS = 1 << (TEXT_BITS - 1)
_TEXT_MASK = np.uint64((1 << TEXT_BITS) - 1)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_NONE = np.int64(-9)  # "no such occurrence"
_FLAG = np.uint64(1 << 63)


def occurrence_keys(hashes: np.ndarray, offsets: np.ndarray, text_trajectory: np.ndarray,
                    text_index: np.ndarray, flagged: np.ndarray | None = None) -> np.ndarray:
    """Sorted keys of every distinct (trajectory, hash, text) occurrence. `flagged` (a set of
    hashes) sets the top bit of their keys: a property of the hash that survives the sort."""
    if len(text_index) and int(text_index.max()) >= 1 << TEXT_BITS:
        raise ValueError(f"a batch holds at most {MAX_BATCH_ROWS} turns")
    counts = np.diff(offsets)
    with np.errstate(over="ignore"):
        ident = hashes ^ (np.repeat(text_trajectory.astype(np.uint64), counts) * _MIX)
    keys = (ident & ~_TEXT_MASK & ~_FLAG) | np.repeat(text_index.astype(np.uint64), counts)
    if flagged is not None and len(flagged):
        keys[pl.Series(hashes).is_in(pl.Series(flagged).implode()).to_numpy()] |= _FLAG
    keys.sort()
    if len(keys):
        keys = keys[np.r_[True, keys[1:] != keys[:-1]]]  # a hash twice in one text counts once
    return keys


def _context(keys: np.ndarray, row_trajectory: np.ndarray) -> tuple[np.ndarray, ...]:
    """For every observation's key (an odd text index): its position among the keys, its text
    index, and the text indices of the first, previous and second-previous occurrence of its
    (trajectory, hash) (_NONE where there is none). Only the observations' keys are read out,
    by their positions (one `flatnonzero`, then plain gathers): the actions' keys are context,
    never counted."""
    text = (keys & _TEXT_MASK).view(np.int64)  # (below 2^20: the same value as int64)
    at = np.flatnonzero(text & 1)
    t = text[at]
    if len(text) == 0:
        return at, t, t, t, t
    ident = keys >> np.uint64(TEXT_BITS)
    trajectory = row_trajectory[text >> 1]
    new_group = np.empty(len(keys), dtype=bool)
    new_group[0] = True
    np.not_equal(ident[1:], ident[:-1], out=new_group[1:])
    new_group[1:] |= trajectory[1:] != trajectory[:-1]
    first = text[np.flatnonzero(new_group)[np.cumsum(new_group)[at] - 1]]
    # (a key at position 0 opens its group, so `same1` is false there, and `same2` at 0 and 1:
    # what `take` wraps around to for positions -1 and -2 is never used)
    same1 = ~new_group[at]
    previous = np.where(same1, text.take(at - 1, mode="wrap"), _NONE)
    same2 = same1 & ~new_group.take(at - 1, mode="wrap")
    previous2 = np.where(same2, text.take(at - 2, mode="wrap"), _NONE)
    return at, t, first, previous, previous2


def shingle_counts(keys: np.ndarray, row_trajectory: np.ndarray) -> dict[str, np.ndarray]:
    """Per batch row: obs_shingles, in_action, in_context, novel, in_prev_obs; and the rows and
    (trajectory, shingle) identities of all observation occurrences (for short_pairs.sql)."""
    n_rows = len(row_trajectory)
    at, t, first, previous, previous2 = _context(keys, row_trajectory)
    row = t >> 1
    flags = {
        "in_action": previous == t - 1,
        "in_context": first < t - 1,
        "novel": first == t,
        "in_prev_obs": (previous == t - 2) | ((previous == t - 1) & (previous2 == t - 2)),
    }
    out = {"obs_shingles": np.bincount(row, minlength=n_rows)}
    out.update({name: np.bincount(row[flag], minlength=n_rows) for name, flag in flags.items()})
    out["pair_rows"] = row
    out["pair_hashes"] = keys[at] >> np.uint64(TEXT_BITS)
    return out


def common_words(hashes: np.ndarray, offsets: np.ndarray, min_share: float,
                 min_texts: int = 50, sample: int = 4096) -> np.ndarray:
    """Words on at least `min_share` of the texts (of an evenly spaced sample of at most
    `sample` of them); none when there are fewer than `min_texts` texts to tell common words
    from repeated ones."""
    n = len(offsets) - 1
    if n < min_texts:
        return np.zeros(0, dtype=np.uint64)
    picked = np.unique(np.linspace(0, n - 1, num=min(n, sample)).astype(np.int64)) if n else []
    counts = np.diff(offsets)[picked]
    if not len(picked) or counts.sum() == 0:
        return np.zeros(0, dtype=np.uint64)
    # each picked text's distinct words (small sorts), then in how many texts each one is:
    # half the CPU of a polars unique + group_by over (text, word) pairs; sorted output
    distinct = np.concatenate([np.unique(hashes[offsets[k]:offsets[k + 1]]) for k in picked])
    words, texts_with = np.unique(distinct, return_counts=True)
    return words[texts_with >= min_share * np.count_nonzero(counts)]


def word_counts(keys: np.ndarray, row_trajectory: np.ndarray, chrome_min_observations: int
                ) -> dict[str, np.ndarray]:
    """Per batch row: new_words, new_words_from_action, own_words (quality/tables.py).

    Chrome is a word flagged as common in the partition (see `common_words`; keys built with
    `flagged`) or on at least half of its trajectory's observations (toolbars, prompts,
    headers), the latter counted only in trajectories of `chrome_min_observations`+ turns."""
    n_rows = len(row_trajectory)
    common = (keys & _FLAG) != 0
    keys = keys & ~_FLAG
    at, t, first, previous, _ = _context(keys, row_trajectory)
    common = common[at]
    row = t >> 1
    out = {"new_words": np.bincount(row[first >= t - 1], minlength=n_rows),
           "new_words_from_action": np.bincount(row[first == t - 1], minlength=n_rows)}
    # occurrences of one (trajectory, word) are adjacent: number the runs, count observations
    trajectory = row_trajectory[row]
    ident = keys[at] >> np.uint64(TEXT_BITS)
    run = np.cumsum(np.r_[True, (ident[1:] != ident[:-1])
                          | (trajectory[1:] != trajectory[:-1])][:len(ident)]) - 1
    observations_with_word = np.bincount(run)[run]
    turns = np.bincount(row_trajectory)[trajectory]
    chrome = common | ((turns >= chrome_min_observations)
                       & (2 * observations_with_word >= turns))
    out["own_words"] = np.bincount(row[(previous != t - 1) & ~chrome], minlength=n_rows)
    return out
