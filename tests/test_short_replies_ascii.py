"""The short replies' polars passes (quality/short_replies_ascii.py) give _short_reply's plain
Python answer on every ASCII text, and reply_rows (quality/short_reply_columns.py) gives
reply_row's answer on every row, ASCII or not."""

from __future__ import annotations

import random

import pyarrow as pa

from quality.short_replies import _short_reply, reply_row
from quality.short_replies_ascii import REPLY_SCHEMA, ascii_short_replies
from quality.short_reply_columns import reply_rows

# Where Rust's regex and Python's re could part: \s and the separators \x1c-\x1f, the line
# breaks of str.splitlines, a key's look-ahead (a space, a line break, the end), the exit
# status in any case, numbers and dates, identifiers, words of ACK_WORDS inside other words.
TEXTS = [
    "", " ", "File written successfully", "Command completed with return code: 0",
    "[Command finished with exit code 0]", "COMMAND EXITED WITH EXIT STATUS -1.\n]",
    "exit status 0", "with return code:\x1c7\x1f]", "[Current working directory: /w/app]",
    "[Python interpreter: /usr/bin/python3]\nok", "<returncode>\x1e0\x1f</returncode>\n<output>",
    "</output>done", '{"status": "ok", "id": 12}', '{"status"\x1c: "sent"}', '"a.b-c d":1',
    '"' + "y" * 40 + '": 2', '"' + "y" * 41 + '": 2', "- status: created\n  data_id: 7\n",
    "status:\x1fok", "status:", "status:x", "key:\r\nvalue: 3", "a\rb\x0bc\x0cd\x1ce\x1df\x1eg",
    "x\x1fy", "Test 1: [0, 1]\nTests completed successfully!", "33", "...", "Scaled deployment",
    "Switched to branch 'x'", "Sed", "unsuccessfully done?", "OKAY", "ok_x", "written2",
    "2024-01-05T10:00:01Z saved", "v1.2.3, 4:05 and 1,000", "12345-67-89 2024-1-5 10:00",
    "Email sent to ana@x.com", "a/b/c d@e.fg h_i-j k9 /w/a.md x@y", "__init__.py a.b-c_d",
    "Updated ab@cd.ef.gh/ij", "created _a1 b2c", "Created\n\n\n", "with\n",
]
TOKENS = ['"', '"status"', ":", ": ", " ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c",
          "\x1d", "\x1e", "\x1f", "-", "- ", "data_id", "Ok", "done", "Created", "Saved", "ed",
          "with", "WITH", "completed with return code", "exit code", " -1", "0", "3.4", "1,000",
          "2024-01-05", "T10:00:01Z", "[", "]", "Command ", "the ",
          "[Current working directory: /a]", "<returncode>", "</returncode>", "<output>",
          "/w/a.md", "a@b.io", "x_y", "k9", "v1.2", ".", "_", "+", "a", "B", "sent", "okay"]
NAMES = ("arg_chars_found", "ack_words", "ack_lines", "ack_phrase", "confirm_prompt",
         "foreign_ids")  # (reply_row's order)


def _columns(texts: list[str]) -> list[tuple[int, int, bool, int]]:
    frame = ascii_short_replies(texts)
    assert frame.schema == REPLY_SCHEMA
    return list(zip(*(frame[name].to_list() for name in frame.columns), strict=True))


def test_polars_passes_are_short_reply_on_hand_made_texts() -> None:
    assert _columns(TEXTS) == [_short_reply.__wrapped__(text) for text in TEXTS]


def test_polars_passes_are_short_reply_on_random_token_strings() -> None:
    rng = random.Random(17)
    texts = ["".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 12)))
             for _ in range(3000)]
    assert _columns(texts) == [_short_reply.__wrapped__(text) for text in texts]


def test_reply_rows_are_reply_row() -> None:
    filler = "log line 42 done\n" * 60
    observations = TEXTS + [None, "ÉTAT: confirmé ✓", "Fichier écrit avec succès",
                            filler + "Are you sure you want to continue?",
                            "Are you sure?" + filler, "x" * 700, "Please confirm that you do"]
    values = [[], ["/w/a.md"], ["status", "ana@x.com"], ["confirm", "written2"]]
    rows = [values[i % len(values)] for i in range(len(observations))]
    column = pa.chunked_array([observations], pa.large_string())
    plain = [reply_row(v, o or "") for v, o in zip(rows, observations, strict=True)]
    columns = reply_rows(rows, column, observations)
    assert list(columns) == list(NAMES)
    assert list(zip(*(columns[name].to_pylist() for name in NAMES), strict=True)) == plain
    assert [columns[name].type for name in NAMES] == [pa.int32()] * 3 + [pa.bool_()] * 2 + [
        pa.int32()]
    empty = reply_rows([], pa.chunked_array([], pa.large_string()), [])
    assert [len(empty[name]) for name in NAMES] == [0] * 6
