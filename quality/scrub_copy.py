"""A scrubbed table written as a copy of its raw file while nothing in it has changed.

Most shards have no secret in most tables, and decoding and re-encoding a whole file to write
the same rows was most of the scrub's time. `CopyingSink` takes the batches of a raw table in
order, each with whether a cell of it changed: until one did, it only counts rows; at the first
change it writes the rows so far again from the raw file (ParquetSink cuts row groups by rows,
so the bytes do not depend on how the rows came in) and writes on as ParquetSink; if none
changed it copies the raw file, but only when the raw file is what ParquetSink would write from
its rows (`written_as_sink`), so that a copy has the writer's bytes, and writes it otherwise.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from types import TracebackType

import pyarrow as pa
import pyarrow.parquet as pq

from sources.storage import COMPRESSION, ROWS_PER_BATCH, ParquetSink, atomic_path

READ_ROWS = 2048


class CopyingSink:
    """ParquetSink of `raw`'s schema at `path`, or a copy of `raw` if no batch changed."""

    def __init__(self, raw: Path, path: Path) -> None:
        self.raw = Path(raw)
        self.path = Path(path)
        self._sink: ParquetSink | None = None
        self._unchanged_rows = 0
        self._head: list[pa.Table] = []  # the raw file's first ROWS_PER_BATCH rows, as given

    def write_table(self, table: pa.Table, changed: bool) -> None:
        """Append `table`, the raw file's next rows (as they are unless `changed`)."""
        if self._sink is None and not changed:
            if self._unchanged_rows < ROWS_PER_BATCH:
                self._head.append(table.slice(0, ROWS_PER_BATCH - self._unchanged_rows))
            self._unchanged_rows += table.num_rows
            return
        self._head = []
        if self._sink is None:
            self._sink = self._replaying(self._unchanged_rows)
        self._sink.write_table(table)

    def _replaying(self, rows: int) -> ParquetSink:
        """A ParquetSink with the raw file's first `rows` rows written."""
        sink = ParquetSink(self.path, pq.read_schema(self.raw))
        left = rows
        for batch in pq.ParquetFile(self.raw).iter_batches(batch_size=READ_ROWS):
            if left <= 0:
                break
            sink.write_table(pa.Table.from_batches([batch.slice(0, left)]))
            left -= min(left, batch.num_rows)
        return sink

    def close(self) -> None:
        """Finish the file: the sink's, or the raw file copied (or rewritten) in one piece."""
        if self._sink is not None:
            self._sink.close()
        elif written_as_sink(self.raw, self._first_rows()):
            with atomic_path(self.path) as tmp:
                shutil.copyfile(self.raw, tmp)
        else:
            self._replaying(self._unchanged_rows).close()

    def _first_rows(self) -> pa.Table | None:
        """The raw rows given so far, up to a row group's (contiguous, as the sink writes them:
        the check reads them from here instead of decoding the file's first group again)."""
        if not self._head:
            return None
        return pa.concat_tables(self._head).combine_chunks()

    def abort(self) -> None:
        if self._sink is not None:
            self._sink.abort()

    def __enter__(self) -> CopyingSink:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def written_as_sink(path: Path, first_rows: pa.Table | None = None) -> bool:
    """Whether `path` has the bytes ParquetSink writes from its rows: its row groups cut every
    ROWS_PER_BATCH rows, every column chunk in the sink's codec, and its first row group (a
    full one, where page-size and dictionary limits show) encoded again by the sink's writer
    into the same pages, with the same writer and key-value metadata in the footer. A file's
    row groups share one writer's settings, so the first stands for the others; a file of one
    row group is checked whole. (Every writer of the raw tables, ingest's ParquetSink and
    source_merge's ParquetWriter, uses the sink's settings; the check keeps a file written
    otherwise from being copied.) `first_rows`: the file's first rows, already read (used when
    they are its whole first row group)."""
    parquet = pq.ParquetFile(path)
    meta = parquet.metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    if not sizes or sizes != _sink_cuts(meta.num_rows):
        return False
    if any(meta.row_group(g).column(c).compression != COMPRESSION.upper()
           for g in range(meta.num_row_groups) for c in range(meta.num_columns)):
        return False
    buffer = io.BytesIO()
    with pq.ParquetWriter(buffer, parquet.schema_arrow, compression=COMPRESSION) as writer:
        whole = first_rows is not None and first_rows.num_rows == meta.row_group(0).num_rows
        writer.write_table(first_rows if whole else parquet.read_row_group(0))
    reference = pq.ParquetFile(io.BytesIO(buffer.getvalue())).metadata
    if (reference.created_by, reference.metadata) != (meta.created_by, meta.metadata):
        return False
    with Path(path).open("rb") as handle:
        return all(_chunk_bytes(handle, meta.row_group(0).column(c))
                   == _chunk_bytes(buffer, reference.row_group(0).column(c))
                   for c in range(meta.num_columns))


def _sink_cuts(rows: int) -> list[int]:
    """The row-group sizes ParquetSink writes for `rows` rows."""
    full, rest = divmod(rows, ROWS_PER_BATCH)
    return [ROWS_PER_BATCH] * full + ([rest] if rest else [])


def _chunk_bytes(handle: io.BufferedIOBase, column: pq.ColumnChunkMetaData) -> bytes:
    """A column chunk's pages (its dictionary page, if any, and data pages) as stored."""
    start = (column.dictionary_page_offset if column.has_dictionary_page
             else column.data_page_offset)
    handle.seek(start)
    return handle.read(column.total_compressed_size)
