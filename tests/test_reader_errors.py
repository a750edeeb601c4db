"""Broken input is quarantined with its reason; anything else raised in a reader is a bug.

The buggy reader below is the real ATIF reader with a real bug put in (a KeyError on a field it
forgot to check): the run must stop and name the reader and the file, not count it as bad data.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import sources.readers
from sources.catalog import make_spec
from sources.ingest import ReaderBug, read_input, write_tables
from sources.readers import READERS
from sources.readers.atif import AtifReader
from sources.readers.base import InputError
from sources.registry import Registry
from sources.schema import Quarantine, Trajectory

ATIF = Path("terminal/atif/hello-world-invalid-json.trajectory.json")


class BuggyAtifReader(AtifReader):
    name = "buggy_atif"

    def _trajectory(self, path: Path, document: dict[str, Any], quarantined: list) -> Any:
        return document["no_such_key"]  # the bug: a field nobody checked


def test_truncated_input_is_quarantined_with_file_and_place(traces_dir: Path,
                                                           tmp_path: Path) -> None:
    broken = tmp_path / "truncated.trajectory.json"
    data = (traces_dir / ATIF).read_bytes()
    broken.write_bytes(data[: len(data) // 2])
    items = list(read_input(broken, AtifReader()))
    assert len(items) == 1 and isinstance(items[0], Quarantine)
    assert items[0].source_path == str(broken)
    assert items[0].position.startswith("line ")
    assert items[0].reason.startswith("atif: invalid JSON")


def test_wrong_shape_is_an_input_error_quarantined(tmp_path: Path) -> None:
    listed = tmp_path / "list.trajectory.json"
    listed.write_text("[1, 2]")
    with pytest.raises(InputError, match="expected a JSON object, got list"):
        list(AtifReader().read(listed))
    items = list(read_input(listed, AtifReader()))
    assert [(i.position, i.reason) for i in items] == [
        ("$", "atif: expected a JSON object, got list")]


def test_a_bug_inside_a_reader_fails_loudly(traces_dir: Path) -> None:
    good = list(read_input(traces_dir / ATIF, AtifReader()))
    assert isinstance(good[-1], Trajectory)
    with pytest.raises(ReaderBug, match=r"reader 'buggy_atif' failed on .*hello-world.*KeyError"):
        list(read_input(traces_dir / ATIF, BuggyAtifReader()))


def test_a_reader_bug_stops_the_run_and_keeps_the_tables(
        traces_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "runs"
    source.mkdir()
    shutil.copy(traces_dir / ATIF, source / ATIF.name)
    data = tmp_path / "data"
    write_tables([make_spec("runs", source, "terminal", "atif")], data)
    turns = data / "raw_turns" / "domain=terminal" / "shard=0" / "part-0.parquet"
    before = turns.read_bytes()
    assert pq.read_metadata(turns).num_rows > 0
    with_bug = Registry("reader", {**READERS.targets(),
                                   "buggy_atif": f"{__name__}:BuggyAtifReader"},
                        build=lambda cls: cls())
    monkeypatch.setattr(sources.readers, "READERS", with_bug)
    with pytest.raises(ReaderBug, match="buggy_atif"):
        write_tables([make_spec("runs", source, "terminal", "buggy_atif")], data)
    assert turns.read_bytes() == before  # nothing half-written, nothing counted as bad data
    quarantine = data / "ingest_quarantine" / "domain=terminal" / "shard=0" / "part-0.parquet"
    assert pq.read_metadata(quarantine).num_rows == 0
