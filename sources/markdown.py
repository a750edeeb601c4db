"""Markdown tables, the one writer (the leaderboard, the ablation table, the dataset card, the
Dagster metadata), and text in a cell shown as written: the Dagster UI renders metadata and
descriptions as Markdown, where `<tool_response>` is read as an HTML tag and vanishes, `*` and
`_` turn into emphasis and `|` ends the cell."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

NEWLINE_MARK = "⏎"  # a cell is one line
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]<>&|~])")


def markdown_cell(text: str, limit: int | None = None) -> str:
    """`text` as one table cell: newlines shown as ⏎, cut to `limit` characters (… marks the
    cut), then every character Markdown would interpret backslash-escaped (CommonMark escapes
    any ASCII punctuation), so the cell reads exactly as the cut text."""
    text = text.replace("\r\n", "\n").replace("\n", NEWLINE_MARK)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
                   cell: Callable[[Any], str] = str) -> str:
    """Rows as a Markdown table: a header of `columns` (default: the first row's keys), the
    rule, then one line per row with each value written by `cell`."""
    names = list(columns if columns is not None else rows[0])
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(cell(row[name]) for name in names) + " |" for row in rows]
    return "\n".join(lines)
