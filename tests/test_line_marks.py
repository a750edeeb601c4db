"""Line marks dropped by the compiled scan (quality/line_marks.py) are polars' regex
replacement of reply_features' _LINE_PREFIX, exactly."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from quality.line_marks import drop_line_marks
from quality.reply_features import _LINE_PREFIX

PATTERN = _LINE_PREFIX.pattern


def polars_dropped(texts: list[str | None]) -> list[str]:
    """What masked_texts wrote before: polars' regex over every text."""
    series = pl.Series(texts, dtype=pl.String).fill_null("")
    return series.str.replace_all(PATTERN, "").to_list()


def dropped(texts: list[str | None]) -> list[str]:
    return drop_line_marks(pa.array(texts, pa.large_string()), PATTERN).to_pylist()


def test_hand_made_lines():
    texts = ["12: x", "  12:x\n\t3:\n4", "12 : x", ":1", "+ added\n+x\n> quote\n>x",
             "root@0:/app# ls\nroot@0:/app#ls\nuser@host:~$ x\nu@h:$", "a@b#", "@h:~$ x",
             "a@:~$ x", "a.b-c_d@e.f:~/x.y-z$  two", "a@b:c d$", "a@b:~/x\n$ y", "",
             "\n", "\n\n12:", "x\r12: y", "x\r\n12: y", "12:\n12:\n", " \t ", "123",
             "+", "> ", "\t+ x", "a@b:~", "a@b:~#", "1@2:3#4", "12a@b:~$ x", "١٢: x",
             "é\n12: x", "é@b:~$ x", "x\u2028 12: y", None]
    assert dropped(texts) == polars_dropped(texts)


def test_random_texts_are_polars_replaced():
    pieces = [" ", "\t", "\n", "\r", "0", "12", ":", "+", ">", "@", "#", "$", "~", "/",
              ".", "-", "_", "a", "Zq", "é", "٣", "日", "\x85", "\u2028"]
    rng = np.random.default_rng(17)
    # (most texts ASCII, which the scan writes; the others go to polars)
    texts = [None if rng.random() < 0.03 else
             "".join(rng.choice(pieces[:17] if rng.random() < 0.8 else pieces,
                                size=int(rng.integers(0, 24)))) for _ in range(20000)]
    assert dropped(texts) == polars_dropped(texts)
    # a slice of a column (its buffers start further in)
    column = pa.array(texts, pa.large_string())[5000:6000]
    assert drop_line_marks(column, PATTERN).to_pylist() == polars_dropped(texts[5000:6000])
    assert dropped([]) == []
