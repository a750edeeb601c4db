"""Ingest with its inputs read in a pool of worker processes writes the same bytes as one
process, in the same order, with the same counts, whether an input goes to a worker or (too big
for one) is streamed by the parent. (A run of many partitions gives its workers whole
partitions instead, tests/test_ingest_partitions.py; here the pool is made to take it.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from sources.ingest import write_tables
from sources.ingest_pool import PoolConfig
from sources.schema import DOMAINS
from tests.generated_sources import corpus_with_broken_files, file_hashes, generated_specs


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return corpus_with_broken_files(tmp_path_factory.mktemp("corpus"), 6, 11)


@pytest.fixture(autouse=True)
def pool_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No partition plan: every run with workers reads through the pool."""
    monkeypatch.setattr("sources.ingest.plan_partitions", lambda *args: None)


def test_workers_write_the_same_bytes_and_counts(corpus: Path, tmp_path: Path) -> None:
    progress: list[tuple[int, int]] = []
    one = write_tables(generated_specs(corpus), tmp_path / "one")
    two = write_tables(generated_specs(corpus), tmp_path / "two", workers=2,
                       on_trajectory=lambda s: progress.append((s.total("trajectories"),
                                                                s.total("turns"))))
    assert file_hashes(tmp_path / "one") == file_hashes(tmp_path / "two")
    assert one.as_table() == two.as_table()
    assert two.total("quarantined") >= len(DOMAINS)
    # progress counts every trajectory as it is written, one at a time
    assert [t for t, _ in progress] == list(range(1, one.total("trajectories") + 1))
    assert progress[-1][1] == one.total("turns")


def test_big_inputs_are_streamed_by_the_parent(corpus: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = sorted(p.stat().st_size for p in corpus.rglob("*") if p.is_file())
    config = PoolConfig(workers=2, max_input_bytes=sizes[len(sizes) // 2])  # half go to workers
    monkeypatch.setattr("sources.ingest.PoolConfig", lambda workers: config)
    write_tables(generated_specs(corpus), tmp_path / "mixed", workers=2)
    write_tables(generated_specs(corpus), tmp_path / "one")
    assert file_hashes(tmp_path / "mixed") == file_hashes(tmp_path / "one")
