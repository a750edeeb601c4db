"""The turn features counted over a whole domain, across its shards: the common ("chrome") words
that own_words leaves out, corpus_frequency and template_frequency.

Features are computed shard by shard (quality/features.py), in three steps per domain:

1. `domain_common_words`: the words on `common_word_share` of the domain's observations, from a
   sample of them taken in the domain's order (quality/domain_order.py): each shard reads only
   its own rows of the sample (a few row groups), never the rest of its text;
2. per shard, `features.stage_turn_features` computes every other feature with those words and
   stages its rows with their two MinHash signatures beside the output;
3. `finish_turn_features`: the two corpus frequencies over the domain from the staged
   signatures (not the text), then each shard's output streamed from its staged rows.

So a domain cut into shards gets the features of one shard, and a single shard the features it
always had. Memory of step 3: a few integers a turn of the domain (quality/corpus_frequency.py),
its signatures read a window of rows at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from quality.corpus_frequency import corpus_frequency
from quality.domain_order import DomainOrder
from quality.observation_sets import common_words, sampled_texts
from quality.shingles import protocol_normalised, word_hashes
from quality.signature_windows import check_staged_rows, domain_windows
from sources.storage import COMPRESSION, atomic_path

if TYPE_CHECKING:
    from quality.features import FeatureConfig

SIGNATURE_COLUMNS = ("obs_signature", "residual_signature")
FREQUENCY_COLUMNS = ("corpus_frequency", "template_frequency")
STAGED_SUFFIX = ".staged"  # .{name}.staged beside the output: step 2's rows, read by step 3
SAMPLE_GROUPS = 8  # row groups the common-word sample is drawn from, evenly spaced
SAMPLE_TEXTS = 4096  # ... and about this many observations of them (every k-th)
# Rows per row group of the output. A partition up to this size is one row group, as
# `pq.write_table` wrote it before this step streamed (the same bytes); the rows of one group
# (features only, no text: about 300 bytes a row) bound this step's memory.
OUTPUT_ROW_GROUP_ROWS = 1 << 17


def staged_path(out_path: Path) -> Path:
    """Where a shard's staged features wait for the domain's corpus frequencies (hidden)."""
    return out_path.with_name(f".{out_path.name}{STAGED_SUFFIX}")


def sample_positions(group_sizes: Sequence[int]) -> np.ndarray:
    """Positions (domain order) of the common-word sample: the rows of up to SAMPLE_GROUPS
    evenly spaced row groups, every k-th of them so that about SAMPLE_TEXTS remain."""
    groups = len(group_sizes)
    picked = sorted({round(k * (groups - 1) / (SAMPLE_GROUPS - 1))
                     for k in range(SAMPLE_GROUPS)}) if groups else []
    starts = np.r_[0, np.cumsum(group_sizes, dtype=np.int64)]
    rows = np.concatenate([np.arange(starts[g], starts[g + 1]) for g in picked] or
                          [np.zeros(0, np.int64)])
    return rows[::max(1, len(rows) // SAMPLE_TEXTS)]


def domain_common_words(turns_paths: Sequence[Path], order: DomainOrder,
                        config: FeatureConfig) -> np.ndarray:
    """Words on `common_word_share` of the domain's observations (of the sample, see
    observation_sets.common_words): the same for every shard and batch."""
    sample = sample_positions(order.group_sizes)
    texts, where = [], []
    for path, positions in zip(turns_paths, order.positions, strict=True):
        local = np.flatnonzero(np.isin(positions, sample))
        texts.append(_observations(Path(path), local))
        where.append(positions[local])
    ordered = np.argsort(np.concatenate(where), kind="stable")
    # only the texts common_words counts are tokenised (of the sample's ~4-6k, 4,096)
    counted = sampled_texts(len(ordered), config.common_min_observations)
    observations = (pa.concat_arrays(texts).take(pa.array(ordered[counted])) if texts
                    else pa.array([], pa.large_string()))
    words, offsets = word_hashes(protocol_normalised(observations), config.shingles.tokens,
                                 config.shingles.mask_ids)
    return common_words(words, offsets, config.common_word_share,
                        config.common_min_observations)


def _observations(turns_path: Path, rows: np.ndarray) -> pa.Array:
    """The observation of each of `rows` (sorted), reading only the row groups that hold them."""
    parquet = pq.ParquetFile(turns_path)
    sizes = [parquet.metadata.row_group(g).num_rows
             for g in range(parquet.metadata.num_row_groups)]
    starts = np.r_[0, np.cumsum(sizes, dtype=np.int64)]
    group_of = np.searchsorted(starts, rows, side="right") - 1
    # (taken from the column as read, then combined: combining first copied every text)
    parts = [parquet.read_row_group(int(g), columns=["observation"])["observation"]
             .take(pa.array(rows[group_of == g] - starts[g])).combine_chunks()
             for g in np.unique(group_of)]
    return pa.concat_arrays(parts) if parts else pa.array([], pa.large_string())


def domain_frequencies(staged_paths: Sequence[Path], order: DomainOrder,
                       config: FeatureConfig) -> list[dict[str, pa.Array]]:
    """corpus_frequency and template_frequency of every row of every shard, counted over the
    domain: its signatures read in windows of rows (quality/signature_windows.py), never the
    domain's matrix."""
    check_staged_rows(staged_paths, order.positions)
    trajectory = np.empty(order.rows, dtype=np.int64)
    for positions, numbers in zip(order.positions, order.trajectories, strict=True):
        trajectory[positions] = numbers
    out: list[dict[str, pa.Array]] = [{} for _ in staged_paths]
    num_perm = config.minhash.num_perm
    for column, name in zip(SIGNATURE_COLUMNS, FREQUENCY_COLUMNS, strict=True):
        frequency, has_shingles = corpus_frequency(
            partial(domain_windows, staged_paths, order.positions, column, num_perm),
            order.rows, trajectory, config.lsh, num_perm)
        for shard_out, positions in zip(out, order.positions, strict=True):
            shard_out[name] = pa.array(frequency[positions], pa.int64(),
                                       mask=~has_shingles[positions])
    return out


def finish_turn_features(staged_paths: Sequence[Path], out_paths: Sequence[Path],
                         order: DomainOrder, config: FeatureConfig) -> None:
    """Every shard's turn_features (atomic), from its staged rows and the domain's corpus
    frequencies. The staged files stay: whoever staged them decides when they go."""
    frequencies = domain_frequencies(staged_paths, order, config)
    for staged, out, columns in zip(staged_paths, out_paths, frequencies, strict=True):
        write_turn_features(staged, out, columns, config)


def write_turn_features(staged: Path, out_path: Path, frequencies: dict[str, pa.Array],
                        config: FeatureConfig) -> None:
    """The final table, streamed: the staged rows, one row group at a time, plus the corpus
    frequencies, without traj_seq and the signatures."""
    parts = pq.ParquetFile(staged)
    kept = [c for c in parts.schema_arrow.names if c not in (*SIGNATURE_COLUMNS, "traj_seq")]
    fields = [parts.schema_arrow.field(c) for c in kept]
    fields += [pa.field(name, pa.int64()) for name in FREQUENCY_COLUMNS]
    schema = pa.schema(fields, metadata={b"feature_config": str(config).encode()})
    with atomic_path(out_path) as tmp, pq.ParquetWriter(tmp, schema,
                                                        compression=COMPRESSION) as writer:
        written = 0
        for rows in _row_groups(parts, kept, OUTPUT_ROW_GROUP_ROWS):
            for name in FREQUENCY_COLUMNS:
                rows = rows.append_column(name, frequencies[name].slice(written, rows.num_rows))
            writer.write_table(rows.replace_schema_metadata(schema.metadata),
                               row_group_size=OUTPUT_ROW_GROUP_ROWS)
            written += rows.num_rows
        if written == 0:  # as pq.write_table writes an empty table: one empty row group
            writer.write_table(schema.empty_table())


def _row_groups(parts: pq.ParquetFile, columns: list[str], size: int) -> Iterator[pa.Table]:
    """The rows of `parts` in tables of `size` rows (the last one shorter), read one row group
    at a time."""
    pending: pa.Table | None = None
    for group in range(parts.num_row_groups):
        table = parts.read_row_group(group, columns=columns)
        pending = table if pending is None else pa.concat_tables([pending, table])
        while pending.num_rows >= size:
            yield pending.slice(0, size)
            pending = pending.slice(size)
    if pending is not None and pending.num_rows:
        yield pending
