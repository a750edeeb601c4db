"""MCP content envelopes -> observation text.

Toolathlon and other chat exports store an MCP tool result as its content blocks serialised to
JSON: `{"type": "text", "text": "...", "annotations": null}` or a list of such blocks. What
the environment said is the text of the text blocks; the envelope is protocol punctuation (and,
inside it, every newline and quote escaped), so the observation is the blocks' texts joined by
newlines. What is not text (image / audio / resource blocks, non-null annotations, extra keys)
is returned separately for the trajectory's metadata.

A harness that cuts long results writes the envelope cut off mid-string with a note after it
(Toolathlon: `... (The output of the tool call ... is too long! Only the first 100000
characters are shown here ...)`): such a text is not JSON, so the block's string is decoded as
far as it goes, and the note stays part of the text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# The start of a (list of) text block(s) as JSON writes it: used only for cut-off envelopes.
_TEXT_BLOCK_START = re.compile(r'^\s*\[?\s*\{\s*"type"\s*:\s*"text"\s*,\s*"text"\s*:\s*"')
_ESCAPE = re.compile(r"\\(.?)", re.DOTALL)
_MAX_ESCAPE = 6  # a cut can fall inside an escape such as \u00e9


@dataclass(frozen=True)
class Unwrapped:
    """The observation text, and what the envelope held besides text (None when nothing)."""

    text: str
    extras: list[dict[str, Any]] | None = None


def _blocks(value: Any) -> list[dict] | None:
    """The content blocks `value` is, if it is a block or a non-empty list of blocks."""
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(b, dict) and isinstance(b.get("type"), str)
                            for b in items):
        return None
    if not any(b["type"] == "text" and isinstance(b.get("text"), str) for b in items):
        return None
    return items


def _extras(blocks: list[dict]) -> list[dict[str, Any]] | None:
    """Non-text blocks whole, and the non-null extra keys of text blocks."""
    extras = []
    for index, block in enumerate(blocks):
        if block["type"] != "text":
            extras.append({"block": index, **block})
            continue
        rest = {k: v for k, v in block.items() if k not in ("type", "text") and v is not None}
        if rest:
            extras.append({"block": index, **rest})
    return extras or None


def _keep_escape(match: re.Match) -> str:
    """A JSON escape as it is; a backslash before anything else as an escaped backslash."""
    char = match.group(1)
    return match.group(0) if char and char in '"\\/bfnrtu' else "\\\\" + char


def _cut_off_text(text: str) -> str | None:
    """The string of a text block that was cut off mid-string, decoded as far as it goes."""
    start = _TEXT_BLOCK_START.match(text)
    if start is None:
        return None
    # A backslash the cut separated from its escaped character is kept as a backslash.
    raw = _ESCAPE.sub(_keep_escape, text[start.end():])
    for trim in range(_MAX_ESCAPE + 1):
        try:
            decoded, _ = json.decoder.scanstring(f'"{raw[:len(raw) - trim]}"', 1, False)
        except json.JSONDecodeError:
            continue
        return decoded
    return None


def unwrap_content(text: str) -> Unwrapped:
    """`text` with an MCP content envelope taken off (unchanged when it has none)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return Unwrapped(text)
    try:
        value = json.loads(stripped)
    except ValueError:
        cut = _cut_off_text(stripped)
        return Unwrapped(text) if cut is None else Unwrapped(cut)
    blocks = _blocks(value)
    if blocks is None:
        return Unwrapped(text)
    texts = [b["text"] for b in blocks if b["type"] == "text" and isinstance(b.get("text"), str)]
    return Unwrapped("\n".join(texts), _extras(blocks))
