"""Toolathlon run files: one OpenAI-chat conversation and its pass/fail verdict per file.

    {"pass": true, "messages": [
      {"role": "user", "content": "Please check my inbox for an email from 'kaiming' ..."},
      {"role": "assistant", "content": "...", "tool_calls": [{"id": "toolu_015h...",
        "type": "function", "function": {"name": "emails-search_emails",
        "arguments": "{\\"query\\": \\"kaiming\\"}"}}]},
      {"role": "tool", "content": "{\\"type\\":\\"text\\",\\"text\\":\\"Search query: kaiming...",
       "tool_call_id": "toolu_015h..."},
     ...], "failure": "Evaluation start\\nlocal check failed: ..."}

Tool names are `<server>-<tool>` (`emails-search_emails`, `pdf-tools-read_pdf_pages`); server
names may contain "-" themselves, so the name is kept whole as tool_name rather than split.
Turns come from `chat_messages.py` (one per tool call); the outcome is the file's `pass`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from sources.readers.base import Reader, has_match, is_single_json_object, load_json
from sources.readers.chat_messages import ChatFormatError, convert_messages
from sources.schema import Quarantine, Trajectory

_PASS = re.compile(r'"pass"\s*:\s*(true|false)')
_MESSAGES = re.compile(r'"messages"\s*:\s*\[')


class ToolathlonReader(Reader):
    """Toolathlon `{"pass", "messages"}` files: one turn per tool call."""

    name: ClassVar[str] = "toolathlon_chat"
    domain: ClassVar[str] = "mcp"
    description: ClassVar[str] = (
        "action = `<server>-<tool>(arguments)` of each assistant tool call; observation = the "
        "`role: tool` message answering it (matched by tool_call_id); outcome from `pass`"
    )

    def sniff(self, path: Path, head: str) -> bool:
        if not is_single_json_object(head):  # a JSONL stream of such objects is not ours
            return False
        return (has_match('"pass"', _PASS, head) and has_match('"messages"', _MESSAGES, head)
                and '"role"' in head)

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        document = load_json(path)
        if not isinstance(document, dict):
            yield Quarantine(str(path), "$", f"expected an object, got {type(document).__name__}")
            return
        passed = document.get("pass")
        if not isinstance(passed, bool):
            yield Quarantine(str(path), "$.pass", "pass must be true or false")
            return
        try:
            chat = convert_messages(document.get("messages"), "$")
        except ChatFormatError as error:
            yield Quarantine(str(path), error.position, error.reason)
            return
        metadata = {k: v for k, v in document.items() if k not in ("pass", "messages")}
        metadata.update(chat.metadata)
        if chat.problems:
            metadata["n_quarantined_messages"] = len(chat.problems)
        yield Trajectory(
            task=chat.task,
            turns=chat.turns,
            position="$",
            outcome="success" if passed else "failure",
            system_prompt=chat.system_prompt,
            metadata=metadata,
        )
        for where, reason in chat.problems:
            yield Quarantine(str(path), where, reason)
