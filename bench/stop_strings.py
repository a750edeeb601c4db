"""Stop sequences as the OpenAI API defines them: generation ends *before* the first stop string.

Streaming must never send text that later turns out to begin a stop string, so the safe prefix
holds back the longest tail that could still grow into one.
"""

from __future__ import annotations

from collections.abc import Sequence


def cut_at_stop(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    """(text up to the earliest stop string, whether one was found)."""
    positions = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    if not positions:
        return text, False
    return text[: min(positions)], True


def safe_prefix_length(text: str, stops: Sequence[str]) -> int:
    """How much of `text` can be sent now: all but a tail that is a proper prefix of a stop."""
    held = 0
    for stop in stops:
        for size in range(min(len(stop) - 1, len(text)), held, -1):
            if text.endswith(stop[:size]):
                held = size
                break
    return len(text) - held
