"""Rows waiting for their row group in a parked ParquetSink (sources/storage.py): an Arrow table
compressed in memory, a fraction of the size of the Python dicts it replaces. A sink is parked
when it may get no rows for a while (ingest's sinks of the sources already read), so its
leftover rows wait small until it writes them.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.ipc

PARK_CODEC = "zstd"  # the generated corpus's waiting rows: 3x (turns) to 10x (trajectories)


class PackedRows:
    """Tables of rows, in order, each kept as a compressed Arrow IPC stream."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.rows = 0
        self._parts: list[pa.Buffer] = []

    def add(self, table: pa.Table) -> None:
        stream = pa.BufferOutputStream()
        options = pa.ipc.IpcWriteOptions(compression=PARK_CODEC)
        with pa.ipc.new_stream(stream, self.schema, options=options) as writer:
            writer.write_table(table)
        self._parts.append(stream.getvalue())
        self.rows += table.num_rows

    def take(self) -> list[pa.Table]:
        """Every table, in order; none are kept afterwards."""
        tables = [pa.ipc.open_stream(part).read_all() for part in self._parts]
        self._parts, self.rows = [], 0
        return tables
