"""Fitting the official message layout into a model's context window.

A sample's messages are system, then each earlier turn as a user (action) / assistant
(observation) pair, then the current action (`bench.official.chat_messages`). When that is too
long for the model, the oldest pairs go first: the most recent turns carry the state the next
observation depends on. Turn headers keep their original numbers, so the gap stays visible.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

Messages = list[dict[str, str]]


def conversation(system: str, turns: Iterable[tuple[str, str]], current: str | None
                 ) -> Messages:
    """The chat layout every world-model prompt shares: the system message (when there is one),
    each earlier turn as a user / assistant pair, then the current user message when given."""
    messages = [{"role": "system", "content": system}] if system else []
    for user, assistant in turns:
        messages += [{"role": "user", "content": user},
                     {"role": "assistant", "content": assistant}]
    if current is not None:
        messages.append({"role": "user", "content": current})
    return messages


def history_pairs(messages: Sequence[dict[str, str]]) -> int:
    """How many (action, observation) pairs precede the current action."""
    head = 1 if messages and messages[0]["role"] == "system" else 0
    return (len(messages) - head - 1) // 2


def drop_oldest_turns(messages: Sequence[dict[str, str]], turns: int) -> Messages:
    """The messages without their `turns` oldest history pairs (system and current action kept)."""
    head = 1 if messages and messages[0]["role"] == "system" else 0
    return list(messages[:head]) + list(messages[head + 2 * turns:])


def fit_messages(messages: Sequence[dict[str, str]], fits: Callable[[Messages], bool]
                 ) -> tuple[Messages, int]:
    """The longest suffix of the history that `fits`, and how many pairs were dropped.

    Binary search (fitting is monotone in the number dropped); when even no history fits,
    all pairs are dropped and the caller's own length check reports the overflow.
    """
    full = list(messages)
    if fits(full):
        return full, 0
    low, high = 1, history_pairs(full)  # invariant: dropping `high` fits (or nothing does)
    if high == 0 or not fits(drop_oldest_turns(full, high)):
        return drop_oldest_turns(full, high), high
    while low < high:
        middle = (low + high) // 2
        if fits(drop_oldest_turns(full, middle)):
            high = middle
        else:
            low = middle + 1
    return drop_oldest_turns(full, high), high
