"""Open-addressing hash tables of 64-bit keys inside numba loops (observation_sets.py,
corpus_frequency.py): a power-of-two table at least twice the entries, probed linearly from the
top bits of key x a Fibonacci constant (Knuth's multiplicative hashing), so that keys which
differ only in their low or high bits still spread."""

from __future__ import annotations

import numpy as np

from quality.kernel_cache import cached_njit

MIX = np.uint64(0x9E3779B97F4A7C15)


@cached_njit
def table_bits(entries):
    """log2 of a table's slots for up to `entries` keys: at most half full, 16 at least."""
    bits = 4
    while (1 << bits) < 2 * entries:
        bits += 1
    return bits


@cached_njit
def empty_table(entries):
    """Slots (-1: empty) for up to `entries` keys (`table_bits`); and log2 of their number."""
    bits = table_bits(entries)
    return np.full(1 << bits, -1, np.int64), bits


@cached_njit
def first_slot(key, bits):
    """Where a key's probe starts in a table of 2^bits slots."""
    return np.int64((np.uint64(key) * MIX) >> np.uint64(64 - bits))
