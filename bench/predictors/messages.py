"""Fitting the official message layout into a model's context window.

A sample's messages are system, then each earlier turn as a user (action) / assistant
(observation) pair, then the current action (`bench.official.chat_messages`). When that is too
long for the model, the oldest pairs go first: the most recent turns carry the state the next
observation depends on. Turn headers keep their original numbers, so the gap stays visible.
When even the current prompt alone is too long (a GUI prompt holds a whole screen), its text is
cut from the left, keeping the system prompt and the current action (`cut_current_prompt`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

Messages = list[dict[str, str]]
ACTION_SECTION = "**Action:**"  # the official prompt's last section: the action itself


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


def cut_current_prompt(messages: Sequence[dict[str, str]], fits: Callable[[Messages], bool]
                       ) -> Messages | None:
    """The messages with the last (current) prompt cut from the left to the longest suffix that
    `fits`, never shorter than its "**Action:**" section (the whole text when it has none);
    None when even that does not fit (the caller marks the sample failed)."""
    head, content = list(messages[:-1]), messages[-1]["content"]

    def keeping(chars: int) -> Messages:
        return [*head, {**messages[-1], "content": content[len(content) - chars:]}]

    marker = content.rfind(ACTION_SECTION)
    low, high = (len(content) - marker if marker >= 0 else len(content)), len(content)
    if not fits(keeping(low)):
        return None
    while low < high:  # invariant: keeping `low` characters fits
        middle = (low + high + 1) // 2
        if fits(keeping(middle)):
            low = middle
        else:
            high = middle - 1
    return keeping(low)
