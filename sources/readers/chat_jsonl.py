"""Generic chat JSONL: one OpenAI-chat conversation per line, with optional labels.

    {"messages": [{"role": "system", "content": "You can use tools."},
                  {"role": "user", "content": "What is the weather in Paris?"},
                  {"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
                    "type": "function", "function": {"name": "weather-get_forecast",
                    "arguments": "{\\"city\\": \\"Paris\\"}"}}]},
                  {"role": "tool", "tool_call_id": "c1", "content": "{\\"temp_c\\": 18}"}],
     "task": "...", "domain": "mcp", "outcome": "success"}

Turns come from `chat_messages.py` (one per tool call). Optional fields: `task` (else the
first user message), `outcome` (one of success/failure/unknown, or a boolean
`success`/`pass`/`resolved`), `domain` (kept in metadata["domain"] for the ingest layer), and any
other field, kept in metadata. A line that is not JSON, not UTF-8 or not a conversation becomes a
Quarantine named "line N"; the other lines are still read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sources.readers.base import Reader, read_jsonl_items
from sources.readers.chat_messages import chat_record_items
from sources.schema import Quarantine, Trajectory

JSONL_SUFFIXES = (".jsonl", ".ndjson")


def _first_line_record(head: str) -> tuple[Any, bool] | None:
    """(first JSON line parsed, whether a second line follows), or None if it is not in `head`."""
    stripped = head.lstrip()
    line, newline, rest = stripped.partition("\n")
    if not newline:
        # The whole file may be one line without a final newline; only trust it if it parses.
        line, rest = stripped, ""
    try:
        return json.loads(line), bool(rest.strip())
    except ValueError:
        return None


def _looks_like_chat(record: Any) -> bool:
    messages = record.get("messages") if isinstance(record, dict) else None
    return (
        isinstance(messages, list)
        and bool(messages)
        and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages)
    )


class ChatJsonlReader(Reader):
    """JSONL of `{"messages": [...]}` records with OpenAI tool calls."""

    name: ClassVar[str] = "chat_jsonl"
    generic: ClassVar[bool] = True  # claims only what no specific reader recognises
    domain: ClassVar[str] = "mcp"
    description: ClassVar[str] = (
        "action = `name(arguments)` of each assistant tool call; observation = the `role: tool` "
        "message answering it (by tool_call_id); one conversation per line"
    )

    def sniff(self, path: Path, head: str) -> bool:
        if not head.lstrip().startswith("{"):
            return False
        parsed = _first_line_record(head)
        if parsed is None:
            # First line longer than the sniff window: fall back to markers plus the file name.
            return (
                path.suffix.lower() in JSONL_SUFFIXES
                and head.lstrip().startswith('{"messages"')
                and '"role"' in head
            )
        record, more_lines = parsed
        if not _looks_like_chat(record):
            return False
        if "<information>" in head and "tool_call" not in head:
            return False  # Search-R1 chats: tool use is inline <search>/<information> text
        # A single-object file with a boolean `pass` is a Toolathlon run file, not JSONL.
        toolathlon_like = isinstance(record.get("pass"), bool) and not more_lines
        return not toolathlon_like

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        yield from read_jsonl_items(
            path, lambda source, position, record: chat_record_items(record, source, position)
        )
