"""The shortcuts of reply_row and blank_view (quality/short_replies.py, reply_features.py)
give what their plain definitions give: the batch's confirm hints from polars, the short
replies' cache, the view's lines read until one has content; action_values' lines looked
up once per batch; repeat_masked's rows found by a hash of the masked texts."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from quality.line_shares import HAS_CONTENT, LINE_MAX_CHARS
from quality.reply_features import (
    _IDENTIFIER,
    _TWO_LETTERS,
    _VIEW_LINE,
    action_values,
    blank_view,
    masked_texts,
    repeat_masked,
)
from quality.short_replies import _short_reply, confirm_hints, reply_row

FILLER = "log line 42 done\n" * 60  # over SHORT_REPLY_CHARS
OBSERVATIONS = [
    "File written successfully to /w/a.md", "Are you sure you want to delete it? (y/n)",
    FILLER + "Do you want to continue?", "Are you sure?" + FILLER,  # a hint outside the tail
    "Please confirm that you accept", "not sure", "", None, '{"status": "ok", "id": 12}',
    "Command completed with return code: 0", "ÉTAT: confirmé ✓\n" + FILLER[:300],
    "x" * 700 + "Confirm to proceed", "- status: created\n  data_id: 7\n",
]
VALUES = [[], ["/w/a.md"], ["delete it"], ["status"]]


def test_confirm_hints_leave_reply_row_as_it_is():
    hints = confirm_hints(pa.chunked_array([OBSERVATIONS], pa.large_string()))
    assert hints == [o is not None and any(h in o for h in ("sure", "want to", "onfirm"))
                     for o in OBSERVATIONS]
    for values in VALUES:
        for text, hint in zip(OBSERVATIONS, hints, strict=True):
            assert reply_row(values, text or "", hint) == reply_row(values, text or "")


def test_cached_short_replies_are_the_plain_function():
    texts = [t or "" for t in OBSERVATIONS] * 2  # (the second time from the cache)
    assert [_short_reply(t) for t in texts] == [_short_reply.__wrapped__(t) for t in texts]


def test_blank_view_stops_at_the_first_line_with_content_as_its_definition_reads():
    def plain(text: str) -> bool:  # the definition: every numbered line's body, then a test
        if len(text) > LINE_MAX_CHARS or ":" not in text:
            return False
        bodies = _VIEW_LINE.findall(text)
        return bool(bodies) and not any(HAS_CONTENT.search(body) for body in bodies)

    texts = ["1:\n2:   \n3:\t", "1:\n2: x\n3:", "1: a\n2:", "header\n  10:  \n 11:--", "no view",
             "1:" + "\n2:" * 7000, "a:b", "", "٣: \n4:", "1: ...\n2: ;;", "x 1:\n1:\r\n2:\x0b"]
    for text in texts:
        assert blank_view(text) == plain(text), text


def test_action_values_with_shared_lines_are_the_plain_ones():
    def plain(action: str) -> list[str]:  # the definition: each token stripped and matched
        values = [line.strip() for line in action.splitlines()]
        values += [t.strip("'\"") for t in action.split()
                   if _IDENTIFIER.fullmatch(t.strip("'\""))]
        kept = {v for v in values if len(v) >= 3 and _TWO_LETTERS.search(v)}
        return sorted(kept, key=lambda v: (-len(v), v))

    actions = ["cat '/w/a.md' x_y", "cat /w/a.md 'x_y'", "ls -la\ncd src/app && make v2",
               "echo \"a@b.io\" ''k9'' ab'c", "grep -r 'TODO' .", "", "   ", "run\u2003x.y\x1cz_w",
               # (lines shared by commands, and every kind of line break)
               "cd src/app\r\nmake v2", "cd src/app\x85ls a.b", "cd src/app\u2028cat x/y",
               "cd src/app\x0bls\x1dtmp/z\x1e  k9  \x0c", "cd src/app"]
    lines_seen: dict[str, tuple[str, ...]] = {}
    for action in actions * 2:
        assert action_values(action, None, lines_seen) == plain(action), action


def _plain_repeat_masked(observations: list[str | None], flat: list[str], turn: list[int],
                         quotes: list[bool]) -> list[int]:
    """The definition: a walk keeping each trajectory's previous and latest texts by key."""
    out, seen, previous = [], {}, (None, "")
    for row, text in enumerate(observations):
        text, key = text or "", flat[row]
        if turn[row] == 0:
            seen, previous = {}, (None, "")
        found = 0
        if turn[row] > 0 and text.strip():
            if key == previous[0] and (text == previous[1] or not quotes[row]):
                found = 1
            elif key in seen and (text == seen[key] or not quotes[row]):
                found = 2
        out.append(found)
        seen[key] = text
        previous = (key, text)
    return out


@pytest.mark.parametrize("collide", [False, True])
def test_repeat_masked_is_the_walk_by_key(collide: bool, monkeypatch: pytest.MonkeyPatch):
    """Each row compared with the latest earlier row of its trajectory holding its masked
    text (by a hash, else by Arrow's dictionary encoding) gives what the walk gives; with
    every text given one hash, the collisions are found and the codes answer."""
    if collide:
        monkeypatch.setattr(pl.Series, "hash", lambda self: pl.Series(
            [7] * len(self), dtype=pl.UInt64))
    rng = random.Random(7)
    texts = ["ok", "ok ", " ok", "at 10:00:01 ok", "at 11:02:03 ok", "", "  ", "\x1c", None,
             "wrote /w/a.md", "wrote /w/b.md", "a\n\nb", "a b", "état 2024-01-05"]
    for _ in range(200):
        n = rng.randrange(0, 30)
        observations = [rng.choice(texts) for _ in range(n)]
        turn = []
        for row in range(n):
            turn.append(0 if row == 0 or rng.random() < 0.2 else turn[-1] + 1)
        if n and rng.random() < 0.1:
            turn[0] = 3  # (a batch that opens inside a trajectory: the walk starts afresh)
        quotes = [rng.random() < 0.5 for _ in range(n)]
        flat, _ = masked_texts(observations)
        got = repeat_masked(observations, flat, np.array(turn, np.int64), np.array(quotes, bool))
        assert got.tolist() == _plain_repeat_masked(observations, flat.to_pylist(), turn,
                                                    quotes), (observations, turn, quotes)
