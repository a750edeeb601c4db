"""turn_features.sql rendered and run by DuckDB over several batches of turns at once.

DuckDB compiles every regular expression of a query again for each query (and each thread),
and each compiled pattern builds its RE2 automaton's states afresh as it meets the texts: with
the error patterns, that start-up is about a fifth of the query's CPU on a 16k-turn batch
(measured on the 148k-turn corpus's 15 batches: 7.2 CPU s one query a batch, 5.7 in one
query). So the batches' inputs wait here and one query runs over up to `rows` turns or
`max_bytes` bytes of them; each batch then gets its own rows back, in order. The query is
row-local (no window, no aggregate), so its rows do not depend on which batches run together.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from quality import patterns
from sources.duckdb_cursors import duckdb_cursor
from sources.storage import load_sql, query_arrow, sql_literal

# The characters DuckDB's trim() drops (utf8proc's category Zs), as an RE2 class: content_chars
# measures the trimmed text without building it (tests/test_quality_features.py checks the set).
TRIM_SPACES = r"[ \x{00A0}\x{1680}\x{2000}-\x{200A}\x{202F}\x{205F}\x{3000}]"


# Each thread's connection to this process's turn-features database (sources.duckdb_cursors keeps
# one a process and role), which stays open with the query TurnSqlGroups prepares on it: opening
# a database costs 20-30 ms of CPU, and planning turn_features.sql 40-60 ms (DuckDB compiles its
# regular expressions as it binds them), each once a process and thread instead of once a shard.
_THREAD = threading.local()


def connect(threads: int, memory_limit: str) -> duckdb.DuckDBPyConnection:
    """This thread's DuckDB connection for the turn features (not to be closed: the next shard
    of the process takes it up again); the settings apply to the turn features' database whole."""
    if getattr(_THREAD, "pid", None) != os.getpid():
        _THREAD.pid, _THREAD.con, _THREAD.prepared = (os.getpid(), duckdb_cursor("turn_features"),
                                                      {})
    con = _THREAD.con
    con.execute(f"SET threads = {int(threads)}")
    con.execute(f"SET memory_limit = {sql_literal(memory_limit)}")
    con.execute("SET enable_progress_bar = false")  # a bar per batch query floods the logs
    return con


def render_turn_sql(head_tail_chars: int) -> str:
    """turn_features.sql with the error and empty-output patterns of quality/patterns.py."""
    def checks(column: str) -> str:
        """Any error pattern of the observation's format found in `column`."""
        def matches(regexes: tuple[str, ...]) -> str:
            return f"regexp_matches(t.{column}, {sql_literal(patterns.any_of(regexes))})"

        found = [matches(patterns.GENERIC_ERRORS + patterns.REFUSALS)]
        for fmt, extra in sorted(patterns.FORMAT_ERRORS.items()):
            found.append(f"(t.observation_format = {sql_literal(fmt)} AND {matches(extra)})")
        return "\n                OR ".join(found)

    wrappers = sql_literal(patterns.any_of(patterns.EMPTY_OUTPUT_WRAPPERS))
    errors = sql_literal(patterns.any_of(patterns.GENERIC_ERRORS + patterns.REFUSALS))
    success = sql_literal(patterns.SUCCESS_LAST_LINE)
    # the last or the first line reports success and is no error message itself (both lines
    # are NULL together, where `bare` is). Each line written out: a lambda over both compiled
    # its patterns once per query but ran slower, which paid only while a query was a batch
    # (over 64k-turn queries 5.84 -> 5.31 CPU s per 148k turns, the same rows).
    recovered = " OR ".join(
        f"(regexp_matches(t.{line}, {success}) AND NOT regexp_matches(t.{line}, {errors}))"
        for line in ("last_line", "first_line"))
    return (load_sql(__file__, "turn_features.sql")
            .replace("{error_text}", checks("scanned"))
            .replace("{output_status}", sql_literal(patterns.OUTPUT_STATUS))
            .replace("{recovered}", f"({recovered})")
            .replace("{trailing_prompts}", sql_literal(patterns.TRAILING_PROMPTS))
            .replace("{empty_wrappers}", wrappers)
            .replace("{spaces}", TRIM_SPACES)
            .replace("$head_tail_chars", str(int(head_tail_chars))))


@dataclass
class TurnSqlGroups:
    """Batches' query inputs (`turns` of turn_features.sql, traj_seq increasing across
    batches) waiting for one query over all of them, each with the columns to append after
    the query's (`tail`)."""

    con: duckdb.DuckDBPyConnection
    sql: str
    rows: int
    max_bytes: int
    _inputs: list[pa.Table] = field(default_factory=list)
    _tails: list[dict[str, pa.Array]] = field(default_factory=list)

    def add(self, inputs: pa.Table, tail: dict[str, pa.Array]) -> list[pa.Table]:
        """Queue one batch; the finished batches (see `flush`) once enough rows wait."""
        self._inputs.append(inputs)
        self._tails.append(tail)
        if (sum(t.num_rows for t in self._inputs) >= self.rows
                or sum(t.nbytes for t in self._inputs) >= self.max_bytes):
            return self.flush()
        return []

    def flush(self) -> list[pa.Table]:
        """One query over every waiting batch: per batch, its rows of the query's result with
        its tail columns appended."""
        if not self._inputs:
            return []
        inputs, tails = self._inputs, self._tails
        self._inputs, self._tails = [], []
        self.con.register("turns", inputs[0] if len(inputs) == 1 else pa.concat_tables(inputs))
        result = _run(self.con, self.sql)
        self.con.unregister("turns")
        _check_order(inputs, result)
        parts, at = [], 0
        for batch, tail in zip(inputs, tails, strict=True):
            part = result.slice(at, batch.num_rows)
            for name, column in tail.items():
                part = part.append_column(name, column)
            parts.append(part)
            at += batch.num_rows
        return parts


def _run(con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
    """`sql`'s result: prepared once (a statement a text) where `con` is this thread's
    connection, and executed; as it is on any other connection. (A prepared statement reads the
    `turns` registered when it runs: DuckDB binds it again when the view changes, without
    planning it anew.)"""
    if getattr(_THREAD, "pid", None) != os.getpid() or con is not _THREAD.con:
        return query_arrow(con, sql)
    name = _THREAD.prepared.get(sql)
    if name is None:
        name = f"turn_features_{len(_THREAD.prepared)}"
        con.execute(f"PREPARE {name} AS {sql}")
        _THREAD.prepared[sql] = name
    return con.sql(f"EXECUTE {name}").to_arrow_table()


def _check_order(inputs: list[pa.Table], result: pa.Table) -> None:
    """The query's rows are the inputs' rows in their order (DuckDB keeps the insertion order
    of a query without ORDER BY): a batch's tail columns are appended by position."""
    for name in ("traj_seq", "turn_index"):
        expected = pa.chunked_array([t[name].combine_chunks() for t in inputs])
        if not result[name].cast(expected.type).equals(expected):
            raise RuntimeError(f"turn_features.sql's rows are not in the inputs' order ({name})")
