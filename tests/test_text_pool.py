"""Lowercased texts laid out in one buffer (quality/text_pool.py) are polars' lowercase."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from quality.text_pool import lowered_texts


def polars_lower(texts: list[str | None]) -> list[str]:
    return pl.Series(texts, dtype=pl.String).fill_null("").str.to_lowercase().to_list()


def pool(columns: list[list[str | None]], slots: list[np.ndarray], n: int) -> list[str]:
    data, offsets = lowered_texts([pa.array(c, pa.large_string()) for c in columns], slots, n)
    return [bytes(data[offsets[k]: offsets[k + 1]]).decode() for k in range(n)]


def test_ascii_lowering_is_polars_for_every_ascii_character():
    characters = [chr(c) for c in range(128)]
    assert pool([characters], [np.arange(128)], 128) == polars_lower(characters)


def test_random_texts_in_slot_order_are_polars_lowercase():
    # ASCII texts, texts with letters whose lowercase changes length (İ, Ⱥ), final sigmas,
    # nulls; three columns interleaved as dedup lays them out
    pieces = ["Ab", "QRZ", "@[`{", "x9", " ", "\n", "İ", "Ⱥ", "ΟΔΟΣ", "Σ", "É", "ß", "日本"]
    rng = np.random.default_rng(7)
    columns = [[None if rng.random() < 0.05 else
                "".join(rng.choice(pieces, size=int(rng.integers(0, 12)))) for _ in range(n)]
               for n in (50, 400, 400)]
    order = rng.permutation(850)
    slots = [order[:50], order[50:450], order[450:]]
    expected = [""] * 850
    for column, slot in zip(columns, slots, strict=True):
        for text, k in zip(polars_lower(column), slot, strict=True):
            expected[k] = text
    assert pool(columns, slots, 850) == expected


def test_chunked_and_sliced_columns():
    column = pa.chunked_array([["Ab", "CD"], ["Éx", "yZ"]], pa.large_string())
    sliced = pa.array(["skip", "KEEP", "Both"], pa.string()).slice(1)
    data, offsets = lowered_texts([column, sliced], [np.array([0, 2, 3, 5]), np.array([1, 4])],
                                  6)
    assert bytes(data).decode() == "abkeepcdéxbothyz"
    assert offsets.tolist() == [0, 2, 6, 8, 11, 15, 17]


def test_chunks_empty_or_with_nulls_fill_their_own_slots():
    column = pa.chunked_array([[], ["Ä", None], ["Q"]], pa.large_string())
    data, offsets = lowered_texts([column], [np.array([2, 0, 1])], 3)
    assert bytes(data).decode() == "qä"
    assert offsets.tolist() == [0, 0, 1, 3]
