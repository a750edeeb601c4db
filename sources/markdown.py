"""Text in a Markdown table cell, shown as written: the Dagster UI renders metadata and
descriptions as Markdown, where `<tool_response>` is read as an HTML tag and vanishes, `*` and
`_` turn into emphasis and `|` ends the cell."""

from __future__ import annotations

import re

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
