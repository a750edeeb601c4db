"""Ingest with its inputs read in worker processes writes the same bytes as one process, in
the same order, with the same counts, whether an input goes to a worker or (too big for one)
is streamed by the parent."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sources.catalog import make_spec
from sources.factory.scale import generate_corpus, source_name
from sources.ingest import write_tables
from sources.ingest_pool import PoolConfig
from sources.schema import DOMAINS


def _specs(corpus: Path) -> list:
    return [make_spec(source_name(d), corpus / d / source_name(d), d) for d in DOMAINS]


def _files(data: Path) -> dict[str, str]:
    return {path.relative_to(data).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(data.rglob("*")) if path.is_file()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    generate_corpus(root, list(DOMAINS), 6, 11)
    for domain in DOMAINS:  # a broken file in each domain: quarantine rows too
        folder = root / domain / source_name(domain)
        first = sorted(folder.iterdir())[0]
        (folder / f"zz-truncated-{first.name}").write_bytes(first.read_bytes()[:100])
    return root


def test_workers_write_the_same_bytes_and_counts(corpus: Path, tmp_path: Path) -> None:
    progress: list[tuple[int, int]] = []
    one = write_tables(_specs(corpus), tmp_path / "one")
    two = write_tables(_specs(corpus), tmp_path / "two", workers=2, on_trajectory=lambda s: (
        progress.append((s.total("trajectories"), s.total("turns")))))
    assert _files(tmp_path / "one") == _files(tmp_path / "two")
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
    write_tables(_specs(corpus), tmp_path / "mixed", workers=2)
    write_tables(_specs(corpus), tmp_path / "one")
    assert _files(tmp_path / "mixed") == _files(tmp_path / "one")
