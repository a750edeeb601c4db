"""Split tables as a `datasets.DatasetDict` (save_to_disk) beside their Parquet partitions.

{data}/<table>/domain=<d>/part-0.parquet are the Parquet export; {data}/<table>/hf is the
DatasetDict ("train": every domain, in domain order) that `datasets.load_from_disk` and TRL
read as is. Built from the Parquet files just written, so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Dataset, DatasetDict

from sources.storage import atomic_path, partition_path

HF_FOLDER = "hf"


def export_dataset_dict(data_dir: Path, table: str, domains: Sequence[str]) -> Path:
    """Write {data}/{table}/hf from the table's domain partitions; return its path."""
    paths = [p for d in domains if (p := partition_path(data_dir, table, d)).exists()]
    if not paths:
        raise FileNotFoundError(f"{Path(data_dir) / table}: no partitions to export")
    combined = pa.concat_tables([pq.read_table(p) for p in paths])
    out = Path(data_dir) / table / HF_FOLDER
    with atomic_path(out) as tmp:
        DatasetDict({"train": Dataset(combined.replace_schema_metadata(None))}).save_to_disk(
            str(tmp))
    return out
