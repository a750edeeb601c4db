"""quality/short_replies.py's reply_row for a whole batch, as columns: the same values, with
the short replies' regex steps run once per distinct text, as polars passes over the ASCII
texts (quality/short_replies_ascii.py) and by short_replies._short_reply for the others.

(reply_row stays the plain per-row definition that tests/test_short_replies_ascii.py
compares these columns against.)
"""

from __future__ import annotations

import pyarrow as pa

from quality.short_replies import (
    CONFIRM_TAIL_CHARS,
    SHORT_REPLY_CHARS,
    _confirms,
    _short_reply,
    confirm_hints,
)
from quality.short_replies_ascii import ascii_short_replies

Columns = tuple[list[int], list[int | None], list[int | None], list[bool], list[bool], list[int]]
Reply = tuple[int | None, int | None, bool, int]
_LONG: Reply = (None, None, False, 0)  # (not a short reply: reply_row's answer)


def reply_rows(values: list[list[str]], column: pa.ChunkedArray,
               observations: list[str | None]) -> Columns:
    """(arg_chars_found, ack_words, ack_lines, ack_phrase, confirm_prompt, foreign_ids) as
    reply_row gives them, a list each: the observations as an Arrow `column` and as
    `observations` (its to_pylist), each row's argument `values` (action_values)."""
    found, confirm, rests = _argument_rests(values, observations, confirm_hints(column))
    if not rests:
        return [], [], [], [], [], []
    replies = _replies_of({rest for rest in rests if rest is not None})
    replies[None] = _LONG
    words, lines, ack, foreign = map(list, zip(*map(replies.__getitem__, rests), strict=True))
    return found, words, lines, ack, confirm, foreign


def _argument_rests(values: list[list[str]], observations: list[str | None], hints: list[bool]
                    ) -> tuple[list[int], list[bool], list[str | None]]:
    """Per row, as reply_row finds them: the characters of its values found, its confirm
    prompt, and the text left for a short reply's words (None: not a short reply). (reply_row's
    steps written out in one loop: a function call per row cost a third more.)"""
    found, confirm, rests = [], [], []
    for row_values, observation, hinted in zip(values, observations, hints, strict=True):
        observation = observation or ""
        rest, chars = observation[:SHORT_REPLY_CHARS * 4], 0
        for value in row_values:
            if value in rest:
                chars += len(value)
                rest = rest.replace(value, " ")
        asks = hinted and _confirms(observation[-CONFIRM_TAIL_CHARS:])
        found.append(chars)
        confirm.append(asks)
        rests.append(None if len(observation) > SHORT_REPLY_CHARS and not asks else rest)
    return found, confirm, rests


def _replies_of(texts: set[str]) -> dict[str | None, Reply]:
    """_short_reply of each text: the ASCII ones by polars passes, the others by itself."""
    ascii_texts = [text for text in texts if text.isascii()]
    replies: dict[str | None, Reply] = {}
    if ascii_texts:
        frame = ascii_short_replies(ascii_texts)
        replies.update(zip(ascii_texts, zip(*(frame[name].to_list() for name in frame.columns),
                                            strict=True), strict=True))
    replies.update((text, _short_reply(text)) for text in texts if not text.isascii())
    return replies
