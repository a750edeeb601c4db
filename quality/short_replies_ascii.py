"""short_replies._short_reply for many ASCII texts at once: the same regex steps as polars
passes (Rust's regex) over a column, each pattern written with ASCII classes that match on
ASCII text exactly what short_replies' Python patterns match (tests/test_short_replies_ascii.py
holds the two side by side).

Why the patterns are spelled out instead of reused:
- Python's `\\s` on a str matches the separators \\x1c-\\x1f as well (str.isspace), Rust's
  does not: every `\\s` is the class _SPACE;
- Rust's regex has no look-ahead: _REPLY_KEY's `(?=\\s|$)` becomes a group that takes the
  next character and puts it back in the replacement (no key can start on a space that
  follows a colon, so taking it hides no match);
- str.splitlines also breaks at \\r, \\v, \\f and \\x1c-\\x1e: those become \\n first;
- `\\b` is `(?-u:\\b)`, the ASCII boundary (Python's on ASCII text; Rust's Unicode one
  would leave the fast engines).
Both engines pick the leftmost match and, among alternatives, the first (Rust's leftmost-
first semantics are a backtracker's), and no pattern here can match empty.
"""

from __future__ import annotations

import polars as pl

from quality.short_replies import ACK_WORDS

REPLY_SCHEMA = {"ack_words": pl.Int64, "ack_lines": pl.Int64, "ack_phrase": pl.Boolean,
                "foreign_ids": pl.Int64}

_SPACE = r"[\t\n\x0b\x0c\r \x1c-\x1f]"  # Python's \s on ASCII
_W = "0-9A-Za-z_"  # \w on ASCII (inside a class)
EXIT_STATUS = (rf"(?i)\[?{_SPACE}*(the )?(command )?(completed|finished|exited)? ?with "
               rf"(return|exit) (code|status):? ?-?[0-9]+\.?{_SPACE}*\]?"
               r"|\[(current working directory|python interpreter): [^\]\n]*\]"
               rf"|<returncode>{_SPACE}*-?[0-9]+{_SPACE}*</returncode>|</?output>")
REPLY_KEY = (rf'(?m)"[{_W} .-]{{1,40}}"{_SPACE}*:'
             rf"|^[ \t]*-?[ \t]*[a-z_][a-z0-9_]*:({_SPACE}|$)")  # (group 1: the look-ahead)
LINE_BREAK = r"\r\n|[\r\x0b\x0c\x1c-\x1e]"  # (besides \n: str.splitlines' breaks on ASCII)
NUMBERISH = r"[0-9](?:[0-9]{3}-[0-9]{2}-[0-9]{2}(?:[T ][0-9:.]+Z?)?|[0-9]*(?:[:.,][0-9]+)*)"
WORD = "[A-Za-z][A-Za-z]+"
PAST_TENSE = "^[A-Z][a-z]{2,}ed$"
ALNUM = "[0-9A-Za-z]"
# A word is a whole run of letters (WORD is greedy and starts after a non-letter), so "a
# word of ACK_WORDS" is one of them between non-letters, in any case.
ACK_WORD = "(?:^|[^A-Za-z])(?:" + "|".join(sorted(ACK_WORDS)) + ")(?:[^A-Za-z]|$)"
IDENTIFIER = (rf"[{_W}.+-]+@[{_W}-]+\.[{_W}.]+|(?:[{_W}.-]*/[{_W}.-]+)+"
              rf"|(?-u:\b)[A-Za-z_]+[0-9][{_W}]*|(?-u:\b)[{_W}]+[._-][{_W}]+[{_W}.-]*")


def ascii_short_replies(texts: list[str]) -> pl.DataFrame:
    """(ack_words, ack_lines, ack_phrase, foreign_ids) of each ASCII text, as
    short_replies._short_reply gives them, as a frame in the texts' order (REPLY_SCHEMA)."""
    rest = pl.col("text")
    # (_short_reply's guard, which decides: the frame lines and </output> hold no "with")
    exited = (pl.when(rest.str.contains("(?i)with") | rest.str.contains("<returncode>",
                                                                        literal=True))
              .then(rest.str.replace_all(EXIT_STATUS, " ")).otherwise(rest))
    frame = pl.DataFrame({"text": texts}, schema={"text": pl.String}).select(exited)
    keyed = (pl.when(rest.str.contains(":", literal=True))  # (a key has a colon)
             .then(rest.str.replace_all(REPLY_KEY, " ${1}")).otherwise(rest))
    line = pl.element()
    counted = (line.str.contains(ALNUM) & ~(line.str.contains(":", literal=True)
                                            & line.str.contains(REPLY_KEY)))
    frame = frame.select(
        rest.str.replace_all(LINE_BREAK, "\n").str.split("\n")
        .list.eval(counted).list.sum().cast(pl.Int64).alias("ack_lines"),
        keyed.alias("keyed"))
    plain = pl.col("keyed").str.replace_all(NUMBERISH, " ")
    frame = frame.with_columns(plain.alias("plain"))
    plain = pl.col("plain")
    ack = (~pl.col("keyed").str.contains(ALNUM) | plain.str.to_lowercase().str.contains(ACK_WORD)
           | plain.str.extract(f"({WORD})").str.contains(PAST_TENSE).fill_null(False))
    return frame.select(
        plain.str.count_matches(WORD).cast(pl.Int64).alias("ack_words"), "ack_lines",
        ack.alias("ack_phrase"),
        pl.when(ack).then(plain.str.count_matches(IDENTIFIER)).otherwise(0)
        .cast(pl.Int64).alias("foreign_ids"))
