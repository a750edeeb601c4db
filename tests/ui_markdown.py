"""What the Dagster UI's Markdown renderer would drop or break in a text: raw HTML (`<think>`,
`<tool_response>` are read as tags and vanish), images whose source the browser cannot load
(a path relative to a file the UI does not serve), and `{data}` placeholders outside code."""

from __future__ import annotations

from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

_PARSER = MarkdownIt("commonmark", {"html": True}).enable("table")
_LOADABLE = ("data:image/", "http://", "https://")


def _tokens(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        yield from _tokens(token.children or [])


def ui_problems(markdown: str) -> list[str]:
    """Each piece of `markdown` the UI would not show as written."""
    problems = []
    for token in _tokens(_PARSER.parse(markdown)):
        if token.type in ("html_inline", "html_block"):
            problems.append(f"raw HTML dropped: {token.content.strip()[:60]}")
        elif token.type == "image" and not str(token.attrs.get("src", "")).startswith(_LOADABLE):
            problems.append(f"image that cannot load: {token.attrs.get('src')}")
        elif token.type == "text" and "{data}" in token.content:
            problems.append(f"literal placeholder: {token.content.strip()[:60]}")
    return problems


def rendered_table(markdown: str) -> list[list[str]]:
    """The body cells of the first table in `markdown` as the reader sees them (plain text)."""
    rows, row, cell, in_body = [], [], None, False
    for token in _PARSER.parse(markdown):
        if token.type == "tbody_open":
            in_body = True
        elif in_body and token.type == "tr_open":
            row = []
        elif in_body and token.type == "tr_close":
            rows.append(row)
        elif in_body and token.type == "inline":
            cell = "".join(child.content for child in token.children or []
                           if child.type in ("text", "code_inline"))
            row.append(cell)
        elif token.type == "tbody_close":
            break
    return rows
