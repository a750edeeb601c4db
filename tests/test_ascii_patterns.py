"""quality/ascii_patterns.py against DuckDB's RE2, the engine it stands in for.

The columns must be what turn_features.sql computes where they are set (ASCII observations) and
NULL elsewhere: hand-made rows for every pattern, case-changed copies, random texts made of the
patterns' own pieces, and rows with the characters where the engines part (`ſ`, the Kelvin sign,
`İ`, `ı`, a vertical tab, a non-ASCII letter beside a word boundary).
"""

from __future__ import annotations

import random

import duckdb
import polars as pl
import pyarrow as pa
import pytest

from quality import patterns
from quality.action_echo import ascii_action_echoes
from quality.ascii_patterns import ascii_pattern_columns, rust_pattern
from quality.turn_sql import TRIM_SPACES, render_turn_sql
from sources.storage import sql_literal

HEAD_TAIL = 2000

ERRORS = [
    "Traceback (most recent call last):\n  x", "ValueError: bad", "  E   KeyError:",
    "fatal: not a git repository", "npm error: x", "Network Error[E-1] : x", "FAILED TO start",
    "[ERROR] x", "E: Unable", "failed. Error: HTTPError: 404", "404 Not Found here",
    "file foo.py not found", "bash: x: command not found", "No Such File Or Directory",
    "exit code 1", "Return code: -2", "No results found", "x: not found", "wrong answer",
    "Wrong\n", "has introduced new syntax errors", "edit was rejected", "ACCESS DENIED",
    "access to /etc is restricted", "timed out", "no such table", '{"total": 0}',
    "ls: invalid option", "No file is open. Use open.", '"isError": true', '{"error": 1}',
    '"status": "failed"', '"statusCode": 503', '"success": false', "[ error", '"text": "Failed',
    "502 bad gateway", "ERR_CONNECTION_REFUSED", "chrome-error://x", "about:neterror",
    "android:id/aerr_close", "App keeps stopping", 'Toast "could not save"',
    "[3] dialog 'Error'", "unable to connect", "error", "errors: none", "succeeded",
    "a\x0berror: x", "\x0b  error: x", "x\n\x0bTraceback (most recent call last):",
]
WRAPPERS = [
    "<output>\n</output>", "<returncode>0</returncode>\n<output>\n</output>",
    "Current Terminal Screen:\n", "root@4c2a9f1e8b3d:/app# ", "user@host:~$", "Tab 0 (current): x",
    "[1] RootWebArea 'Page' focused: True", "[0] IMG ''", "[0] ?", "[NO relevant elements]",
    "screenshot: a.PNG", "[image]", "[Screenshot removed to save tokens]",
    "Here is the next screenshot.", "Executed the tool call: []",
    '{"type":"text","text":"hi","annotations":null}', "a\\nb\\t", '{"jsonrpc": "2.0", "id": 7,'
    ' "result": {"content": []}}', "   abc   ", "   ", "", "\t x \t", "\x0b", "..", "_", "x",
]
ODD = ["\u017f", "\u212a", "\u0130", "\u0131", "\u00e9", "\u00a0", "\u2028", "\x85", "\x0b"]
FORMATS = ["stdout", "json_rpc", "tool_result_text", "a11y_tree", "html", "ui_elements", "text"]


def _texts() -> list[str]:
    """The hand-made texts, their case-changed and odd-character copies, long texts cut at the
    head and tail boundaries, and random texts of pattern pieces."""
    base = ERRORS + WRAPPERS
    texts = base + [t.upper() for t in base] + [t.swapcase() for t in base]
    texts += [t.replace("s", "\u017f").replace("k", "\u212a").replace("i", "\u0130")
              for t in base]
    texts += [t.replace("I", "\u0131").replace(" ", "\u00a0") for t in base]
    texts += ["\u00e9" + t for t in base] + [t + "\u00e9" for t in base]
    for n in (2 * HEAD_TAIL - 5, 2 * HEAD_TAIL, 2 * HEAD_TAIL + 1, 3 * HEAD_TAIL):
        for cut in (HEAD_TAIL - 4, HEAD_TAIL + 2, n - HEAD_TAIL - 3):
            texts.append(("x" * cut + "\nerror: y\n" + "z" * n)[:n])
    rng = random.Random(17)
    pieces = base + [" ", "\n", "\t", "\r", ":", "[", "]", "Error", "ERROR"] + ODD
    texts += ["".join(rng.choices(pieces, k=rng.randint(1, 8))) for _ in range(3000)]
    return texts


def _inputs(texts: list[str], flags: bool = True) -> pa.Table:
    """turn_features.sql's input columns that the patterns read, with formats and flags cycled."""
    n = len(texts)
    return pa.table({
        "observation": pa.array(texts, pa.large_string()),
        "observation_format": pa.array([FORMATS[k % len(FORMATS)] for k in range(n)]),
        "exit_code": pa.array([None if not flags or k % 5 else k % 3 for k in range(n)],
                              pa.int32()),
        "is_error": pa.array([None if not flags or k % 7 else k % 2 == 0 for k in range(n)],
                             pa.bool_()),
    })


def _obs_chars(table: pa.Table) -> pa.Array:
    return pa.array([len(t) for t in table["observation"].to_pylist()], pa.int64())


def _duckdb_reference(table: pa.Table) -> list[tuple[bool, int]]:
    """(error patterns found in head_tail, content_chars) per row, as turn_features.sql has
    DuckDB compute them."""
    def matches(regexes: tuple[str, ...]) -> str:
        return f"regexp_matches(ht, {sql_literal(patterns.any_of(regexes))})"

    extra = " ".join(f"WHEN {sql_literal(fmt)} THEN {matches(regexes)}"
                     for fmt, regexes in sorted(patterns.FORMAT_ERRORS.items()))
    wrappers = sql_literal(patterns.any_of(patterns.EMPTY_OUTPUT_WRAPPERS))
    con = duckdb.connect()
    con.register("t", table)
    return con.execute(f"""
        WITH h AS (SELECT observation_format AS fmt,
                          CASE WHEN length(observation) <= {2 * HEAD_TAIL} THEN observation
                          ELSE left(observation, {HEAD_TAIL}) || chr(10)
                               || right(observation, {HEAD_TAIL}) END AS ht
                   FROM t),
             u AS (SELECT *, regexp_replace(ht, {wrappers}, '', 'g') AS un FROM h)
        SELECT {matches(patterns.GENERIC_ERRORS + patterns.REFUSALS)}
               OR CASE fmt {extra} ELSE false END,
               CASE WHEN regexp_matches(un, '[\\pL\\pN]')
                    THEN length(un) - length(regexp_extract(un, '^{TRIM_SPACES}+'))
                         - length(regexp_extract(un, '{TRIM_SPACES}+$'))
                    ELSE 0 END
        FROM u""").fetchall()


def test_columns_match_duckdb_on_ascii_rows_and_leave_the_others() -> None:
    table = _inputs(_texts(), flags=False)
    columns = ascii_pattern_columns(table, _obs_chars(table), HEAD_TAIL)
    found = columns["ascii_error_text"].to_pylist()
    chars = columns["ascii_content_chars"].to_pylist()
    reference = _duckdb_reference(table)
    texts = table["observation"].to_pylist()
    for text, f, c, (ref_found, ref_chars) in zip(texts, found, chars, reference, strict=True):
        if text.isascii():
            assert (f, c) == (ref_found, ref_chars), text
        else:
            assert (f, c) == (None, None), text
    assert sum(f for f in found if f) > 100  # the rows do exercise the patterns
    assert len({c for c in chars if c is not None}) > 50


def test_error_text_only_where_the_query_scans_head_tail() -> None:
    """No error flag and no exit code: elsewhere the query scans other text (NULL here)."""
    table = _inputs(ERRORS * 5)
    found = ascii_pattern_columns(table, _obs_chars(table), HEAD_TAIL)["ascii_error_text"]
    flags = zip(table["is_error"].to_pylist(), table["exit_code"].to_pylist(), strict=True)
    for value, (is_error, exit_code) in zip(found.to_pylist(), flags, strict=True):
        assert (value is None) == (bool(is_error) or exit_code is not None)


# actions of every length around action_in_observation's 2 characters, ASCII and not
ACTIONS = ("ls", "x", " Er\t", "error", "\u00e9", "", "  \n", "e\u00e9", "exit code", "[0]")


def _query_inputs(table: pa.Table) -> pa.Table:
    """The other input columns of turn_features.sql, with plain values."""
    n = table.num_rows
    ints = {name: pa.array([k % 4 for k in range(n)], pa.int64()) for name in (
        "obs_shingles", "in_action", "in_context", "novel", "in_prev_obs", "new_words",
        "new_words_from_action", "own_words", "prev_obs_shingles", "prev_obs_chars")}
    more = {
        "trajectory_id": pa.array([f"t{k // 3}" for k in range(n)]),
        "turn_index": pa.array([k % 3 for k in range(n)], pa.int32()),
        "domain": pa.array(["terminal"] * n), "source": pa.array(["s"] * n),
        "source_format": pa.array(["f"] * n),
        "action": pa.array([ACTIONS[k % len(ACTIONS)] for k in range(n)], pa.large_string()),
        "action_kind": pa.array(["command"] * n), "tool_name": pa.array([None] * n, pa.string()),
        "traj": pa.array([k // 3 for k in range(n)], pa.int32()),
        "turn": pa.array([k % 3 for k in range(n)], pa.int32()),
        "traj_seq": pa.array([k // 3 for k in range(n)], pa.int64()),
        "short_max_jaccard": pa.array([None] * n, pa.float64()),
        "long_max_jaccard": pa.array([None] * n, pa.float64()),
        "obs_chars": _obs_chars(table),
    }
    for name, column in (ints | more).items():
        table = table.append_column(name, column)
    return table


@pytest.mark.parametrize("flags", [False, True])
def test_the_query_gives_the_same_rows_with_and_without_the_columns(flags: bool) -> None:
    table = _query_inputs(_inputs(_texts(), flags))
    columns = ascii_pattern_columns(table, table["obs_chars"], HEAD_TAIL)
    columns["ascii_echo"] = ascii_action_echoes(table["action"], table["observation"])
    with_columns, without = table, table
    for name, column in columns.items():
        with_columns = with_columns.append_column(name, column)
        without = without.append_column(name, pa.nulls(table.num_rows, column.type))
    sql = render_turn_sql(HEAD_TAIL)
    con = duckdb.connect()
    results = []
    for inputs in (with_columns, without):
        con.register("turns", inputs)
        results.append(con.sql(sql).to_arrow_table())
        con.unregister("turns")
    assert results[0].equals(results[1])
    assert pl.from_arrow(results[0])["error_source"].n_unique() == (4 if flags else 2)  # and null


def test_rust_pattern_spells_perl_classes_as_re2_does() -> None:
    assert rust_pattern(r"\w+\s\d\b") == r"[0-9A-Za-z_]+[\t\n\f\r ][0-9](?-u:\b)"
    assert rust_pattern(r"[\w.-][^\w\n]\W\S\D\B") == (
        r"[0-9A-Za-z_.-][^0-9A-Za-z_\n][^0-9A-Za-z_][^\t\n\f\r ][^0-9](?-u:\B)")
    assert rust_pattern(r"[]\w][^]x]\[\w\]\\w") == r"[]0-9A-Za-z_][^]x]\[[0-9A-Za-z_]\]\\w"
    for bad in (r"[\W]", r"[\S]", r"[\b]", r"[[:alpha:]]"):
        with pytest.raises(ValueError):
            rust_pattern(bad)


def test_every_pattern_compiles_in_polars() -> None:
    texts = pl.Series(["x"])
    for group in (patterns.GENERIC_ERRORS, patterns.REFUSALS, patterns.EMPTY_OUTPUT_WRAPPERS,
                  *patterns.FORMAT_ERRORS.values()):
        texts.str.contains(rust_pattern(patterns.any_of(group)))


def test_no_wrapper_matches_an_empty_text() -> None:
    """(Where a pattern matched the empty text, RE2's global replace and Rust's replace_all
    could step past an empty match differently.)"""
    texts = pl.Series(["", " ", "\n", "\n\n", " \t\n", "a", "[", ":", "\\"])
    for wrapper in patterns.EMPTY_OUTPUT_WRAPPERS:
        lengths = texts.str.extract_all(rust_pattern(wrapper)).list.eval(
            pl.element().str.len_bytes()).explode().drop_nulls()
        assert (lengths > 0).all(), wrapper
