"""The compiled line shares (quality/line_shares_compiled.py) against their plain-Python
definition (quality/line_shares.py): the same three columns, float for float and NULL for
NULL, on hand-made edge cases, on random texts of tricky characters, and on every batch of
the real traces (../shared/traces, realdev and realdev2 ingested; skipped when absent)."""

from __future__ import annotations

import random
import re
import string
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from conftest import REPO_ROOT

from quality.batches import run_numbers, trajectory_batches
from quality.features import TURN_SCHEMA
from quality.line_shares import LINE_MAX_CHARS, line_shares
from quality.line_shares_compiled import compiled_line_shares
from quality.mirrored_fields import call_arguments
from quality.reply_features import action_values, masked_texts
from quality.utf8_lines import (
    ALNUM,
    BLANK,
    BREAK,
    CONTENT,
    DECIMAL,
    SPACE,
    WORD,
    byte_classes,
    code_point_flags,
    find,
    needle_skips,
)

SHARED = REPO_ROOT.parent / "shared"
REAL = ("traces", "realdev", "realdev2")


def assert_same(actions: list[str | None], observations: list[str | None], turn: list[int],
                values_of: dict[str, list[str]] | None = None) -> None:
    """compiled_line_shares == line_shares on these turns (values: action_values)."""
    if values_of is None:
        values_of = {a or "": action_values(a or "") for a in actions}
    _, lined = masked_texts(observations)
    expected = line_shares(actions, [values_of[a or ""] for a in actions], observations,
                           lined.to_pylist(), np.array(turn))
    got = compiled_line_shares(pa.array(actions, pa.large_string()), values_of,
                               pa.array(observations, pa.large_string()), lined,
                               np.array(turn))
    assert [share.to_pylist() for share in got] == [list(share) for share in expected]


def test_flags_are_pythons_for_every_code_point() -> None:
    flags = code_point_flags()
    word = re.compile(r"\w")
    digit = re.compile(r"\d")
    for point in range(0x110000):
        char = chr(point)
        assert bool(flags[point] & SPACE) == char.isspace(), point
        assert bool(flags[point] & ALNUM) == char.isalnum(), point
        assert bool(flags[point] & DECIMAL) == char.isdecimal(), point
        # (what the kernel reads for LINE_HEAD: \w is alnum or "_", \d is decimal)
        assert bool(word.match(char)) == (char.isalnum() or char == "_"), point
        assert bool(digit.match(char)) == char.isdecimal(), point


def test_byte_classes() -> None:
    classes = byte_classes()
    breaks = [p for p in range(0x110000) if not 0xD800 <= p <= 0xDFFF
              and len(("a" + chr(p) + "b").splitlines()) > 1]
    assert {chr(p).encode()[0] for p in breaks} == {b for b in range(256) if classes[b] & BREAK}
    for b in range(128):
        char = chr(b)
        assert bool(classes[b] & CONTENT) == (char not in string.punctuation + string.whitespace)
        assert bool(classes[b] & BLANK) == char.isspace()
        assert bool(classes[b] & WORD) == (char.isalnum() or char == "_")
    assert all(classes[b] & CONTENT for b in range(128, 256))


def test_find_is_bytes_find() -> None:
    """find (every match from every start, the haystack cut short) against bytes.find."""
    rng = random.Random(5)
    for _ in range(300):
        hay = bytes(rng.choice(b"abc\n") for _ in range(rng.randrange(40)))
        needle = bytes(rng.choice(b"abc\n") for _ in range(rng.randrange(1, 5)))
        text = np.frombuffer(b"xy" + needle, np.uint8)
        bloom, skip = needle_skips(text, 2, len(text))
        data = np.frombuffer(hay + b"zz", np.uint8)  # (the data goes on past `end`)
        end = rng.randrange(len(hay) + 1)
        for first in range(end + 1):
            assert find(data, end, text, 2, len(text), bloom, skip, first) == \
                hay[:end].find(needle, first), (hay, needle, end, first)


EDGE_OBSERVATIONS = [
    "Tab 0 (current): Shop\r\n[12] SPAN 'Orders'\r\n  [3] BUTTON 'OK'  \r\n",
    "[12] SPAN 'Orders'\x85[4] BUTTON 'OK'\u2028caf\u00e9 \u00e9t\u00e9\u2029x\x1cy\x1dz\x1e",
    "\u00e9l\u00e8ve [\u0663\u0664] SPAN\n[\u0663\u0664] LINK 'a'\n\u0663 item\n\U0001F600\n"
    "\U0001F600 [5] icon\n_[7] x\n*[8]* y\n[9\n[] z\n[12]\n\u3000 spaced \u3000\n\x1f\n",
    "",
    None,
    "x" * 12_001,
    "\u00e9" * 12_000,
    "\u00e9" * 12_001,
    "a\x0bb\x0cc\rd\ne\x1c\x1d\x1ef",
    "ls -la\nfile.txt  notes.md\n$ ls -la\nroot@0:/app# ls -la",
    "12: def f(x):\n13:     return x\n+ added line here\n> quoted line here",
    "wrote caf\u00e9-bar to /w/r\u00e9sum\u00e9.md\nx caf\u00e9-bar\n\u00e9caf\u00e9-bar\n"
    "caf\u00e9-bar\u00e9",
    "first line of value\nsecond line of value\nthird\nfirst line of value\n",
    "alpha\nbeta gamma\nalpha\nbeta gamma",
    "   \n\t\n...\n---\n",
]
EDGE_ACTIONS = [
    "click('Orders')",
    "type(\"caf\u00e9 \u00e9t\u00e9\")",
    None,
    "",
    "noop()",
    "x",
    "\u00e9",
    "\u00e9\u00e9\u00e9",
    'write_file({"path": "/w/a", "content": "a\\nb\\nc"})',
    "ls -la",
    'edit({"path": "f.py", "new": "    return x\\n+ added line here"})',
    'write({"path": "/w/r\u00e9sum\u00e9.md", "text": "caf\u00e9-bar"})',
    'put({"body": "first line of value\\nsecond line of value\\nthird"})',
    'put({"body": "beta gamma\\nalpha", "k": "alpha"})',
    "echo ...",
]


def test_edge_cases_every_order() -> None:
    """Each observation with each action, as first and later turns, repeated and not."""
    rows = len(EDGE_OBSERVATIONS)
    for shift in range(len(EDGE_ACTIONS)):
        actions = [EDGE_ACTIONS[(k + shift) % len(EDGE_ACTIONS)] for k in range(rows)]
        assert_same(actions, EDGE_OBSERVATIONS, list(range(rows)))
        assert_same(actions, EDGE_OBSERVATIONS, [0, 1, 0, 1, 2, 0, 1, 2, 3, 0, 1, 0, 1, 2, 3])
        doubled = [o for o in EDGE_OBSERVATIONS for _ in range(2)]
        assert_same([a for a in actions for _ in range(2)], doubled, list(range(2 * rows)))


def test_empty_batch_and_empty_values() -> None:
    assert_same([], [], [])
    # (an empty value: the definition answers; not an action_values value)
    assert_same(["a", "b"], ["x y\nz", "x y"], [0, 1], {"a": ["", "xyz"], "b": ["x y"]})


def test_a_text_too_long_to_read_before_short_ones() -> None:
    """A row too long to read (no line shares) before rows that are read: the long row's empty
    set is probed by the next row, with a mask sized to a table it has (the text's own mask
    once pointed past the slots: a segfault in CI)."""
    long = "x" * (4 * LINE_MAX_CHARS + 10) + "\nline two\n"
    short = "alpha\nbeta\ngamma\n"
    for turns in ([0, 1, 2], [0, 1, 0], [0, 0, 1]):
        assert_same(['run("alpha")', "ls", "x"], [long, short, short + "line two\n"], turns)
        assert_same(["ls"] * 4, [short, long, long, short], turns + [3])


ALPHABET = ("ab c", "ab", "\n", "\r\n", "\x85", "\u2028", "\t", " ", "[1]", "[", "]", "12",
            "\u0663", "\u00e9", "\u3000", "\U0001F600", "-", "_", ".", ":", "x" * 9, "\x1c")


def test_random_texts() -> None:
    """Random turns of tricky pieces: lines, breaks, element numbers, other scripts."""
    rng = random.Random(17)

    def text(pieces: int) -> str:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(pieces)))

    for _ in range(40):
        observations = [text(30) for _ in range(12)]
        actions = [rng.choice([text(12), "run(" + repr(text(10)) + ")",
                               'f({"v": ' + repr(text(12)).replace("'", '"') + "})"])
                   for _ in range(12)]
        values_of = {a: sorted({v.strip() for v in text(20).split("|")} - {""})
                     for a in actions}
        assert_same(actions, observations, [0] + [rng.randrange(1, 3) for _ in range(11)],
                    values_of)


@pytest.fixture(scope="module")
def real_turns(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """../shared/traces, realdev and realdev2 ingested into one data directory."""
    missing = [name for name in REAL if not (SHARED / name).is_dir()]
    if missing:
        pytest.skip(f"real traces not found: {', '.join(str(SHARED / m) for m in missing)}")
    from worldtrace.cli import main

    out = tmp_path_factory.mktemp("real") / "data"
    for name in REAL:
        assert main(["ingest", str(SHARED / name), "--out", str(out), "--quiet"]) == 0
    return out / "raw_turns"


def test_every_batch_of_the_real_traces(real_turns: Path) -> None:
    batches = 0
    for part in sorted(real_turns.glob("domain=*/shard=*/*.parquet")):
        for batch in trajectory_batches(part, TURN_SCHEMA.names, 200):
            _, turn = run_numbers(batch["trajectory_id"])
            actions = batch["action"].to_pylist()
            values_of = {a or "": action_values(a or "", call_arguments(a or ""))
                         for a in actions}
            assert_same(actions, batch["observation"].to_pylist(), list(turn), values_of)
            batches += 1
    assert batches >= 14


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
