"""The observation without its action's words, and the MinHash signatures of both.

`template_frequency` compares an observation across the corpus once the words of its own action
are taken out (a canned page that quotes the URL it was asked for). Its *residual shingles* are
the word n-grams of what is left. Most of them are n-grams of the observation itself (on the
generated corpus 19.1M of 19.7M): only the n-grams that bridge a gap where words were taken
out, and the one shingle of a residual shorter than n words, are new. So the residual is not
MinHashed again: a signature is an elementwise minimum, and over a union of shingle sets it is
the minimum of the parts' signatures. The observation's shingles are split into those whose
window holds no word of the action (kept, K) and the others (T):

    signature(observation) = min(sig K, sig T)     signature(residual) = min(sig K, sig B)

with B the bridging n-grams, bit for bit what MinHashing each whole set gives (a residual
n-gram over words that stood next to each other is the observation's n-gram at that place:
the same word hashes, the same shingle hash).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quality.hash_slots import first_slot, table_bits
from quality.kernel_cache import cached_njit
from quality.minhash import MinHashConfig, signatures, split_signatures
from quality.shingles import Shingled, grams_at, per_shingle, shingle_words


@dataclass
class Residual:
    """What the observations keep once their action's words are taken out."""

    share: np.ndarray  # per observation: share of its words taken out (NaN: it has none)
    kept: np.ndarray  # per observation shingle: no word of the action in its window
    bridging: Shingled  # per observation with a word taken out (share > 0): its new n-grams


def residual_shingles(words: np.ndarray, word_offsets: np.ndarray, n: int,
                      observation: Shingled, ngram: int) -> Residual:
    """`words`/`word_offsets`: the word hashes of a batch's n actions, then its n
    observations; `observation`: the observations' shingles (shingle_words of those words)."""
    in_action, taken_before = _taken(np.ascontiguousarray(words, dtype=np.uint64),
                                     np.ascontiguousarray(word_offsets, dtype=np.int64), n)
    split = int(word_offsets[n])
    offsets = word_offsets[n:] - split
    taken = np.diff(taken_before[offsets])
    total = np.diff(offsets)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, taken / np.maximum(total, 1), np.nan)
    return Residual(share, _kept_shingles(observation, offsets, taken_before, ngram),
                    _bridging(words[split:], offsets, in_action, total - taken, share > 0,
                              ngram))


@cached_njit
def _taken(words: np.ndarray, word_offsets: np.ndarray, n: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """Per word of the observations (texts n..2n-1 of `word_offsets`): whether its turn's
    action (text t - n) has it; and how many such words come before each position (and in
    all, at the end). Each action's words go into a small table that the observation
    probes (in cache; a polars `is_in` of every observation word, salted by its turn,
    against all the batch's action words cost 4x the CPU)."""
    split = word_offsets[n]
    in_action = np.zeros(word_offsets[2 * n] - split, dtype=np.bool_)
    taken_before = np.zeros(len(in_action) + 1, dtype=np.int64)
    largest = 1
    for r in range(n):
        largest = max(largest, word_offsets[r + 1] - word_offsets[r])
    keys = np.empty(1 << table_bits(largest), dtype=np.uint64)
    turn_of = np.full(len(keys), -1, dtype=np.int64)  # the turn whose key a slot holds
    taken = 0
    for r in range(n):
        bits = table_bits(word_offsets[r + 1] - word_offsets[r])
        for j in range(word_offsets[r], word_offsets[r + 1]):
            _probe(keys, turn_of, words[j], r, bits, True)
        for j in range(word_offsets[n + r], word_offsets[n + r + 1]):
            if word_offsets[r + 1] > word_offsets[r] and _probe(keys, turn_of, words[j], r,
                                                                bits, False):
                in_action[j - split] = True
                taken += 1
            taken_before[j - split + 1] = taken
    return in_action, taken_before


@cached_njit(inline="always")
def _probe(keys: np.ndarray, turn_of: np.ndarray, key: np.uint64, turn: int, bits: int,
           insert: bool) -> bool:
    """Whether turn `turn`'s part of the table (its first 2^bits slots, slots of other
    turns counting as empty) holds `key`; put it there if `insert`."""
    slot = first_slot(key, bits)
    while turn_of[slot] == turn:
        if keys[slot] == key:
            return True
        slot = (slot + 1) & ((1 << bits) - 1)
    if insert:
        keys[slot] = key
        turn_of[slot] = turn
    return False


def _kept_shingles(observation: Shingled, offsets: np.ndarray, taken_before: np.ndarray,
                   ngram: int) -> np.ndarray:
    """Per shingle: no taken word among its words (an n-gram's n words from its start, or all
    the words of a text shorter than n)."""
    at_start = taken_before[ngram:] == taken_before[:max(len(taken_before) - ngram, 0)]
    lengths = np.diff(offsets)
    short = (lengths > 0) & (lengths < ngram)
    of_short = taken_before[offsets[1:][short]] == taken_before[offsets[:-1][short]]
    kept = per_shingle(offsets, ngram, at_start, of_short)
    if not np.array_equal(kept.offsets, observation.offsets):
        raise ValueError("the observations' shingles are not those of their words")
    return kept.hashes


def _bridging(words: np.ndarray, offsets: np.ndarray, in_action: np.ndarray,
              left: np.ndarray, changed: np.ndarray, ngram: int) -> Shingled:
    """The residual shingles of each changed observation that are none of its own: an n-gram
    whose words did not stand next to each other, or the one shingle of a residual shorter
    than n words. Only those are hashed (`grams_at`), in text order (within a text, a
    MinHash does not depend on the order of its shingles)."""
    kept = ~in_action & np.repeat(changed, np.diff(offsets))
    position = np.flatnonzero(kept)  # each kept word's place among the observations' words
    kept_offsets = np.zeros(int(changed.sum()) + 1, dtype=np.int64)
    np.cumsum(left[changed], out=kept_offsets[1:])
    # full n-grams of the residual whose first and last words were not n - 1 apart
    starts = np.flatnonzero(position[ngram - 1:] - position[:max(len(position) - ngram + 1, 0)]
                            != ngram - 1)
    text = np.searchsorted(kept_offsets, starts, side="right") - 1
    inside = starts + ngram <= kept_offsets[text + 1]  # (not across a text's end)
    starts, text = starts[inside], text[inside]
    full = grams_at(words, position[starts + np.arange(ngram)[:, None]])
    # residuals shorter than n words: their one shingle, as shingle_words makes it
    lengths = np.diff(kept_offsets)
    few = np.flatnonzero((lengths > 0) & (lengths < ngram))
    few_words = position[np.repeat(kept_offsets[few] - np.r_[0, np.cumsum(lengths[few])][:-1],
                                   lengths[few]) + np.arange(int(lengths[few].sum()))]
    one = shingle_words(words[few_words], np.r_[0, np.cumsum(lengths[few])], ngram).hashes
    owner = np.r_[text, few]
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=len(lengths))
    return Shingled(np.r_[full, one][order], np.r_[0, np.cumsum(counts)])


def observation_signatures(observation: Shingled, residual: Residual,
                           config: MinHashConfig) -> tuple[np.ndarray, np.ndarray]:
    """The MinHash signatures of every observation and of its residual (see the docstring)."""
    kept, taken = split_signatures(observation, residual.kept, config)
    observation_sig = np.minimum(kept, taken)
    changed = residual.share > 0  # NaN (no words) and 0: the residual is the observation
    kept[changed] = np.minimum(kept[changed], signatures(residual.bridging, config))
    return observation_sig, kept
