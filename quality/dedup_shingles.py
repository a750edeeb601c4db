"""The shingles deduplication compares: each trajectory's text (task, then each turn's action
and observation) as word n-grams, or as character n-grams when it is short, batch by batch as
the turns stream by (quality/dedup.py MinHashes them, then confirms candidates on the sets).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from quality.batches import rows_of, run_numbers, trajectory_batches
from quality.shingles import (
    Shingled,
    char_shingles,
    laid_out_word_hashes,
    shingle_words,
    sorted_distinct,
    word_hashes,
)

if TYPE_CHECKING:
    from quality.dedup import DedupConfig

WORDS, SHORT = "words", "chars"  # the two kinds of shingles a signature is over


@dataclass
class _Texts:
    """The texts of a batch's trajectories: trajectory k is its task, then the actions and
    observations of rows row_starts[k]:row_starts[k + 1], interleaved."""

    tasks: list[str]
    actions: pa.Array
    observations: pa.Array
    row_starts: np.ndarray

    def joined(self, k: int) -> str:
        """Trajectory k's texts joined with newlines (its character shingles' text)."""
        lo, hi = int(self.row_starts[k]), int(self.row_starts[k + 1])
        texts = [self.tasks[k]]
        for action, observation in zip(self.actions[lo:hi].to_pylist(),
                                       self.observations[lo:hi].to_pylist(), strict=True):
            texts += [action, observation]
        return "\n".join(texts)


def _trajectory_words(batch: pa.Table, tasks: dict[str, str], config: DedupConfig
                      ) -> tuple[list[str], np.ndarray, np.ndarray, _Texts]:
    """Word hashes of each trajectory's text (task, a0, o0, a1, ...), its word offsets, and
    its texts (for the short ones' characters)."""
    run, turn = run_numbers(batch["trajectory_id"])
    n_traj = int(run[-1]) + 1
    starts = np.flatnonzero(turn == 0)
    traj_ids = batch["trajectory_id"].take(pa.array(starts)).to_pylist()
    # Text order: trajectory j's task, then its turns' actions and observations interleaved
    # (laid out so by the tokeniser, from the columns as they are).
    n_turns = np.bincount(run, minlength=n_traj)
    first_text = np.zeros(n_traj, dtype=np.int64)
    np.cumsum(1 + 2 * n_turns[:-1], out=first_text[1:])
    slot_action = first_text[run] + 1 + 2 * turn
    texts = _Texts([tasks.get(t, "") for t in traj_ids], batch["action"].combine_chunks(),
                   batch["observation"].combine_chunks(), np.append(starts, len(run)))
    hashes, text_offsets = laid_out_word_hashes(
        [pa.array(texts.tasks, pa.large_string()), texts.actions, texts.observations],
        [first_text, slot_action, slot_action + 1], n_traj + 2 * len(run),
        config.shingles.tokens)
    traj_offsets = np.append(text_offsets[first_text], text_offsets[-1])
    return traj_ids, hashes, traj_offsets, texts


def _split_short(traj_ids: list[str], words: Shingled, texts: _Texts, config: DedupConfig
                 ) -> Iterator[tuple[list[str], str, Shingled]]:
    """Word shingles of the long trajectories, character shingles of the short ones."""
    short = words.counts() < config.min_shingles
    if not short.any():
        yield traj_ids, WORDS, words
        return
    long_ids = [t for t, s in zip(traj_ids, short, strict=True) if not s]
    if long_ids:
        yield long_ids, WORDS, words.subset(~short)
    joined = [texts.joined(k) for k in np.flatnonzero(short)]
    yield ([traj_ids[k] for k in np.flatnonzero(short)], SHORT,
           char_shingles(joined, config.char_ngram))


def trajectory_shingles(paths: list[Path], tasks: dict[str, str], keep: set[str],
                        config: DedupConfig) -> Iterator[tuple[list[str], str, Shingled]]:
    """Shingles of every wanted trajectory, batch by batch (trajectories without turns last),
    with their kind: word n-grams, or character n-grams for short trajectories."""
    seen: set[str] = set()
    columns = ["trajectory_id", "action", "observation"]
    value_set = pa.array(sorted(keep), pa.string())
    for path in paths:
        for batch in trajectory_batches(path, columns, config.batch_rows, config.batch_bytes):
            batch = rows_of(batch, value_set)
            if batch.num_rows == 0:
                continue
            traj_ids, hashes, offsets, texts = _trajectory_words(batch, tasks, config)
            seen.update(traj_ids)
            words = shingle_words(hashes, offsets, config.shingles.ngram)
            yield from _split_short(traj_ids, words, texts, config)
    turnless = sorted(keep - seen)
    if turnless:
        task_texts = [tasks[t] for t in turnless]
        hashes, offsets = word_hashes(task_texts, config.shingles.tokens)
        words = shingle_words(hashes, offsets, config.shingles.ngram)
        none = pa.array([], pa.large_string())
        texts = _Texts(task_texts, none, none, np.zeros(len(turnless) + 1, np.int64))
        yield from _split_short(turnless, words, texts, config)


def shingle_sets(paths: list[Path], tasks: dict[str, str], involved: set[str],
                 config: DedupConfig) -> Iterator[tuple[str, np.ndarray]]:
    """The distinct shingle hashes (sorted) of each trajectory in `involved`."""
    if not involved:
        return
    for traj_ids, _, shingled in trajectory_shingles(paths, tasks, involved, config):
        for k, tid in enumerate(traj_ids):
            yield tid, sorted_distinct(shingled.hashes[shingled.offsets[k]:
                                                        shingled.offsets[k + 1]])
