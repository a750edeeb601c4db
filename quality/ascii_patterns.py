"""Two regex features of turn_features.sql for the rows whose observation is ASCII, by polars.

DuckDB runs the error patterns and the empty-output wrappers (quality/patterns.py) with RE2, at
about 1.3 and 1.4 CPU s per 148k turns; polars' Rust regex runs the same patterns over the same
texts in 0.57 and 0.59, once its word boundaries are ASCII ones. The two engines agree on an
ASCII text once the Perl classes are spelled out, and only there:

- RE2's `\\w`, `\\d`, `\\s` and `\\b` are ASCII (`\\s` is `[\\t\\n\\f\\r ]`, no `\\v`); Rust's
  are Unicode. `rust_pattern` writes them as explicit ASCII classes (`(?-u:\\b)` for `\\b`),
  which match the same characters of an ASCII text in both.
- Case-insensitive matching folds by Unicode tables that may differ between the engines'
  versions (`ſ` for `s`, the Kelvin sign for `k`): within ASCII the orbit of a letter is its two
  cases in both.
- Both take the leftmost match, the first alternative first; no wrapper pattern matches the
  empty text, so RE2's global replace and Rust's `replace_all` remove the same spans.

So the columns are decided for ASCII observations only (NULL elsewhere: the query decides);
tests/test_ascii_patterns.py compares them with the query's own on every kind of row.

    ascii_pattern_columns(turns, obs_chars, head_tail_chars)
        -> {"ascii_error_text": BooleanArray, "ascii_content_chars": Int64Array}
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import polars as pl
import pyarrow as pa

from quality import patterns
from quality.action_echo import one_array
from quality.text_pool import non_ascii_rows, string_buffers

# RE2's Perl classes (re2/perl_groups.cc), as explicit classes: (outside a class, inside one)
_CLASSES = {
    "d": ("[0-9]", "0-9"),
    "D": ("[^0-9]", None),
    "s": ("[\\t\\n\\f\\r ]", "\\t\\n\\f\\r "),
    "S": ("[^\\t\\n\\f\\r ]", None),
    "w": ("[0-9A-Za-z_]", "0-9A-Za-z_"),
    "W": ("[^0-9A-Za-z_]", None),
    "b": ("(?-u:\\b)", None),
    "B": ("(?-u:\\B)", None),
}


@lru_cache(maxsize=64)  # (a Python walk of every character: 0.12 CPU s per 148k turns)
def rust_pattern(re2: str) -> str:
    """An RE2 pattern with its Perl classes and word boundaries written as ASCII ones, for
    Rust's regex (exact on ASCII texts; a negated class inside a class is refused)."""
    out, in_class, k = [], False, 0
    while k < len(re2):
        char = re2[k]
        if char == "\\":
            escaped = re2[k + 1]
            if escaped in _CLASSES:
                spelled = _CLASSES[escaped][in_class]
                if spelled is None:
                    raise ValueError(f"\\{escaped} inside a class: {re2!r}")
                out.append(spelled)
            else:
                out.append(re2[k: k + 2])
            k += 2
            continue
        k = _class_step(re2, k, in_class, out)
        in_class = _in_class_after(re2, k, char, in_class)
    return "".join(out)


def _class_step(re2: str, k: int, in_class: bool, out: list[str]) -> int:
    """Copy one unescaped character (with a class's opening `^` and a leading `]`)."""
    if not in_class and re2[k] == "[":
        end = k + 1 + (re2[k + 1: k + 2] == "^")
        end += re2[end: end + 1] == "]"  # a leading `]` is a literal in RE2
        out.append(re2[k: end])
        return end
    if in_class and re2[k] == "[":
        raise ValueError(f"a `[` inside a class reads differently in Rust: {re2!r}")
    out.append(re2[k])
    return k + 1


def _in_class_after(re2: str, k: int, char: str, in_class: bool) -> bool:
    """Whether the character at `k` is inside a class, after `char` was copied."""
    if not in_class:
        return char == "["
    return char != "]"


def ascii_pattern_columns(inputs: pa.Table, obs_chars: pa.Array, head_tail_chars: int,
                          non_ascii: np.ndarray | None = None) -> dict[str, pa.Array]:
    """Of `inputs` (raw turns) with `obs_chars` (their observations' lengths):
    `ascii_error_text` (the error patterns found in the start and end of the observation,
    where the query scans them: no error flag, no exit code) and `ascii_content_chars` (the
    length of the trimmed observation once empty-output wrappers are removed, 0 without a letter
    or digit), for the rows whose observation is ASCII; NULL elsewhere. `non_ascii`: the
    observations' non_ascii_rows where the caller has them."""
    observation = one_array(inputs["observation"])
    if non_ascii is None:
        non_ascii = non_ascii_rows(*string_buffers(observation))
    ascii_rows = ~non_ascii
    frame = pl.DataFrame({
        "observation": pl.Series(observation),
        "format": pl.Series(inputs["observation_format"].combine_chunks()),
        "obs_chars": pl.Series(obs_chars),
        "scanned": pl.Series(_scanned_rows(inputs) & ascii_rows),
    }).with_row_index("row").filter(pl.Series(ascii_rows))
    head_tail = _head_tail(frame, head_tail_chars)
    n = inputs.num_rows
    rows = frame["row"].to_numpy()
    scanned = frame["scanned"].to_numpy()
    found = _error_text(head_tail.filter(scanned), frame["format"].filter(scanned))
    return {"ascii_error_text": _scattered(n, rows[scanned], found, pa.bool_()),
            "ascii_content_chars": _scattered(n, rows, _content_chars(head_tail), pa.int64())}


def _scanned_rows(inputs: pa.Table) -> np.ndarray:
    """Rows whose error text the query scans in the observation's start and end (`scanned` is
    `head_tail`): no error flag and no exit code."""
    flagged = inputs["is_error"].fill_null(False).to_numpy(zero_copy_only=False)
    no_exit_code = inputs["exit_code"].is_null().to_numpy(zero_copy_only=False)
    return ~flagged & no_exit_code


def _head_tail(frame: pl.DataFrame, chars: int) -> pl.Series:
    """turn_features.sql's `head_tail`: the observation, or its first and last `chars`
    characters joined by a line break where it is longer than twice that (only those rows
    built anew: 0.13 -> 0.06 CPU s per 148k against a `when` over every row)."""
    texts = frame["observation"]
    long = (frame["obs_chars"] > 2 * chars).to_numpy()
    if not long.any():
        return texts
    cut = texts.filter(long)
    return texts.scatter(np.flatnonzero(long), cut.str.slice(0, chars) + "\n"
                         + cut.str.slice(-chars))


def _error_text(head_tail: pl.Series, formats: pl.Series) -> np.ndarray:
    """Any error pattern of the row's format in its text (the query's `error_text_found`):
    one alternation of the generic and the format's patterns over each format's rows (one
    scan a text: 0.89 -> 0.57 CPU s per 148k turns against a generic scan and a format's)."""
    found = np.zeros(len(head_tail), dtype=np.bool_)
    generic = patterns.GENERIC_ERRORS + patterns.REFUSALS
    for fmt in sorted(formats.unique().to_list()):
        rows = (formats == fmt).to_numpy()
        regex = rust_pattern(patterns.any_of(generic + patterns.FORMAT_ERRORS.get(fmt, ())))
        found[rows] = head_tail.filter(rows).str.contains(regex).to_numpy()
    return found


def _content_chars(head_tail: pl.Series) -> np.ndarray:
    """The query's `content_chars` for ASCII texts: the length of the text without its
    empty-output wrappers and its leading and trailing spaces (the only ASCII character of
    Unicode's Zs, which trim() drops), 0 where no ASCII letter or digit is left."""
    unwrapped = head_tail.str.replace_all(
        rust_pattern(patterns.any_of(patterns.EMPTY_OUTPUT_WRAPPERS)), "")
    trimmed = unwrapped.str.strip_chars(" ").str.len_bytes().to_numpy().astype(np.int64)
    return np.where(unwrapped.str.contains("[A-Za-z0-9]").to_numpy(), trimmed, 0)


def _scattered(n: int, rows: np.ndarray, values: np.ndarray, kind: pa.DataType) -> pa.Array:
    """`values` at `rows` of an n-row column, NULL elsewhere."""
    out = np.zeros(n, dtype=values.dtype)
    out[rows] = values
    mask = np.ones(n, dtype=bool)
    mask[rows] = False
    return pa.array(out, kind, mask=mask)
