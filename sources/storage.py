"""The storage base every stage writes and reads through.

All tables live under one data directory, Parquet, hive-partitioned by domain, and the per-turn
tables by domain and shard: {data}/{table}/domain={d}/part-0.parquet or
{data}/{table}/domain={d}/shard={s}/part-0.parquet. Writes are atomic: a reader never sees a
half-written file (the final name appears only when the writer finishes; os.replace is atomic on one
filesystem), and a failed run leaves the previous version in place. Paths and values that go into
SQL text are quoted here, and SQL files are read from beside the module that runs them.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import socket
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from sources.packed_rows import PackedRows

ROWS_PER_BATCH = 4096  # keeps memory flat (a few MB of text per batch) and row groups useful
PART_FILE = "part-0.parquet"
COMPRESSION = "zstd"


# --- layout -------------------------------------------------------------------------------------

def partition_dir(data_dir: Path | str, table: str, domain: str, shard: str | None = None
                  ) -> Path:
    """The folder of one partition of a table: {data}/{table}/domain={d}/, or
    {data}/{table}/domain={d}/shard={s}/ for a sharded table."""
    folder = Path(data_dir) / table / f"domain={domain}"
    return folder if shard is None else folder / f"shard={shard}"


def partition_path(data_dir: Path | str, table: str, domain: str, shard: str | None = None
                   ) -> Path:
    """The file of one partition of a table: {partition_dir}/part-0.parquet."""
    return partition_dir(data_dir, table, domain, shard) / PART_FILE


def table_glob(data_dir: Path | str, table: str, sharded: bool = False) -> str:
    """A glob over every partition of a table (every shard of every domain), for DuckDB's
    read_parquet."""
    return domain_glob(data_dir, table, "*", sharded)


def domain_glob(data_dir: Path | str, table: str, domain: str, sharded: bool = False) -> str:
    """A glob over one domain's partition (every shard of it, for a sharded table)."""
    return str(partition_path(data_dir, table, domain, "*" if sharded else None))


def shard_keys(data_dir: Path | str, table: str, domain: str) -> list[str]:
    """The shards of one domain present on disk (a folder `shard=<s>` with its part file), in
    shard order (numeric keys by number)."""
    folder = partition_dir(data_dir, table, domain)
    keys = [child.name.removeprefix("shard=") for child in folder.glob("shard=*")
            if (child / PART_FILE).is_file()] if folder.is_dir() else []
    return sorted(keys, key=shard_order)


def shard_order(key: str) -> tuple[int, int | str]:
    """Sort key of a shard: numbers by value, before any other name."""
    return (0, int(key)) if key.isdigit() else (1, key)


# --- atomic writes ------------------------------------------------------------------------------

TEMP_SUFFIX = ".tmp-"  # .{name}.tmp-<host>-<pid>: a file being written
OLD_SUFFIX = ".old-"  # .{name}.old-<host>-<pid>: a folder being replaced
FRESH_SUFFIX = ".fresh-"  # .{name}.fresh-<host>-<pid>: an ingest run's rows, not yet placed
PARTS_SUFFIX = ".parts-"  # .{name}.parts-<host>-<pid>: a step's intermediate file (features)
STAGING_PREFIX = "_staging-"  # _staging-<pid>: the staging folder of older ingest runs
# The writer's tag at the end of a temporary name: host and pid (a data directory on shared
# storage is written from several machines; a pid says nothing about another host's processes).
# Names without a host (older versions) are this machine's.
_OWNER_TAIL = re.compile(r"(?:.*(?:\.tmp|\.old|\.fresh|\.parts)|_staging)"  # the last one
                         r"-(?:(?P<host>[\w.-]+?)-)?(?P<pid>\d+)")


def owner_tag() -> str:
    """`<host>-<pid>`: who writes a temporary file (the end of its name)."""
    return f"{socket.gethostname()}-{os.getpid()}"


def _temp_beside(path: Path) -> Path:
    """A hidden temporary name in the same folder (same filesystem, so the rename is atomic)."""
    return path.with_name(f".{path.name}{TEMP_SUFFIX}{owner_tag()}")


def _old_beside(path: Path) -> Path:
    """The hidden name a folder is moved to before it is deleted (replaced or removed)."""
    return path.with_name(f".{path.name}{OLD_SUFFIX}{owner_tag()}")


def process_alive(pid: int) -> bool:
    """True when a process with this id runs on this machine (signal 0 probes, sends nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _stale(path: Path) -> bool:
    """A temporary name of a process of this machine that is gone (not this one)."""
    match = _OWNER_TAIL.fullmatch(path.name)
    if not match or match["host"] not in (None, socket.gethostname()):
        return False
    pid = int(match["pid"])
    return pid != os.getpid() and not process_alive(pid)


def remove_stale_beside(path: Path) -> list[Path]:
    """Remove the temporaries of `path` (hidden `.{name}...-<pid>` siblings) that a killed
    writer left: every atomic write calls this first, so a SIGKILLed step's retry leaves
    nothing behind. Returns what was removed."""
    removed = [sibling for sibling in sorted(path.parent.glob(f".{glob.escape(path.name)}*"))
               if _stale(sibling)]
    for sibling in removed:
        _remove(sibling)
    return removed


def remove_stale_temps(data_dir: Path | str, tables: list[str]) -> list[Path]:
    """Remove what a killed writer left in `data_dir`: temporary, fresh and old files of the
    partitions of `tables`, and old `_staging-<pid>` folders, whose process is gone (SIGKILL
    runs no cleanup). A live process's files are kept: it may be a concurrent partition run;
    so are another host's. Returns what was removed."""
    data_dir = Path(data_dir)
    candidates = list(data_dir.glob(f"{STAGING_PREFIX}*"))
    for table in tables:
        candidates += (data_dir / table).glob("domain=*/.*")
        candidates += (data_dir / table).glob("domain=*/shard=*/.*")
    removed = [path for path in sorted(candidates) if _stale(path)]
    for path in removed:
        _remove(path)
    return removed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def remove_partition(data_dir: Path | str, table: str, domain: str) -> bool:
    """Remove one domain's partition of a table (every shard of it) atomically: its folder is
    renamed to a hidden name beside it, which no reader's `domain=*` glob matches, then
    deleted. True when there was one. A killed remover's hidden folder goes with the next
    call, as a killed writer's temporaries do."""
    folder = partition_dir(data_dir, table, domain)
    remove_stale_beside(folder)
    if not folder.is_dir():
        return False
    old = _old_beside(folder)
    _remove(old)
    folder.rename(old)
    _remove(old)
    return True


@contextlib.contextmanager
def atomic_path(out_path: Path | str) -> Iterator[Path]:
    """A temporary path beside `out_path`, moved onto it when the block succeeds.

    The block may write a file or create a folder there. A folder replaces an existing one
    (the old one is moved aside first, then deleted); on an exception the temporary is removed
    and `out_path` keeps its previous content.
    """
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_beside(out_path)
    _remove(tmp)
    remove_stale_beside(out_path)
    try:
        yield tmp
        if tmp.is_dir() and out_path.is_dir():
            old = _old_beside(out_path)
            out_path.rename(old)
            tmp.rename(out_path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out_path)
    finally:
        if tmp.exists():
            _remove(tmp)


def write_parquet(table: pa.Table, path: Path | str, compression: str = COMPRESSION) -> None:
    """Write a whole table to `path` atomically."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression=compression)


class ParquetSink:
    """Write rows of a fixed schema to `path`, atomically, in bounded memory: as dicts
    (`write`) or as Arrow tables (`write_table`), one row group every `rows_per_batch` rows
    either way (a sink takes one of the two).

    `park` keeps the rows waiting for their row group (`write`'s) as compressed Arrow instead
    of Python dicts, for a sink that may get no rows for a while: ingest keeps 84 sinks open
    (7 domains x 4 shards x 3 tables) and parks them all when a source ends, so the rows left
    over in the sinks of the sources done (up to 4,096 a sink; a raw_trajectories sink's
    4,096 trajectories are about 90k turns of its shard) no longer wait as dicts until the run
    ends. The row groups, and so the bytes, are those of the rows converted at once.

    With `max_pending_bytes`, `write` also parks its rows whenever their text passes that many
    bytes: the row group stays `rows_per_batch` rows (the same bytes), but its rows wait
    compressed, so a sink of wide rows holds a few MB however large the run (ingest's
    raw_trajectories sinks: 4,096 Android rows are 37 MB as dicts)."""

    def __init__(self, path: Path, schema: pa.Schema, rows_per_batch: int = ROWS_PER_BATCH,
                 max_pending_bytes: int | None = None) -> None:
        self.path = Path(path)
        self.schema = schema
        self.rows_per_batch = rows_per_batch
        self.max_pending_bytes = max_pending_bytes
        self.rows_written = 0
        self._pending: list[dict[str, Any]] = []
        self._pending_bytes = 0
        self.closed = False
        self._packed = PackedRows(schema)
        self._tables: list[pa.Table] = []
        self._table_rows = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_beside(self.path)
        self._temp_path = _temp_beside(self.path)
        self._writer = pq.ParquetWriter(self._temp_path, schema, compression=COMPRESSION)

    def write(self, row: dict[str, Any]) -> None:
        self._pending.append(row)
        if self._packed.rows + len(self._pending) >= self.rows_per_batch:
            self._flush()
        elif self.max_pending_bytes is not None:
            self._pending_bytes += text_bytes(row)
            if self._pending_bytes >= self.max_pending_bytes:
                self.park()

    def park(self) -> None:
        """Keep the rows waiting for their row group (`write`'s) compressed, in memory."""
        if self._pending:
            self._packed.add(pa.Table.from_pylist(self._pending, schema=self.schema))
            self._pending = []
            self._pending_bytes = 0

    def write_many(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            self.write(row)

    def write_table(self, table: pa.Table) -> None:
        """Append the rows of `table` (of this schema): the same row groups, and so the same
        bytes, as its rows given to `write` one by one (each group one contiguous table)."""
        self._tables.append(table)
        self._table_rows += table.num_rows
        while self._table_rows >= self.rows_per_batch:
            self._flush_tables(self.rows_per_batch)

    def _flush_tables(self, rows: int) -> None:
        whole = pa.concat_tables(self._tables).combine_chunks()
        self._writer.write_table(whole.slice(0, rows))
        self.rows_written += rows
        self._tables = [whole.slice(rows)] if whole.num_rows > rows else []
        self._table_rows = whole.num_rows - rows

    def _flush(self) -> None:
        if self._table_rows:
            self._flush_tables(self._table_rows)
        if self._packed.rows or self._pending:
            batch = pa.Table.from_pylist(self._pending, schema=self.schema)
            if self._packed.rows:  # one contiguous table, as the rows converted at once
                batch = pa.concat_tables([*self._packed.take(), batch]).combine_chunks()
            self._writer.write_table(batch)
            self.rows_written += batch.num_rows
            self._pending = []
            self._pending_bytes = 0

    def close(self) -> None:
        """Finish the file and move it into place (once: a sink closed early, when it can get
        no more rows, is not closed again when its `with` block ends)."""
        if self.closed:
            return
        self._flush()
        self._writer.close()
        os.replace(self._temp_path, self.path)
        self.closed = True

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


def text_bytes(row: dict[str, Any]) -> int:
    """About the bytes a row's text takes (its strings' lengths): what a sink's waiting rows
    are capped by."""
    return sum([len(value) for value in row.values() if value.__class__ is str])


# --- SQL ----------------------------------------------------------------------------------------

Files = Path | str | Sequence[Path]  # one Parquet file, or the files of every shard of a domain


def file_list(files: Files) -> list[str]:
    """The file(s) as a list of strings: what DuckDB's read_parquet($param) takes. No file at
    all is an error (a check never passes on nothing)."""
    listed = [str(files)] if isinstance(files, (str, Path)) else [str(f) for f in files]
    if not listed:
        raise FileNotFoundError("no Parquet file given (a partition with no shard on disk?)")
    return listed


def row_count(files: Files) -> int:
    """Rows in the file(s), from the Parquet footers."""
    return sum(pq.read_metadata(f).num_rows for f in file_list(files))


def sql_literal(value: object) -> str:
    """A SQL string literal of `value` (single quotes doubled)."""
    return "'" + str(value).replace("'", "''") + "'"


def sql_path(path: Path | str) -> str:
    """A file path or glob as a SQL string literal, for SQL that cannot bind it (a view)."""
    return sql_literal(str(path))


def parquet_view(con: duckdb.DuckDBPyConnection, view: str, path: Path | str,
                 file_row_number: bool = False) -> None:
    """Name the Parquet file or glob `path` as the temporary view `view` of `con` (a view
    cannot take bound parameters, so the path is quoted here, once, for every stage). The
    view has the file's columns only: no hive column from the folder names (a `shard=<s>`
    folder would add one; every table holds its own domain column)."""
    options = ", hive_partitioning = false"
    options += ", file_row_number = true" if file_row_number else ""
    con.execute(f"CREATE TEMP VIEW {view} AS SELECT * FROM read_parquet({sql_path(path)}{options})")


@cache
def _read_sql(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def load_sql(module_file: str | Path, name: str) -> str:
    """The text of the SQL file `name` beside the module `module_file` (pass `__file__`)."""
    return _read_sql(Path(module_file).resolve().parent / name)


def scalar_query(sql: str, **params: object) -> int:
    """The integer in the first column of the first row of `sql` (0 when there is no row)."""
    with duckdb.connect() as connection:
        row = connection.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


def query_arrow(con: duckdb.DuckDBPyConnection, sql: str, params: dict | None = None
                ) -> pa.Table:
    """Run a query and read its result fully into an Arrow table."""
    return con.sql(sql, params=params).to_arrow_table()


# --- checks -------------------------------------------------------------------------------------

@dataclass
class CheckOutcome:
    """The verdict of one check, with the figures that explain it."""

    passed: bool
    description: str
    figures: dict[str, Any] = field(default_factory=dict)
