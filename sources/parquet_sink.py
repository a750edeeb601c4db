"""Atomic, streaming Parquet output: rows go out in batches to a temp file, renamed at the end.

A reader of the table never sees a half-written file: the final name appears only when the
writer closes cleanly (os.replace is atomic on one filesystem), and a failed run leaves the
previous version in place.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROWS_PER_BATCH = 4096  # keeps memory flat (a few MB of text per batch) and row groups useful
PART_FILE = "part-0.parquet"


def partition_path(data_dir: Path, table: str, domain: str) -> Path:
    """Hive-style location of one domain partition of a table: {data}/{table}/domain={d}/."""
    return data_dir / table / f"domain={domain}" / PART_FILE


class ParquetSink:
    """Write rows of a fixed schema to `path`, atomically, in bounded memory."""

    def __init__(self, path: Path, schema: pa.Schema, rows_per_batch: int = ROWS_PER_BATCH) -> None:
        self.path = path
        self.schema = schema
        self.rows_per_batch = rows_per_batch
        self.rows_written = 0
        self._pending: list[dict[str, Any]] = []
        path.parent.mkdir(parents=True, exist_ok=True)
        self._temp_path = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        self._writer = pq.ParquetWriter(self._temp_path, schema, compression="zstd")

    def write(self, row: dict[str, Any]) -> None:
        self._pending.append(row)
        if len(self._pending) >= self.rows_per_batch:
            self._flush()

    def write_many(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            self.write(row)

    def _flush(self) -> None:
        if self._pending:
            batch = pa.Table.from_pylist(self._pending, schema=self.schema)
            self._writer.write_table(batch)
            self.rows_written += len(self._pending)
            self._pending = []

    def close(self) -> None:
        """Finish the file and move it into place."""
        self._flush()
        self._writer.close()
        os.replace(self._temp_path, self.path)

    def abort(self) -> None:
        """Drop the temp file; the previous version of `path` (if any) stays."""
        self._writer.close()
        self._temp_path.unlink(missing_ok=True)

    def __enter__(self) -> ParquetSink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
