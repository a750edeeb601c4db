"""Reading the split tables (cpt_corpus, sft_split, rl_split) the splits stage writes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Dataset


def read_columns(paths: Sequence[Path], columns: list[str], table: str) -> Dataset:
    """The named columns of some partitions of `table`; a missing column or no rows is an
    error naming the file."""
    parts = []
    for path in paths:
        missing = sorted(set(columns) - set(pq.read_schema(path).names))
        if missing:
            raise ValueError(f"{path}: lacks columns {missing} (is this a {table} partition?)")
        parts.append(pq.read_table(path, columns=columns))
    if not parts or sum(part.num_rows for part in parts) == 0:
        raise ValueError(f"no {table} rows in {[str(p) for p in paths]}")
    return Dataset(pa.concat_tables(parts))
