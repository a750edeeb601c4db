"""Reading workers that own whole partitions (sources/ingest_partitions.py) write the same bytes
and counts as one process, for every shard layout and for a one-shard step; a named empty domain
still gets its files; a run too narrow for them keeps the pool; and a worker killed mid-partition
fails the run and leaves no file of it behind, so the rerun gives the same bytes."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from sources.catalog import make_spec
from sources.factory.scale import source_name
from sources.ingest import IngestStats, write_tables
from sources.ingest_partitions import WAITING_LINES, PartitionTask, plan_partitions
from sources.ingest_walk import Input
from sources.readers import get_reader
from sources.schema import DOMAINS
from sources.shards import ShardConfig
from sources.source_merge import RunOutput
from tests.generated_sources import corpus_with_broken_files, file_hashes, generated_specs


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return corpus_with_broken_files(tmp_path_factory.mktemp("corpus"), 12, 5)


@pytest.mark.parametrize("shards", [1, 3])
def test_partition_workers_write_the_same_bytes_and_counts(corpus: Path, tmp_path: Path,
                                                           shards: int) -> None:
    config = ShardConfig(shards)
    specs = generated_specs(corpus)
    plan = plan_partitions(specs, IngestStats(), RunOutput(tmp_path), config, None, 2,
                           tmp_path)
    assert plan is not None and len(plan) == len(DOMAINS) * shards
    assert [task.bytes for task in plan] == sorted((task.bytes for task in plan), reverse=True)
    one = write_tables(specs, tmp_path / "one", shards=config)
    progress: list[int] = []
    two = write_tables(specs, tmp_path / "two", workers=2, shards=config,
                       on_trajectory=lambda stats: progress.append(stats.total("turns")))
    assert file_hashes(tmp_path / "one") == file_hashes(tmp_path / "two")
    assert one.as_table() == two.as_table()
    assert two.total("quarantined") == len(DOMAINS)
    assert (two.skipped_hidden, two.skipped_docs) == (len(DOMAINS), len(DOMAINS))
    assert len(progress) == len(plan)  # once a partition, rising to the total
    assert progress == sorted(progress) and progress[-1] == one.total("turns")


def test_a_shard_step_and_a_named_empty_domain(corpus: Path, tmp_path: Path) -> None:
    config = ShardConfig(2)
    specs = generated_specs(corpus, DOMAINS[:-1])  # the last domain has no source: named, empty
    for workers in (1, 2):
        write_tables(specs, tmp_path / str(workers), domains=[DOMAINS[-1]], workers=workers,
                     shards=config, only_shard="1")
    assert file_hashes(tmp_path / "1") == file_hashes(tmp_path / "2")
    empty_turns = tmp_path / "2" / "raw_turns" / f"domain={DOMAINS[-1]}" / "shard=1"
    assert (empty_turns / "part-0.parquet").is_file()
    assert not any("shard=0" in name for name in file_hashes(tmp_path / "2"))


def test_a_narrow_run_keeps_the_reading_pool(corpus: Path, tmp_path: Path) -> None:
    specs = generated_specs(corpus, DOMAINS[:1])
    assert plan_partitions(specs, IngestStats(), RunOutput(tmp_path), ShardConfig(3), None,
                           2, tmp_path) is None  # three partitions: fewer than two a worker
    unknown = [make_spec("any", corpus / DOMAINS[0] / source_name(DOMAINS[0]))]
    assert plan_partitions(unknown, IngestStats(), RunOutput(tmp_path), ShardConfig(8), None,
                           2, tmp_path) is None  # the domain is known only from the records
    progress: list[int] = []
    two = write_tables(specs, tmp_path / "two", workers=2, on_trajectory=lambda stats: (
        progress.append(stats.total("trajectories"))))
    assert progress == list(range(1, progress[-1] + 1))  # the pool: one call a trajectory
    assert (two.skipped_hidden, two.skipped_docs) == (1, 1)  # the plan's walk not counted


def test_a_worker_killed_mid_partition_leaves_nothing(corpus: Path, tmp_path: Path) -> None:
    """One partition's last input is a FIFO no one writes: its worker has opened its sinks and
    waits there for good. Once the other partitions are written, every worker is SIGKILLed."""
    data = tmp_path / "data"
    write_tables(generated_specs(corpus), data)
    before = file_hashes(data)
    source = corpus / DOMAINS[0] / source_name(DOMAINS[0])
    fifo = source / "zzzz-waits-for-good.jsonl"
    os.mkfifo(fifo)
    try:
        failure: list[BaseException] = []

        def run() -> None:
            try:
                write_tables(generated_specs(corpus), data, workers=2)
            except BaseException as error:  # noqa: BLE001 - handed to the test thread
                failure.append(error)

        thread = threading.Thread(target=run)
        thread.start()
        deadline = time.monotonic() + 120
        while len([p for p in data.rglob(".*fresh*") if ".tmp-" not in p.name]) < 3 * (
                len(DOMAINS) - 1) or not list(data.rglob(f"domain={DOMAINS[0]}/**/.*.tmp-*")):
            assert time.monotonic() < deadline, ("the other partitions were never written, or "
                                                 "the waiting worker never opened its files")
            time.sleep(0.05)
        for child in multiprocessing.active_children():
            os.kill(child.pid, signal.SIGKILL)
        thread.join(60)
        assert not thread.is_alive()
    finally:
        fifo.unlink()
    assert len(failure) == 1 and isinstance(failure[0], BrokenProcessPool)
    assert file_hashes(data) == before  # no fresh or temporary file, the old tables untouched
    write_tables(generated_specs(corpus), data, workers=2)
    assert file_hashes(data) == before


def test_an_input_list_keeps_every_path_and_reader(tmp_path: Path) -> None:
    """Paths with a newline, a tab, an undecodable byte or any Unicode, and a run folder's
    reader, come back from a partition's input list as they went in, in order, past the
    lines a task holds before it writes them."""
    run_folder_reader = get_reader("osworld_traj")
    names = ["plain.json", "new\nline\t.json", os.fsdecode(b"bad-\xff.json"), "ü ✓/run 1"]
    entries = [(index % 3, Input(tmp_path / names[index % 4],
                                 run_folder_reader if index % 4 == 3 else None))
               for index in range(WAITING_LINES * 2 + 5)]
    task = PartitionTask("os", "0", {}, tmp_path / "os-0.jsonl")
    for source_index, entry in entries:
        task.add(source_index, entry)
    task.flush()
    assert list(task.entries()) == entries
    assert task.inputs == len(entries)
