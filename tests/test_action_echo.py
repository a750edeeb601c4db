"""The compiled ASCII test of action_in_observation against its plain definitions."""

from __future__ import annotations

import random

import duckdb
import pyarrow as pa

from quality.action_echo import ascii_action_echoes

_TRIM = " \t\n\r"


def _reference(action: str | None, observation: str | None) -> bool | None:
    """Python's definition: None unless both texts are ASCII."""
    if action is None or observation is None or not (action.isascii() and observation.isascii()):
        return None
    stripped = action.strip(_TRIM)
    return len(stripped) >= 2 and stripped.lower() in observation.lower()


def _duckdb(actions: list[str | None], observations: list[str | None]) -> list[bool | None]:
    """turn_features.sql's own test, as DuckDB runs it."""
    table = pa.table({"action": pa.array(actions, pa.large_string()),
                      "observation": pa.array(observations, pa.large_string())})
    con = duckdb.connect()
    con.register("t", table)
    rows = con.execute(
        "SELECT length(trim(action, ' ' || chr(9) || chr(10) || chr(13))) >= 2"
        " AND contains(lower(observation), lower(trim(action, ' ' || chr(9) || chr(10)"
        " || chr(13)))) FROM t").fetchall()
    return [row[0] for row in rows]


HAND_MADE = [
    ("ls -la", "$ LS -LA\ntotal 0"), ("  ls\t\r\n", "ls"), ("ls", "l s"), ("", "x"),
    (" \t", "abc"), ("ABC", "xxabcxx"), ("abc", "xxABxx"), ("[1]", "click [1]"),
    ("a", ""), ("abc", "ab"), ("@[", "`{"), ("Z", "z"), ("z", "Z"), ("{", "["),
    ("aab", "aaab"), ("abab", "ababab"), ("x\ny", "x\nY"), ("é", "é"), ("e", "é"),
    ("K", "\u212a"), ("k", "\u212a"), (None, "x"), ("x", None), (None, None),
    ("a\x00b", "A\x00B"), ("\x7f", "\x7f"), ("cd", "ab\u00e9cd"), ("a", "a"), (" x\t", "x"),
    ("xy", "XY"), ("\tx y\n", "X Y"),
]


def test_hand_made_rows() -> None:
    actions = [a for a, _ in HAND_MADE]
    observations = [o for _, o in HAND_MADE]
    got = ascii_action_echoes(pa.array(actions, pa.large_string()),
                              pa.array(observations, pa.large_string())).to_pylist()
    assert got == [_reference(a, o) for a, o in HAND_MADE]
    sql = _duckdb(actions, observations)
    assert all(g == s for g, s in zip(got, sql, strict=True) if g is not None)


def test_random_ascii_texts_and_chunks() -> None:
    rng = random.Random(17)
    alphabet = "aAbB[] \t\n\r-_.zZ@`{"
    actions = ["".join(rng.choices(alphabet, k=rng.randint(0, 6))) for _ in range(3000)]
    observations = ["".join(rng.choices(alphabet, k=rng.randint(0, 40))) for _ in range(3000)]
    chunked = (pa.chunked_array([actions[:1000], actions[1000:]], pa.string()),
               pa.chunked_array([observations[:1700], observations[1700:]], pa.string()))
    got = ascii_action_echoes(*chunked).to_pylist()
    assert got == [_reference(a, o) for a, o in zip(actions, observations, strict=True)]
    assert got == _duckdb(actions, observations)
    sliced = ascii_action_echoes(pa.array(actions).slice(5, 100),
                                 pa.array(observations).slice(5, 100)).to_pylist()
    assert sliced == got[5:105]


def test_a_quadratic_row_is_left_to_the_query() -> None:
    """An action of 5,000 `a` and a `b` in 200,000 `a`: a plain scan would compare ~10^9 bytes;
    the row comes back undecided (the query answers it), a cheap row beside it does not."""
    actions = ["a" * 5000 + "b", "a" * 5000]
    observations = ["a" * 200_000, "a" * 200_000]
    got = ascii_action_echoes(pa.array(actions, pa.large_string()),
                              pa.array(observations, pa.large_string())).to_pylist()
    assert got == [None, True]
    assert _duckdb(actions, observations) == [False, True]


def test_empty() -> None:
    assert len(ascii_action_echoes(pa.array([], pa.large_string()),
                                   pa.array([], pa.large_string()))) == 0
