"""Reading the split tables (cpt_corpus, sft_split, rl_split) the splits stage writes, and
sft_split's rows by their train / validation `split`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from datasets import Dataset

SPLITS = ("train", "validation")  # values of sft_split's `split` column


def read_columns(paths: Sequence[Path], columns: list[str], table: str) -> Dataset:
    """The named columns of some partitions of `table`; a missing column or no rows is an
    error naming the file."""
    return Dataset(read_table(paths, columns, table))


def read_table(paths: Sequence[Path], columns: list[str] | None, table: str) -> pa.Table:
    """The named columns (None: all) of some partitions of `table`, concatenated; a missing
    column or no rows is an error naming the file."""
    parts = []
    for path in paths:
        missing = sorted(set(columns or []) - set(pq.read_schema(path).names))
        if missing:
            raise ValueError(f"{path}: lacks columns {missing} (is this a {table} partition?)")
        parts.append(pq.read_table(path, columns=columns))
    if not parts or sum(part.num_rows for part in parts) == 0:
        raise ValueError(f"no {table} rows in {[str(p) for p in paths]}")
    return pa.concat_tables(parts)


def by_split(rows: pa.Table, where: str) -> dict[str, pa.Table]:
    """Rows by their `split` column ("train", "validation"; either may be empty), the column
    dropped (the split is the key); a row in another split is an error naming `where`."""
    parts = {name: rows.filter(pc.equal(rows["split"], name)).drop_columns(["split"])
             for name in SPLITS}
    if sum(part.num_rows for part in parts.values()) != rows.num_rows:
        found = sorted(set(rows["split"].to_pylist()) - set(SPLITS))
        raise ValueError(f"{where}: split values {found} are none of {list(SPLITS)}")
    return parts
