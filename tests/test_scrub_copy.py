"""CopyingSink writes the bytes ParquetSink writes, whether it copies the raw file or not."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quality.scrub_copy import CopyingSink, written_as_sink
from sources.storage import ROWS_PER_BATCH, ParquetSink

ROWS = 2 * ROWS_PER_BATCH + 123


def _rows(start: int = 0) -> pa.Table:
    ids = range(start, start + ROWS)
    return pa.table({"trajectory_id": [f"t{i // 7}" for i in ids],
                     "observation": [f"line {i} " * (i % 13) for i in ids]})


def _sink_file(table: pa.Table, path: Path) -> bytes:
    with ParquetSink(path, table.schema) as sink:
        sink.write_table(table)
    return path.read_bytes()


def _through_copying(raw: Path, out: Path, table: pa.Table, changed_from: int | None) -> bytes:
    """`table` (the raw rows, changed from row `changed_from` on) in batches of 1000 rows."""
    with CopyingSink(raw, out) as sink:
        for start in range(0, table.num_rows, 1000):
            part = table.slice(start, 1000)
            sink.write_table(part, changed=changed_from is not None
                             and start + part.num_rows > changed_from)
    return out.read_bytes()


def test_an_unchanged_sink_file_is_copied_with_the_sink_bytes(tmp_path: Path) -> None:
    raw = tmp_path / "raw.parquet"
    expected = _sink_file(_rows(), raw)
    assert written_as_sink(raw)
    assert _through_copying(raw, tmp_path / "out.parquet", _rows(), None) == expected


@pytest.mark.parametrize("changed_from", [0, 1500, ROWS - 1])
def test_a_change_writes_the_rows_before_it_again(tmp_path: Path, changed_from: int) -> None:
    raw = tmp_path / "raw.parquet"
    _sink_file(_rows(), raw)
    changed = pa.concat_tables([_rows().slice(0, changed_from), _rows(1).slice(changed_from)])
    expected = _sink_file(changed, tmp_path / "expected.parquet")
    assert _through_copying(raw, tmp_path / "out.parquet", changed, changed_from) == expected


@pytest.mark.parametrize("write", [
    lambda table, path: pq.write_table(table, path, compression="zstd", row_group_size=1000),
    lambda table, path: pq.write_table(table, path, compression="zstd",
                                       compression_level=9, row_group_size=ROWS_PER_BATCH),
    lambda table, path: pq.write_table(table, path, compression="snappy",
                                       row_group_size=ROWS_PER_BATCH),
    lambda table, path: pq.write_table(table, path, compression="zstd",
                                       data_page_size=4096, row_group_size=ROWS_PER_BATCH),
])
def test_a_file_written_otherwise_is_written_by_the_sink(tmp_path: Path, write) -> None:
    raw = tmp_path / "raw.parquet"
    write(_rows(), raw)
    assert not written_as_sink(raw)
    expected = _sink_file(_rows(), tmp_path / "expected.parquet")
    assert _through_copying(raw, tmp_path / "out.parquet", _rows(), None) == expected


def test_an_empty_file_is_written_by_the_sink(tmp_path: Path) -> None:
    raw = tmp_path / "raw.parquet"
    expected = _sink_file(_rows().slice(0, 0), raw)
    assert _through_copying(raw, tmp_path / "out.parquet", _rows().slice(0, 0), None) == expected


@pytest.mark.parametrize("level", [None, 9])
def test_the_check_on_rows_already_read_is_the_check_on_the_file(tmp_path: Path,
                                                                 level: int | None) -> None:
    raw = tmp_path / "raw.parquet"
    pq.write_table(_rows(), raw, compression="zstd", compression_level=level,
                   row_group_size=ROWS_PER_BATCH)
    first = pa.concat_tables([_rows().slice(0, 1000), _rows().slice(1000, ROWS_PER_BATCH - 1000)])
    assert written_as_sink(raw, first.combine_chunks()) == written_as_sink(raw) == (level is None)
    assert written_as_sink(raw, _rows().slice(0, 10)) == written_as_sink(raw)  # too few: read
