"""The turn SQL's error check (one regexp a row) against its written form: the generic patterns
OR the format's own, each a regexp of its own."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from quality import patterns
from quality.turn_sql import error_checks
from sources.storage import sql_literal


def _separate(column: str) -> str:
    """The check as two regexps a row (the form before they were joined)."""
    def matches(regexes: tuple[str, ...]) -> str:
        return f"regexp_matches(t.{column}, {sql_literal(patterns.any_of(regexes))})"

    found = [matches(patterns.GENERIC_ERRORS + patterns.REFUSALS)]
    for fmt, extra in sorted(patterns.FORMAT_ERRORS.items()):
        found.append(f"(t.observation_format = {sql_literal(fmt)} AND {matches(extra)})")
    return " OR ".join(found)


TEXTS = [
    None, "", "all good", "Traceback (most recent call last):\n  x", "ERR_CONNECTION_REFUSED",
    '{"isError": true}', '{"error": "x"}', "android:id/aerr_close", "Toast: \"upload failed\"",
    "404 Not Found", "chrome-error://chromewebdata/", '"success": false', "[0] dialog error here",
    "Error executing tool", "could not open file", "bash: x: command not found", "E: apt",
    "No results found", "timed out", '"status": 500', "The page isn't responding",
]
FORMATS = [None, "stdout", "terminal_screen", *sorted(patterns.FORMAT_ERRORS)]


def test_one_regexp_a_row_finds_what_two_found() -> None:
    rows = [(text, fmt) for text in TEXTS for fmt in FORMATS]
    table = pa.table({"scanned": [t for t, _ in rows], "observation_format": [f for _, f in rows]})
    con = duckdb.connect()
    con.register("rows", table)
    joined, separate = (
        [r[0] for r in con.execute(f"SELECT CASE WHEN {check} THEN true ELSE false END "
                                   "FROM rows AS t").fetchall()]
        for check in (error_checks("scanned"), _separate("scanned")))
    assert joined == separate
    assert any(joined) and not all(joined)
