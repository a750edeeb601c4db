"""The storage base: layout, atomic writes (files and folders), SQL quoting, SQL files, checks."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sources.storage import (
    COMPRESSION,
    CheckOutcome,
    ParquetSink,
    atomic_path,
    load_sql,
    partition_dir,
    partition_path,
    scalar_query,
    sql_literal,
    sql_path,
    table_glob,
    text_bytes,
    write_parquet,
)
from sources.tables import RAW_TURNS

SCHEMA = pa.schema([("trajectory_id", pa.string()), ("n", pa.int64())])


def test_layout_is_hive_partitioned_by_domain(tmp_path: Path) -> None:
    assert RAW_TURNS.path(tmp_path, "os", "0") == (
        tmp_path / "raw_turns" / "domain=os" / "shard=0" / "part-0.parquet")
    assert partition_dir(str(tmp_path), "raw_turns", "os") == tmp_path / "raw_turns" / "domain=os"
    for domain, n in (("os", 1), ("web", 2)):
        write_parquet(pa.table({"n": [n]}), partition_path(tmp_path, "t", domain))
    rows = duckdb.sql(f"SELECT domain, n FROM read_parquet({sql_path(table_glob(tmp_path, 't'))}) "
                      "ORDER BY n").fetchall()
    assert rows == [("os", 1), ("web", 2)]


def test_sql_quoting_survives_quotes_in_paths(tmp_path: Path) -> None:
    assert sql_literal("it's") == "'it''s'"
    odd = tmp_path / "o'neil" / "x.parquet"
    write_parquet(pa.table({"n": [7]}), odd)
    assert duckdb.sql(f"SELECT n FROM read_parquet({sql_path(odd)})").fetchall() == [(7,)]


def test_write_parquet_is_atomic_and_zstd(tmp_path: Path) -> None:
    path = tmp_path / "a" / "t.parquet"
    write_parquet(pa.table({"n": [1, 2]}), path)
    assert pq.read_table(path)["n"].to_pylist() == [1, 2]
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"
    with pytest.raises((ValueError, pa.ArrowException)):
        write_parquet(pa.table({"n": [3]}), path, compression="no-such-codec")
    assert pq.read_table(path)["n"].to_pylist() == [1, 2]
    assert sorted(p.name for p in path.parent.iterdir()) == ["t.parquet"]


def test_atomic_path_keeps_the_old_file_on_failure(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    with atomic_path(path) as tmp:
        tmp.write_text("one")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half")
        raise RuntimeError("boom")
    assert path.read_text() == "one"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_atomic_path_replaces_a_folder_whole(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    with atomic_path(folder) as tmp:
        tmp.mkdir()
        (tmp / "old.txt").write_text("old")
    with atomic_path(folder) as tmp:
        tmp.mkdir()
        (tmp / "new.txt").write_text("new")
    assert [p.name for p in folder.iterdir()] == ["new.txt"]
    with pytest.raises(RuntimeError), atomic_path(folder) as tmp:
        tmp.mkdir()
        (tmp / "partial.txt").write_text("x")
        raise RuntimeError("boom")
    assert [p.name for p in folder.iterdir()] == ["new.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["corpus"]


def test_parquet_sink_streams_and_aborts(tmp_path: Path) -> None:
    path = tmp_path / "t" / "part-0.parquet"
    with ParquetSink(path, SCHEMA, rows_per_batch=2) as sink:
        sink.write_many([{"trajectory_id": str(i), "n": i} for i in range(5)])
    assert pq.read_table(path)["n"].to_pylist() == [0, 1, 2, 3, 4]
    assert pq.ParquetFile(path).metadata.num_row_groups == 3
    with pytest.raises(KeyError), ParquetSink(path, SCHEMA) as sink:
        sink.write({"trajectory_id": "x", "n": 9})
        raise KeyError("boom")
    assert pq.read_table(path)["n"].to_pylist() == [0, 1, 2, 3, 4]
    assert [p.name for p in path.parent.iterdir()] == ["part-0.parquet"]



def test_parquet_sink_takes_tables_in_the_row_groups_of_rows(tmp_path: Path) -> None:
    """Rows given as Arrow tables of any sizes give the file that the same rows given one by
    one give: the same row groups, byte for byte (scrubbing writes tables)."""
    rows = [{"trajectory_id": str(i) * (i % 4), "n": i if i % 5 else None} for i in range(23)]
    with ParquetSink(tmp_path / "rows.parquet", SCHEMA, rows_per_batch=4) as sink:
        sink.write_many(rows)
    with ParquetSink(tmp_path / "tables.parquet", SCHEMA, rows_per_batch=4) as sink:
        for start, end in ((0, 3), (3, 3), (3, 12), (12, 13), (13, 23)):
            sink.write_table(pa.Table.from_pylist(rows[start:end], schema=SCHEMA))
    assert pq.ParquetFile(tmp_path / "tables.parquet").metadata.num_row_groups == 6
    assert (tmp_path / "tables.parquet").read_bytes() == (tmp_path / "rows.parquet").read_bytes()

@pytest.mark.parametrize("parked", [(), (5, 6, 13, 20, 28)])
def test_parquet_sink_parks_waiting_rows_into_the_same_bytes(tmp_path: Path,
                                                            parked: tuple[int, ...]) -> None:
    """Rows that wait compressed where the sink is parked (once, twice or not at all in a row
    group) give the file of rows converted one row group at a time, byte for byte."""
    rows = [{"trajectory_id": "é" * (i % 7), "n": i if i % 5 else None} for i in range(29)]
    with ParquetSink(tmp_path / "packed.parquet", SCHEMA, rows_per_batch=8) as sink:
        for index, row in enumerate(rows):
            if index in parked:
                sink.park()
            sink.write(row)
        sink.park()
    with pq.ParquetWriter(tmp_path / "whole.parquet", SCHEMA, compression=COMPRESSION) as writer:
        for start in range(0, len(rows), 8):
            writer.write_table(pa.Table.from_pylist(rows[start:start + 8], schema=SCHEMA))
    assert pq.ParquetFile(tmp_path / "packed.parquet").metadata.num_row_groups == 4
    assert (tmp_path / "packed.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()


@pytest.mark.parametrize("cap", [1, 7, 30, 10_000])
def test_parquet_sink_capped_by_bytes_writes_the_same_bytes(tmp_path: Path, cap: int) -> None:
    """A sink that parks its rows whenever their text passes `max_pending_bytes` writes the
    row groups, and so the bytes, of one that holds them all as rows."""
    rows = [{"trajectory_id": "é" * (i % 7), "n": i if i % 5 else None} for i in range(29)]
    with ParquetSink(tmp_path / "capped.parquet", SCHEMA, rows_per_batch=8,
                     max_pending_bytes=cap) as sink:
        for row in rows:
            sink.write(row)
            assert sink._pending_bytes < cap
    with ParquetSink(tmp_path / "rows.parquet", SCHEMA, rows_per_batch=8) as sink:
        sink.write_many(rows)
    assert pq.ParquetFile(tmp_path / "capped.parquet").metadata.num_row_groups == 4
    assert (tmp_path / "capped.parquet").read_bytes() == (tmp_path / "rows.parquet").read_bytes()


def test_text_bytes_counts_the_strings_of_a_row() -> None:
    assert text_bytes({"a": "abc", "b": None, "c": 7, "d": "é"}) == 4


def test_scalar_query_and_load_sql(tmp_path: Path) -> None:
    write_parquet(pa.table({"n": [1, 2, 3]}), tmp_path / "t.parquet")
    assert scalar_query("SELECT sum(n) FROM read_parquet($p)", p=str(tmp_path / "t.parquet")) == 6
    assert scalar_query("SELECT 1 WHERE false") == 0
    (tmp_path / "q.sql").write_text("SELECT 42\n")
    assert load_sql(tmp_path / "module.py", "q.sql") == "SELECT 42\n"
    import quality.labels

    beside = Path(quality.labels.__file__).parent / "labels.sql"
    assert load_sql(quality.labels.__file__, "labels.sql") == beside.read_text(encoding="utf-8")
    outcome = CheckOutcome(True, "fine")
    assert outcome.figures == {}


def test_a_sink_closed_early_is_not_closed_again(tmp_path: Path) -> None:
    path = tmp_path / "part-0.parquet"
    with ParquetSink(path, SCHEMA, rows_per_batch=2) as sink:
        sink.write_many([{"trajectory_id": str(i), "n": i} for i in range(3)])
        sink.close()
        assert pq.read_table(path)["n"].to_pylist() == [0, 1, 2]
    assert pq.ParquetFile(path).metadata.num_row_groups == 2
