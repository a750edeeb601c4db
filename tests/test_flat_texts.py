"""Flat texts (quality/flat_texts.py) are polars' whitespace collapse and strip, exactly."""

from __future__ import annotations

import numpy as np
import polars as pl

from quality.flat_texts import flat_texts


def polars_flat(texts: pl.Series) -> list[str]:
    """What masked_texts wrote before: the regex collapse, then strip_chars."""
    return (texts.fill_null("").str.replace_all(r"\s\s+|[\s&&[^ ]]", " ")
            .str.strip_chars().to_list())


def test_every_code_point_is_whitespace_as_polars_says():
    # each code point alone, between letters, doubled between letters and at both ends
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for shape in ("{}", "a{}b", "a{0}{0}b", "{0} x {0}", "a{0} {0}b"):
        texts = pl.Series([shape.format(c) for c in points], dtype=pl.String)
        assert flat_texts(texts) == polars_flat(texts), shape


def test_random_texts_and_nulls_are_polars_flat():
    pieces = [" ", "  ", "\n", "\r\n", "\t", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2003",
              "\u2028", "\u200b", "\u3000", "\u205f", "\u180e", "\ufeff", "word", "0", "é",
              "日本", "😀", "a-b", ""]
    rng = np.random.default_rng(11)
    texts = [None if rng.random() < 0.05 else
             "".join(rng.choice(pieces, size=int(rng.integers(0, 16)))) for _ in range(5000)]
    series = pl.Series(texts, dtype=pl.String)
    assert flat_texts(series) == polars_flat(series)
    # a slice of a column (its buffers start further in)
    assert flat_texts(series[1000:1200]) == polars_flat(series[1000:1200])
    assert flat_texts(pl.Series([], dtype=pl.String)) == []
