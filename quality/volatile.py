"""Identifier masking: the parts of a text that differ between two runs of the same thing
(timestamps, clock times, hex ids, UUIDs, long numbers, durations, id-like words), in one place.

Each caller picks the parts it may forget and what stands in for them:
  * repeated observations (quality/reply_features.py) mask timestamps, UUIDs, clock times, hex
    ids and long numbers (epoch times, byte counts, tokens) with "0": a screen that only ticked
    is the same screen; short numbers stay ("345" after "344" is what changed);
  * the judges' evidence (bench/judges/evidence.py) masks hex ids, timestamps, clock times and
    durations with "#": no model can know them, but a wrong count or price is a wrong prediction,
    so numbers stay;
  * turn-feature shingles (quality/shingles.py) hash every id-like word (`id_like`: 6 or more
    characters with a digit: a container hostname in a shell prompt, a request id, a timestamped
    file name) as one placeholder word, so a terminal's canned output does not look new in each
    run.
The patterns are written for both Python's `re` and polars (Rust regex): no look-around.
"""

from __future__ import annotations

import re
from functools import lru_cache

import polars as pl

TIMESTAMP = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d[\d:.]*(?:Z|[+-]\d\d:?\d\d)?"
# The judges' timestamp also takes what follows up to the next space (",123", "Z]").
TIMESTAMP_TO_SPACE = r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?\S*"
UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
CLOCK_TIME = r"\b\d{1,2}:\d\d(?::\d\d)?\b"
HEX_ID = r"\b[0-9a-f]{8,}\b"  # hashes, container ids (all digits too: 8+ digits)
HEX_ID_UPPER = r"\b[0-9A-F]{8,}\b"
LONG_NUMBER = r"\d{4,}"
DURATION = r"\b\d+(\.\d+)?\s?(ms|s|sec|seconds)\b"

ID_MIN_CHARS = 6
DIGITS = list("0123456789")


def volatile_pattern(*parts: str) -> re.Pattern[str]:
    """The parts as one pattern; where two match at one place the first listed wins."""
    return re.compile("|".join(parts))


# What a repeated observation may differ in (quality/reply_features.py, replaced by "0").
REPEAT_VOLATILE = volatile_pattern(TIMESTAMP, UUID, CLOCK_TIME, HEX_ID, HEX_ID_UPPER, LONG_NUMBER)
# Where REPEAT_VOLATILE in ASCII mode could match otherwise than as written (mask_column): a
# digit beyond 0-9 (Unicode's \d), or a non-ASCII word character beside a hex digit (each \b
# of it has a digit or a hex letter on one side; what is on the other side is a word character
# for Unicode's \b, not for ASCII's). Any other text gets the same matches in both modes.
REPEAT_ASCII_UNSAFE = (r"[\d&&[^0-9]]|[\w&&[^\x00-\x7F]][0-9A-Fa-f]"
                       r"|[0-9A-Fa-f][\w&&[^\x00-\x7F]]")
# What a judge does not count (bench/judges/evidence.py, replaced by "#").
EVIDENCE_VOLATILE = volatile_pattern(HEX_ID, TIMESTAMP_TO_SPACE, CLOCK_TIME, DURATION)


def mask(text: str, pattern: re.Pattern[str], replacement: str) -> str:
    """`text` with every match of `pattern` replaced by `replacement`."""
    return pattern.sub(replacement, text)


def mask_column(texts: pl.Series, pattern: re.Pattern[str], replacement: str,
                ascii_unsafe: str | None = None) -> pl.Series:
    """`mask` for a polars string column (the same pattern, run by polars' regex engine, far
    faster on long texts). A Unicode \\b makes Rust's DFA give up on a text with a non-ASCII
    character (a slower engine then runs: 6% of the observations took 60% of the time), so
    the texts of only ASCII characters, and those that do not hold `ascii_unsafe` (a pattern
    for where the ASCII form could match otherwise), are masked with the pattern in ASCII
    mode, where \\d, \\w, \\s and \\b match on them exactly what their Unicode forms
    match; the others as written."""
    if not _has_ascii_form(pattern.pattern):
        return texts.str.replace_all(pattern.pattern, replacement)
    masked = texts.str.replace_all(f"(?-u){pattern.pattern}", replacement)
    others = (texts.str.len_bytes() != texts.str.len_chars()).fill_null(False).arg_true()
    if ascii_unsafe is not None and len(others):
        others = others.filter(texts.gather(others).str.contains(ascii_unsafe))
    if not len(others):
        return masked
    return masked.scatter(others, texts.gather(others).str.replace_all(pattern.pattern,
                                                                       replacement))


@lru_cache(maxsize=64)
def _has_ascii_form(pattern: str) -> bool:
    """Whether Rust's regex takes `pattern` in ASCII mode: not when a class of it could match
    a byte of a multi-byte character (a negated class, \\S, a dot)."""
    try:
        pl.Series([""]).str.contains(f"(?-u){pattern}")
    except pl.exceptions.ComputeError:
        return False
    return True


def id_like(words: pl.Expr) -> pl.Expr:
    """Per word: ID_MIN_CHARS or more characters with a digit in it (shingles mask these)."""
    return (words.str.len_chars() >= ID_MIN_CHARS) & words.str.contains_any(DIGITS)
