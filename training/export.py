"""Split tables as a `datasets.DatasetDict` (save_to_disk) beside their Parquet partitions.

{data}/<table>/domain=<d>/part-0.parquet are the Parquet export; {data}/<table>/hf is the
DatasetDict that `datasets.load_from_disk` and TRL read as is: "train" (every domain, in
domain order), and for a table with a `split` column (sft_split) "train" and "validation" by
that column, which is then dropped (the split is the DatasetDict's key; both keep the same
columns; an empty one is there too, loadable, with no rows). Built from the Parquet files just
written, so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Dataset, DatasetDict

from sources.storage import atomic_path
from sources.tables import Table
from training.split_tables import by_split

HF_FOLDER = "hf"


def export_dataset_dict(data_dir: Path, table: Table, domains: Sequence[str]) -> Path:
    """Write {data}/{table}/hf from the table's domain partitions; return its path."""
    paths = table.paths(data_dir, tuple(domains))
    if not paths:
        raise FileNotFoundError(f"{table.dir(data_dir)}: no partitions to export")
    combined = pa.concat_tables([pq.read_table(p) for p in paths]).replace_schema_metadata(None)
    splits = (by_split(combined, str(table.dir(data_dir)))
              if "split" in combined.column_names else {"train": combined})
    return save_dataset_dict(splits, table.dir(data_dir) / HF_FOLDER)


def save_dataset_dict(splits: Mapping[str, pa.Table], out: Path,
                      fingerprints: Mapping[str, str] | None = None) -> Path:
    """The splits as a DatasetDict saved at `out` (atomically): what the splits' hf folders and
    a release's hf/turns are written by. A fingerprint per split (a hash of its file) makes
    state.json the same on every build."""
    fingerprints = fingerprints or {}
    with atomic_path(out) as tmp:
        # an empty split saved with datasets' default 0 shards does not load back: give it one
        DatasetDict({name: Dataset(rows, fingerprint=fingerprints.get(name))
                     for name, rows in splits.items()}).save_to_disk(
            str(tmp), num_shards={name: 1 for name, rows in splits.items() if not rows.num_rows})
    return out
