"""Per-turn features of one domain's turns: overlap, novelty, Jaccard, length ratios, corpus
frequencies and error flags (the `turn_features` asset).

`stage_turn_features(turns_path, staged, config, common)` streams one shard's turns Parquet in
batches of whole trajectories. For each batch, polars/numpy split and hash the words and
shingles of the actions and observations (quality/shingles.py) and MinHash the observations
and what is left of them without their action's words (quality/minhash.py,
quality/residual.py); numba loops count, for every observation, which of its shingles and
words the trajectory showed before (quality/observation_sets.py), and find the exact Jaccard
of small observation pairs (quality/max_jaccard.py); DuckDB computes the per-turn features
(turn_features.sql), one query over several batches (quality/turn_sql.py); each batch's rows
go to a staged file beside the output.
The words common to the domain (`common`) and the corpus frequencies are counted over the whole
domain, across its shards (quality/corpus_columns.py): the frequencies from the staged files'
signature columns, which then stream into the output (atomic). `compute_turn_features` runs all
of it on one file. Memory: a batch, a few integers a turn of the domain while its frequencies are
counted (their signatures read a window at a time: quality/corpus_frequency.py), and one output
row group of features. Column meanings: TURN_FEATURES in quality/tables.py.

Shingles here are word 3-grams over `words` tokens (punctuation and JSON escapes split words,
identifiers masked, see shingles.py): three words are specific enough that common pairs
("of the") do not make unrelated texts overlap, and short enough that a 6-word tool result still
has four shingles to compare (with 5-grams it would be a single all-or-nothing shingle).

`jaccard_max_prev` is exact when both observations have at most `exact_max_shingles` (64)
distinct shingles, or when the earlier one is the previous observation; otherwise it is the
MinHash estimate from 128 permutations (quality/max_jaccard.py). Below 64 shingles one shingle
moves Jaccard by more than the estimate's standard error sqrt(J(1-J)/128) (0.019 at J = 0.95),
so exact is both needed and cheap there.

Two corpus frequencies: `corpus_frequency` for the observation as it is, `template_frequency`
for it with the words of its own action taken out: a canned page ("Just a moment... Enable
JavaScript and cookies to continue") that quotes the URL it was asked for, or a message that
names the file it wrote, is the same text in every trajectory once those words are set aside.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from quality.action_echo import ascii_action_echoes, one_array
from quality.ascii_patterns import ascii_pattern_columns
from quality.batches import run_numbers, trajectory_batches
from quality.corpus_columns import (
    SIGNATURE_COLUMNS,
    domain_common_words,
    finish_turn_features,
    staged_path,
)
from quality.domain_order import file_order
from quality.max_jaccard import long_max_jaccard, short_max_jaccard
from quality.minhash import LshConfig, MinHashConfig, signature_bytes
from quality.observation_sets import shingle_counts, word_counts
from quality.reply_features import reply_columns
from quality.residual import observation_signatures, residual_shingles
from quality.shingles import (
    ShingleConfig,
    Shingled,
    laid_out_word_hashes,
    protocol_normalised,
    shingle_words,
)
from quality.text_pool import non_ascii_rows, string_buffers
from quality.turn_sql import TurnSqlGroups, connect, render_turn_sql
from sources.schema import TURN_SCHEMA
from sources.storage import (
    PARTS_SUFFIX,
    owner_tag,
    remove_stale_beside,
)


@dataclass(frozen=True)
class FeatureConfig:
    """Parameters of the turn features; `str()` names them (stored in the output's metadata)."""

    shingles: ShingleConfig = ShingleConfig(ngram=3, tokens="words", mask_ids=True)
    minhash: MinHashConfig = MinHashConfig()
    # corpus_frequency's "near-identical": 8 bands of 16 rows put the S-curve's midpoint at
    # (1/8)^(1/16) = 0.88; a pair with Jaccard 0.95 shares a band with probability 0.99, one with
    # 0.7 (two screens of one app, differing in their content) with 0.03. Bucket members are
    # then verified at the threshold (corpus_frequency.py).
    lsh: LshConfig = LshConfig(threshold=0.9, bands=8, rows=16)
    exact_max_shingles: int = 64
    # Chrome (words on half of a trajectory's observations) is only told apart from content in
    # trajectories of at least this many turns.
    chrome_min_observations: int = 5
    # ... and words on 10 % of the partition's observations are chrome too: markup vocabulary
    # ("textview", "clickable") and function words, which no observation owns (estimated on a
    # sample of up to 4,096 observations; only told with 50+).
    common_word_share: float = 0.1
    common_min_observations: int = 50
    head_tail_chars: int = 2000
    # A batch ends at 16,000 turns or 24 MB of text, whichever comes first: about 1.2 GB of
    # working memory, and small enough arrays to stay fast (measured: 8k-16k turns best).
    batch_rows: int = 16_000
    batch_bytes: int = 24 << 20
    duckdb_threads: int = 2
    duckdb_memory_limit: str = "1GB"
    # turn_features.sql runs once over this many turns or bytes of the batches' inputs
    # (quality/turn_sql.py: each query compiles its patterns afresh).
    sql_rows: int = 1 << 16
    sql_bytes: int = 96 << 20

    def __str__(self) -> str:
        return (f"{self.shingles}_{self.minhash}_{self.lsh}_exact{self.exact_max_shingles}"
                f"_chrome{self.chrome_min_observations}_common{self.common_word_share:g}"
                f"_ht{self.head_tail_chars}")


@dataclass
class FeatureStats:
    """Counters recorded while the features are computed."""

    config: str = ""
    turns: int = 0
    trajectories: int = 0
    batches: int = 0
    words: int = 0
    shingles: int = 0
    observations_without_shingles: int = 0
    errors_by_source: Counter = field(default_factory=Counter)
    seconds: Counter = field(default_factory=Counter)

    @property
    def turns_per_second(self) -> float:
        total = sum(self.seconds.values())
        return self.turns / total if total else 0.0


def compute_turn_features(turns_path: Path, out_path: Path,
                          config: FeatureConfig = FeatureConfig()) -> FeatureStats:
    """Write one row of features per turn of `turns_path` to `out_path` (Parquet, atomic): one
    file as a whole domain (quality/sharded.py runs the shards of a domain)."""
    order = file_order(turns_path)
    common = domain_common_words([turns_path], order, config)
    stats = stage_turn_features(turns_path, staged_path(Path(out_path)), config, common)
    clock = time.perf_counter()
    finish_turn_features([staged_path(Path(out_path))], [Path(out_path)], order, config)
    staged_path(Path(out_path)).unlink()  # staged here, for this call only
    stats.seconds["corpus_frequency"] += time.perf_counter() - clock
    return stats


def stage_turn_features(turns_path: Path, staged: Path, config: FeatureConfig,
                        common: np.ndarray, metadata: dict[bytes, bytes] | None = None
                        ) -> FeatureStats:
    """Every feature of one shard's turns but the corpus frequencies, with `common` as the
    domain's common words, staged at `staged` (atomic) with traj_seq and the two signatures
    that the domain's corpus frequencies need (corpus_columns.finish_turn_features); the
    file's schema carries `metadata` (what it was staged from: quality/staged_features.py)."""
    stats = FeatureStats(config=str(config))
    staged = Path(staged)
    staged.parent.mkdir(parents=True, exist_ok=True)
    part_path = staged.with_name(f".{staged.name}{PARTS_SUFFIX}{owner_tag()}")
    remove_stale_beside(staged)  # a killed run's parts file
    con = connect(config.duckdb_threads, config.duckdb_memory_limit)
    groups = TurnSqlGroups(con, render_turn_sql(config.head_tail_chars), config.sql_rows,
                           config.sql_bytes)
    writer: pq.ParquetWriter | None = None
    try:
        for part in _staged_parts(turns_path, groups, config, common, stats):
            writer = writer or _staged_writer(part_path, part.schema.with_metadata(metadata))
            writer.write_table(part)
        if writer is None:  # no turns: an empty, well-formed table all the same
            empty = _empty_schema(groups, config)
            writer = _staged_writer(part_path, empty.with_metadata(metadata))
        writer.close()
        writer = None
        os.replace(part_path, staged)
    finally:
        if writer is not None:
            writer.close()
        part_path.unlink(missing_ok=True)
    return stats


def _staged_writer(path: Path, schema: pa.Schema) -> pq.ParquetWriter:
    """The staged file's writer: zstd and dictionaries for its columns but its signatures,
    which are stored as they are. MinHash values are uniformly random, so zstd saves none of
    their 1 KB a turn and costs more CPU to write and read them back than the rest of the file
    (measured: 2.7 against 0.9 CPU s for 148k turns' two signatures), and a dictionary of
    512-byte values no more. turn_features is written from the values, so its bytes do not
    change."""
    others = [name for name in schema.names if name not in SIGNATURE_COLUMNS]
    return pq.ParquetWriter(path, schema, use_dictionary=others,
                            compression={name: "zstd" for name in others}
                            | {name: "none" for name in SIGNATURE_COLUMNS})


@dataclass
class _Tokens:
    """Word and shingle hashes of a batch's texts: the n actions, then the n observations."""

    n: int
    words: np.ndarray
    word_offsets: np.ndarray
    shingled: Shingled

    def observation_shingles(self) -> Shingled:
        start = self.shingled.offsets[self.n]
        return Shingled(self.shingled.hashes[start:], self.shingled.offsets[self.n:] - start)


def _tokenise(batch: pa.Table, config: FeatureConfig) -> _Tokens:
    """The batch's actions, then its observations, as texts 0..n-1 and n..2n-1 of one pool
    (laid out there from the two columns: no concatenated column)."""
    n = batch.num_rows
    columns = [protocol_normalised(batch[name]) for name in ("action", "observation")]
    words, offsets = laid_out_word_hashes(columns, [np.arange(n), np.arange(n, 2 * n)], 2 * n,
                                          config.shingles.tokens, config.shingles.mask_ids)
    return _Tokens(batch.num_rows, words, offsets,
                   shingle_words(words, offsets, config.shingles.ngram))


def _staged_parts(turns_path: Path, groups: TurnSqlGroups, config: FeatureConfig,
                  common: np.ndarray, stats: FeatureStats) -> Iterator[pa.Table]:
    """The staged rows of each batch of the shard's turns, in order."""
    for batch in trajectory_batches(turns_path, TURN_SCHEMA.names, config.batch_rows,
                                    config.batch_bytes):
        inputs, tail = _batch_inputs(batch, stats.trajectories, config, common, stats)
        stats.trajectories = int(inputs["traj_seq"][-1].as_py()) + 1
        yield from _queried(groups, inputs, tail, stats)
    yield from _queried(groups, None, {}, stats)


def _queried(groups: TurnSqlGroups, inputs: pa.Table | None, tail: dict[str, pa.Array],
             stats: FeatureStats) -> list[pa.Table]:
    """The batches whose features are complete once `inputs` (None: none, the shard's end)
    waits for the turn SQL (quality/turn_sql.py), in order."""
    clock = time.perf_counter()
    parts = groups.add(inputs, tail) if inputs is not None else groups.flush()
    stats.seconds["turn features (sql)"] += time.perf_counter() - clock
    for part in parts:
        stats.errors_by_source.update(v for v in part["error_source"].to_pylist()
                                      if v is not None)
    return parts


def _batch_inputs(batch: pa.Table, traj_offset: int, config: FeatureConfig,
                  common: np.ndarray, stats: FeatureStats
                  ) -> tuple[pa.Table, dict[str, pa.Array]]:
    """Everything of one batch of whole trajectories but its turn SQL: the query's input
    (`turns` of turn_features.sql), and the columns appended after its rows (the reply
    features, the action share and the signatures that the corpus frequencies need)."""
    clock = time.perf_counter()
    traj, turn = run_numbers(batch["trajectory_id"])
    turn_index = batch["turn_index"].to_numpy()
    if np.any((turn[1:] > 0) & (turn_index[1:] <= turn_index[:-1])):
        raise ValueError("the turns of a trajectory are not in turn_index order")
    n = batch.num_rows
    tokens = _tokenise(batch, config)
    observation = tokens.observation_shingles()
    residual = residual_shingles(tokens.words, tokens.word_offsets, n, observation,
                                 config.shingles.ngram)
    action_share = residual.share
    obs_sig, residual_sig = observation_signatures(observation, residual, config.minhash)
    stats.seconds["shingles + minhash"] += time.perf_counter() - clock

    clock = time.perf_counter()
    sets = shingle_counts(tokens.shingled.hashes, tokens.shingled.offsets, traj)
    sets.update(word_counts(tokens.words, tokens.word_offsets, traj, common,
                            config.chrome_min_observations))
    stats.seconds["set counts (numpy)"] += time.perf_counter() - clock

    clock = time.perf_counter()
    size = sets["obs_shingles"]
    best_short = short_max_jaccard(traj, sets.pop("pair_rows"), sets.pop("pair_shingles"), size,
                                   config.exact_max_shingles)
    best_long = long_max_jaccard(traj, size, obs_sig, config.exact_max_shingles)
    stats.seconds["jaccard_max_prev"] += time.perf_counter() - clock

    clock = time.perf_counter()
    columns = {"traj": pa.array(traj.astype(np.int32)), "turn": pa.array(turn.astype(np.int32)),
               "traj_seq": pa.array(traj + traj_offset, pa.int64())}
    columns.update({name: pa.array(values, pa.int64()) for name, values in sets.items()})
    columns["short_max_jaccard"] = pa.array(best_short, pa.float64(), from_pandas=True)
    columns["long_max_jaccard"] = pa.array(best_long, pa.float64(), from_pandas=True)
    columns.update(_previous_turn(batch, sets["obs_shingles"], turn))
    columns.update(_pattern_columns(batch, columns["obs_chars"], config))
    inputs = batch
    for name, column in columns.items():
        inputs = inputs.append_column(name, column)
    stats.seconds["turn features (sql)"] += time.perf_counter() - clock

    clock = time.perf_counter()
    tail = dict(reply_columns(batch, turn))
    stats.seconds["reply features (python)"] += time.perf_counter() - clock
    clock = time.perf_counter()
    tail["action_words"] = pa.array(action_share, pa.float64(), mask=np.isnan(action_share))
    tail["obs_signature"] = signature_bytes(obs_sig)
    tail["residual_signature"] = signature_bytes(residual_sig)
    stats.seconds["turn features (sql)"] += time.perf_counter() - clock

    stats.turns += n
    stats.batches += 1
    stats.words += len(tokens.words)
    stats.shingles += len(tokens.shingled.hashes)
    stats.observations_without_shingles += int(np.count_nonzero(size == 0))
    return inputs, tail


def _pattern_columns(batch: pa.Table, obs_chars: pa.Array, config: FeatureConfig
                     ) -> dict[str, pa.Array]:
    """ascii_echo, ascii_error_text and ascii_content_chars of turn_features.sql: the ASCII
    rows' answers, found before the query (one test of which observations are ASCII serves
    both modules)."""
    observation = one_array(batch["observation"])
    other = non_ascii_rows(*string_buffers(observation))
    columns = {"ascii_echo": ascii_action_echoes(batch["action"], observation, other)}
    columns.update(ascii_pattern_columns(batch, obs_chars, config.head_tail_chars, other))
    return columns


def _previous_turn(batch: pa.Table, obs_shingles: np.ndarray, turn: np.ndarray
                   ) -> dict[str, pa.Array]:
    """obs_chars, prev_obs_shingles and prev_obs_chars of turn_features.sql: the previous
    row's (the rows are in trajectory and turn order), NULL on a trajectory's first turn;
    characters as DuckDB's length() counts them (code points), counted once, here."""
    first = turn == 0
    chars = pc.cast(pc.utf8_length(batch["observation"]), pa.int64())
    previous_chars = pa.concat_arrays([pa.nulls(1, pa.int64()), *chars.chunks]).slice(
        0, batch.num_rows) if batch.num_rows else pa.array([], pa.int64())
    return {"obs_chars": chars,
            "prev_obs_shingles": pa.array(np.r_[0, obs_shingles[:-1]][:len(turn)], pa.int64(),
                                          mask=first),
            "prev_obs_chars": pc.if_else(pa.array(first), pa.scalar(None, pa.int64()),
                                         previous_chars)}


def _empty_schema(groups: TurnSqlGroups, config: FeatureConfig) -> pa.Schema:
    inputs, tail = _batch_inputs(TURN_SCHEMA.empty_table(), 0, config, np.zeros(0, np.uint64),
                                 FeatureStats())
    groups.add(inputs, tail)
    return groups.flush()[0].schema
