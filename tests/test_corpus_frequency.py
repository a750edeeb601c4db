"""corpus_frequency read in windows (quality/corpus_frequency.py) against a plain-Python
definition, and the domain-order windows of staged shards (quality/signature_windows.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quality.corpus_frequency import corpus_frequency
from quality.minhash import LshConfig, signature_bytes
from quality.signature_windows import check_staged_rows, domain_windows

LSH = LshConfig(threshold=0.9, bands=4, rows=4)
K = LSH.bands * LSH.rows


def reference(signatures: np.ndarray, trajectory: np.ndarray, lsh: LshConfig) -> np.ndarray:
    """The definition: per band, rows with equal band values share a bucket; a member counts
    when its whole signature agrees with the bucket's first row's on >= threshold of the
    values; each row's frequency is the most distinct trajectories among the counted members
    of its buckets (1 if it is in a bucket but not counted; 0 with no shingles)."""
    has = [bool((row != 0xFFFFFFFF).any()) for row in signatures]
    best = [int(h) for h in has]
    k = signatures.shape[1]
    for band in range(lsh.bands):
        buckets: dict[tuple[int, ...], list[int]] = {}
        for row in range(len(signatures)):
            if has[row]:
                values = tuple(signatures[row, band * lsh.rows:(band + 1) * lsh.rows])
                buckets.setdefault(values, []).append(row)
        for members in buckets.values():
            if len(members) < 2:
                continue
            first = signatures[members[0]]
            counted = [m for m in members
                       if int((signatures[m] == first).sum()) / k >= lsh.threshold]
            trajectories = len({int(trajectory[m]) for m in counted})
            for m in members:
                best[m] = max(best[m], trajectories if m in counted else 1)
    return np.array(best, np.int64)


def planted(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Signatures with near-copies of a few templates (some within the threshold, some not),
    fresh rows and rows without shingles; trajectories of a few rows each."""
    rng = np.random.default_rng(seed)
    templates = rng.integers(0, 50, size=(5, K), dtype=np.uint32)
    signatures = templates[rng.integers(0, 5, size=rows)]
    for row in range(rows):
        changed = rng.choice(K, size=int(rng.integers(0, 4)), replace=False)
        signatures[row, changed] = rng.integers(0, 50, size=len(changed))
    signatures[rng.random(rows) < 0.3] = rng.integers(0, 2**32 - 1, size=K, dtype=np.uint32)
    signatures[rng.random(rows) < 0.1] = 0xFFFFFFFF
    return signatures, np.sort(rng.integers(0, rows // 3, size=rows))


def windows_of(signatures: np.ndarray, size: int):
    """Windows over an in-memory matrix, from the window holding `start`."""
    def windows(start: int):
        for lo in range(start - start % size, len(signatures), size):
            yield lo, signatures[lo:lo + size]
    return windows


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(("window", "chunk_rows"), [(7, 1), (7, 3), (64, 1000), (1000, 2)])
def test_windowed_frequency_is_the_definition(seed, window, chunk_rows):
    signatures, trajectory = planted(150, seed)
    frequency, has = corpus_frequency(windows_of(signatures, window), len(signatures),
                                      trajectory, LSH, K, chunk_rows)
    assert frequency.tolist() == reference(signatures, trajectory, LSH).tolist()
    assert has.tolist() == (signatures != 0xFFFFFFFF).any(axis=1).tolist()
    assert frequency.max() > 2  # the planted copies are found


def test_one_row_or_none():
    for rows in (0, 1):
        signatures = np.zeros((rows, K), np.uint32)
        frequency, has = corpus_frequency(windows_of(signatures, 4), rows,
                                          np.zeros(rows, np.int64), LSH, K)
        assert frequency.tolist() == [1] * rows and has.tolist() == [True] * rows


def _stage(path: Path, signatures: np.ndarray, group_rows: int) -> None:
    column = signature_bytes(signatures)
    pq.write_table(pa.table({"obs_signature": column}), path, row_group_size=group_rows)


def test_domain_windows_reassemble_the_domain_order(tmp_path):
    signatures, _ = planted(100, 7)
    shard_of = np.random.default_rng(1).integers(0, 3, size=100)
    positions = [np.flatnonzero(shard_of == s) for s in range(3)]
    paths = [tmp_path / f"shard-{s}.parquet" for s in range(3)]
    for s, path in enumerate(paths):
        _stage(path, signatures[positions[s]], group_rows=6)
    check_staged_rows(paths, positions)
    for start in (0, 1, 37, 99):
        parts = list(domain_windows(paths, positions, "obs_signature", K, start, window=9))
        assert [lo for lo, _ in parts] == list(range(start, 100, 9))
        assert np.array_equal(np.concatenate([block for _, block in parts]), signatures[start:])


def test_one_shard_windows_are_its_row_groups(tmp_path):
    signatures, _ = planted(50, 7)
    path = tmp_path / "shard-0.parquet"
    _stage(path, signatures, group_rows=8)
    for start in (0, 1, 8, 13, 49, 50):
        parts = list(domain_windows([path], [np.arange(50)], "obs_signature", K, start))
        expected = [start, *range(start // 8 * 8 + 8, 50, 8)] if start < 50 else []
        assert [lo for lo, _ in parts] == expected
        assert np.array_equal(np.concatenate([block for _, block in parts] or
                                             [np.zeros((0, K), np.uint32)]), signatures[start:])


def test_staged_rows_must_match_the_shard(tmp_path):
    signatures, _ = planted(10, 3)
    _stage(tmp_path / "s.parquet", signatures, group_rows=4)
    with pytest.raises(ValueError, match="10 staged rows, but its shard has 9"):
        check_staged_rows([tmp_path / "s.parquet"], [np.arange(9)])
    with pytest.raises(ValueError, match="not in the domain's order"):
        check_staged_rows([tmp_path / "s.parquet"], [np.arange(10)[::-1]])
