"""MinHash signatures (a numba loop), bit-for-bit what datasketch computes, and LSH band parameters.

Scheme: datasketch 2's default `affine32`. A shingle's 64-bit hash gives a 32-bit value `h`
(its top half), premixed with MurmurHash3's 32-bit finaliser, then each of the `num_perm`
permutations maps it to `(a * h + b) mod 2^32` (`a` odd, so a bijection), and the signature
keeps the minimum per permutation. The permutation parameters are datasketch's own
(`MinHash(num_perm, seed, scheme="affine32").permutations`, drawn here as datasketch draws
them, and checked against it by tests/test_quality_shingles.py), so a row of our signatures *is*
a datasketch MinHash of the same shingles with `hashfunc` = our shingle hash: `to_datasketch`
hands it over (`MinHash(hashvalues=..., scheme="affine32")`) for `jaccard()` or `MinHashLSH`.
We use affine32 rather than datasketch's pre-2.0 "universal hashing mod the Mersenne prime
2^61-1": datasketch 2 keeps that one only as `legacy` (its uint64 products overflow, which biases
it), and affine32 is plain wrap-around uint32 arithmetic, which vectorises and stores in
half the bytes.

Speed: the work is `n_shingles x num_perm` multiply-adds and a segmented min. A numba kernel
(compiled once, cached on disk) walks each text's shingles and keeps the running minimum of its
signature row, 128 uint32 values that stay in registers and L1 while LLVM vectorises the
permutation loop: 4M shingles x 128 permutations in 0.07 CPU s against 0.29 for numpy's
block-and-reduce, and about 1e6/s for the Python-level loop of datasketch's `update_batch`.
numba promotes uint32 * uint32 to 64 bits, so every value is masked back to 32 bits: the
wrap-around arithmetic of datasketch's numpy, to the bit. `split_signatures` gives the
signatures of two parts of each text's shingles in the same pass (quality/residual.py).

LSH (`LshConfig`): b bands of r rows; two sets with Jaccard s collide in at least one band with
probability 1 - (1 - s^r)^b (Leskovec, Rajaraman & Ullman, *Mining of Massive Datasets*, 3.4).
Default 16 x 8 = 128: P(candidate) = 0.947 at s = 0.8 and 0.061 at s = 0.5, the S-curve's
midpoint (1/b)^(1/r) = 0.71 sits below the 0.8 threshold. datasketch's optimiser would pick
9 x 13 (fewer false positives, but 60 % recall at s = 0.8); we confirm every candidate with an
exact Jaccard check, so a false positive costs a little time while a false negative is lost, and
recall is what the band count buys.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from quality.kernel_cache import cached_njit
from quality.shingles import Shingled

if TYPE_CHECKING:
    import datasketch

_EMPTY = np.uint32(0xFFFFFFFF)  # datasketch's initial hash value: the signature of an empty set
# MurmurHash3's 32-bit finaliser (datasketch premixes every input hash with it): two
# shift-multiply rounds, then a final shift by 16; as uint64 for numba
_FMIX32 = ((np.uint64(16), np.uint64(0x85EBCA6B)), (np.uint64(13), np.uint64(0xC2B2AE35)))


@dataclass(frozen=True)
class MinHashConfig:
    """Number of permutations and the seed that draws them (datasketch's `num_perm`, `seed`)."""

    num_perm: int = 128
    seed: int = 1

    def __str__(self) -> str:
        return f"{self.num_perm}perm_s{self.seed}"


@dataclass(frozen=True)
class LshConfig:
    """Banding of a signature: `bands` x `rows` must equal the signature's length."""

    threshold: float = 0.8
    bands: int = 16
    rows: int = 8

    def __str__(self) -> str:
        return f"{self.bands}b_{self.rows}r_t{self.threshold:g}"

    def candidate_probability(self, jaccard: float) -> float:
        """Probability that two sets with this Jaccard share at least one band."""
        return 1.0 - (1.0 - jaccard**self.rows) ** self.bands


@lru_cache(maxsize=8)
def permutations(config: MinHashConfig) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine32 permutation parameters (a, b) for this num_perm and seed, drawn
    as datasketch 2 draws them: from numpy's RandomState(seed), `num_perm` odd 32-bit `a`,
    then `num_perm` 32-bit `b`. (Not by a datasketch.MinHash: importing datasketch imports
    scipy for its LSH optimiser, 0.8-1.6 CPU s in every process that signs a text.)"""
    draw = np.random.RandomState(config.seed)
    a = draw.randint(0, 1 << 31, config.num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = draw.randint(0, 1 << 32, config.num_perm, dtype=np.uint32)
    return a, b


def input_hash32(shingle_hashes: np.ndarray) -> np.ndarray:
    """The 32-bit value datasketch's `hashfunc` would return for each shingle: the top half."""
    return (shingle_hashes >> np.uint64(32)).astype(np.uint32)


def signatures(shingled: Shingled, config: MinHashConfig = MinHashConfig()) -> np.ndarray:
    """(n_texts, num_perm) uint32 MinHash signatures; a text without shingles gets all 2^32-1."""
    a, b = permutations(config)
    out = np.full((shingled.n_texts, config.num_perm), _EMPTY, dtype=np.uint32)
    _min_hash(_as_uint64(shingled.hashes), _as_int64(shingled.offsets), a, b, out, out,
              np.ones(0, dtype=np.bool_))
    return out


def split_signatures(shingled: Shingled, first: np.ndarray,
                     config: MinHashConfig = MinHashConfig()) -> tuple[np.ndarray, np.ndarray]:
    """The signatures of each text's shingles where `first` (a flag per hash) holds, and of
    the others: `signatures(shingled.keep(first))` and `signatures(shingled.keep(~first))`
    in one pass, without the copies."""
    a, b = permutations(config)
    if len(first) != len(shingled.hashes):
        raise ValueError("one flag per shingle hash is needed")
    out_first = np.full((shingled.n_texts, config.num_perm), _EMPTY, dtype=np.uint32)
    out_other = out_first.copy()
    _min_hash(_as_uint64(shingled.hashes), _as_int64(shingled.offsets), a, b, out_first,
              out_other, np.ascontiguousarray(first, dtype=np.bool_))
    return out_first, out_other


def _as_uint64(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.uint64)


def _as_int64(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64)


@cached_njit
def _min_hash(hashes: np.ndarray, offsets: np.ndarray, a: np.ndarray, b: np.ndarray,
              out_first: np.ndarray, out_other: np.ndarray, first: np.ndarray) -> None:
    """Fold text t's shingles (hashes[offsets[t]:offsets[t + 1]]) into row t of `out_first`
    where `first` holds, else of `out_other` (an empty `first`: all into `out_first`). Each
    hash: its top 32 bits, premixed (`_premix`), then min over (a * h + b) mod 2^32. A text's
    premixed hashes are sorted into its two rows first, so that `_fold` takes four at a time."""
    split = len(first) > 0
    longest = 0
    for t in range(len(offsets) - 1):
        longest = max(longest, offsets[t + 1] - offsets[t])
    mixed_first = np.empty(longest, dtype=np.uint64)
    mixed_other = np.empty(longest if split else 0, dtype=np.uint64)
    for t in range(len(offsets) - 1):
        n_first = n_other = 0
        for k in range(offsets[t], offsets[t + 1]):
            h = _premix(hashes[k])
            if split and not first[k]:
                mixed_other[n_other] = h
                n_other += 1
            else:
                mixed_first[n_first] = h
                n_first += 1
        _fold(mixed_first, n_first, a, b, out_first[t])
        _fold(mixed_other, n_other, a, b, out_other[t])


@cached_njit(inline="always")
def _premix(value: np.uint64) -> np.uint64:
    """A shingle hash's top 32 bits through MurmurHash3's 32-bit finaliser (_FMIX32)."""
    mask = np.uint64(0xFFFFFFFF)
    h = value >> np.uint64(32)
    for shift, multiplier in _FMIX32:  # each product masked back to 32 bits
        h ^= h >> shift
        h = (h * multiplier) & mask
    return h ^ (h >> np.uint64(16))


@cached_njit(inline="always")
def _fold(mixed: np.ndarray, count: int, a: np.ndarray, b: np.ndarray, row: np.ndarray) -> None:
    """row[p] = min(row[p], (a[p] * h + b[p]) mod 2^32) over h in mixed[:count]; four hashes
    a pass over the row (the minimum does not depend on the order: one load and store of the
    row per four, 20-25 % less time than one a pass)."""
    mask = np.uint64(0xFFFFFFFF)
    k = 0
    while k + 4 <= count:
        h0, h1, h2, h3 = mixed[k], mixed[k + 1], mixed[k + 2], mixed[k + 3]
        for p in range(len(a)):
            ap, bp = np.uint64(a[p]), np.uint64(b[p])
            v0 = np.uint32((ap * h0 + bp) & mask)
            v1 = np.uint32((ap * h1 + bp) & mask)
            v2 = np.uint32((ap * h2 + bp) & mask)
            v3 = np.uint32((ap * h3 + bp) & mask)
            row[p] = min(row[p], min(min(v0, v1), min(v2, v3)))
        k += 4
    while k < count:
        h = mixed[k]
        for p in range(len(a)):
            row[p] = min(row[p], np.uint32((np.uint64(a[p]) * h + np.uint64(b[p])) & mask))
        k += 1


def to_datasketch(signature: np.ndarray, config: MinHashConfig = MinHashConfig()
                  ) -> datasketch.MinHash:
    """One signature row as a datasketch MinHash (for `jaccard`, `MinHashLSH.insert/query`)."""
    import datasketch  # (here, not at the top: see `permutations`)

    return datasketch.MinHash(seed=config.seed, hashvalues=signature,
                              permutations=permutations(config), scheme="affine32")


def estimate_jaccard(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Share of equal positions: the MinHash estimate of Jaccard, row by row (broadcasts)."""
    return (left == right).mean(axis=-1)


def signature_array(signatures_: np.ndarray) -> pa.FixedSizeListArray:
    """Signatures as a Parquet-ready fixed-size list column (uint32[num_perm])."""
    n, width = signatures_.shape
    values = pa.array(np.ascontiguousarray(signatures_).reshape(-1), type=pa.uint32())
    return pa.FixedSizeListArray.from_arrays(values, width)


def signatures_from_arrow(column: pa.Array | pa.ChunkedArray, num_perm: int) -> np.ndarray:
    """The inverse of `signature_array`: a (rows, num_perm) uint32 matrix."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    values = column.flatten().to_numpy(zero_copy_only=False)
    return values.reshape(-1, num_perm).astype(np.uint32, copy=False)


def signature_bytes(signatures_: np.ndarray) -> pa.FixedSizeBinaryArray:
    """Signatures as one fixed-size binary value a row (its num_perm uint32, little-endian): how
    the staged features store them. Parquet reads such a column back about 9x faster than a
    uint32 list, whose every element carries its own levels (measured: 0.05 against 0.46 CPU s
    for 237k rows)."""
    rows, width = signatures_.shape
    data = np.ascontiguousarray(signatures_, dtype="<u4")
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(4 * width), rows,
                                                [None, pa.py_buffer(data)])


def signatures_from_bytes(column: pa.Array | pa.ChunkedArray, num_perm: int) -> np.ndarray:
    """The inverse of `signature_bytes`: a (rows, num_perm) uint32 matrix (read-only, a view of
    the column's buffer where it is one chunk)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if column.type != pa.binary(4 * num_perm) or column.null_count:
        raise ValueError(f"not {num_perm} uint32 signatures a row: {column.type}, "
                         f"{column.null_count} nulls")
    if len(column) == 0:
        return np.zeros((0, num_perm), np.uint32)
    values = np.frombuffer(column.buffers()[1], dtype="<u4", count=len(column) * num_perm,
                           offset=column.offset * 4 * num_perm)
    return values.reshape(-1, num_perm).astype(np.uint32, copy=False)


@dataclass(frozen=True)
class StoredSignatures:
    """A signatures table (trajectory_dedup's signatures.parquet) in memory: the row of each
    trajectory id, the shingle kind of each row, and the (rows, num_perm) signature matrix."""

    rows: dict[str, int]
    kinds: list[str]
    matrix: np.ndarray


def read_signatures(path: Path) -> StoredSignatures:
    """The stored signatures at `path` (columns trajectory_id, kind, signature)."""
    table = pq.read_table(path, columns=["trajectory_id", "kind", "signature"])
    width = table.schema.field("signature").type.list_size
    rows = {tid: k for k, tid in enumerate(table["trajectory_id"].to_pylist())}
    return StoredSignatures(rows, table["kind"].to_pylist(),
                            signatures_from_arrow(table["signature"], width))
