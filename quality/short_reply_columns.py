"""quality/short_replies.py's reply_row for a whole batch, as columns: the same values, with
the short replies' regex steps run once per distinct text, as polars passes over the ASCII
texts (quality/short_replies_ascii.py) and by short_replies._short_reply for the others.

(reply_row stays the plain per-row definition that tests/test_short_replies_ascii.py
compares these columns against.)
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from quality.short_replies import (
    CONFIRM_TAIL_CHARS,
    SHORT_REPLY_CHARS,
    _confirms,
    _short_reply,
    confirm_hints,
)
from quality.short_replies_ascii import REPLY_SCHEMA, ascii_short_replies

_LONG = (None, None, False, 0)  # (not a short reply: reply_row's answer)


def reply_rows(values: list[list[str]], column: pa.ChunkedArray,
               observations: list[str | None]) -> dict[str, pa.Array]:
    """The columns arg_chars_found, ack_words, ack_lines, ack_phrase, confirm_prompt and
    foreign_ids, each row's values as reply_row gives them: the observations as an Arrow
    `column` and as `observations` (its to_pylist), each row's argument `values`
    (action_values). (A short reply's four values are taken from its distinct text's row,
    by Arrow: no Python tuple per row.)"""
    found, confirm, rests = _argument_rests(values, observations, confirm_hints(column))
    texts, replies = _replies_of({rest for rest in rests if rest is not None})
    position: dict[str | None, int] = dict(zip(texts, range(len(texts)), strict=True))
    position[None] = len(texts)  # (the last row: _LONG)
    rows = np.fromiter(map(position.__getitem__, rests), np.int64, len(rests))
    taken = replies.take(pa.array(rows))
    return {"arg_chars_found": pa.array(found, pa.int32()),
            "ack_words": _int32(taken["ack_words"]), "ack_lines": _int32(taken["ack_lines"]),
            "ack_phrase": taken["ack_phrase"].combine_chunks(),
            "confirm_prompt": pa.array(confirm, pa.bool_()),
            "foreign_ids": _int32(taken["foreign_ids"])}


def _int32(column: pa.ChunkedArray) -> pa.Array:
    return column.combine_chunks().cast(pa.int32())


def _argument_rests(values: list[list[str]], observations: list[str | None], hints: list[bool]
                    ) -> tuple[list[int], list[bool], list[str | None]]:
    """Per row, as reply_row finds them: the characters of its values found, its confirm
    prompt, and the text left for a short reply's words (None: not a short reply). (reply_row's
    steps written out in one loop: a function call per row cost a third more.)"""
    found, confirm, rests = [], [], []
    head, tail = SHORT_REPLY_CHARS * 4, -CONFIRM_TAIL_CHARS  # (names read once, not per row)
    for row_values, observation, hinted in zip(values, observations, hints, strict=True):
        observation = observation or ""
        rest, chars = observation[:head], 0
        for value in row_values:
            if value in rest:
                chars += len(value)
                rest = rest.replace(value, " ")
        asks = hinted and _confirms(observation[tail:])
        found.append(chars)
        confirm.append(asks)
        rests.append(None if len(observation) > SHORT_REPLY_CHARS and not asks else rest)
    return found, confirm, rests


def _replies_of(texts: set[str]) -> tuple[list[str], pa.Table]:
    """The texts in the order of their rows, and _short_reply of each as a REPLY_SCHEMA row,
    then _LONG's row: the ASCII texts by polars passes, the others by _short_reply."""
    ascii_texts = [text for text in texts if text.isascii()]
    others = [text for text in texts if not text.isascii()]
    rows = [_short_reply(text) for text in others] + [_LONG]
    frames = [ascii_short_replies(ascii_texts)] if ascii_texts else []
    frames.append(pl.DataFrame(rows, schema=REPLY_SCHEMA, orient="row"))
    return ascii_texts + others, pl.concat(frames).to_arrow()
