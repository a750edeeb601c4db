"""The `worldtrace` command line: formats, ingest, generate, quality grade."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sources.readers import all_readers
from worldtrace.cli import main


def test_formats_lists_every_reader(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["formats"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(all_readers())
    assert len(lines) == 18


def test_ingest_writes_partitions_and_reconciles(
    traces_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["ingest", str(traces_dir / "swe"), "--out", str(out), "--quiet"]) == 0
    summary = capsys.readouterr().out
    assert "5 trajectories, 25 turns, 0 quarantined; records read 25" in summary
    turns = pq.read_table(out / "raw_turns" / "domain=swe" / "shard=0" / "part-0.parquet")
    assert turns.num_rows == 25  # sweagent 5 + 5 + 4, openhands 1, mini-swe 10
    assert sorted(set(turns["source_format"].to_pylist())) == [
        "miniswe_messages", "openhands_events", "sweagent_traj"]


def test_ingest_with_workers_writes_the_same_bytes(traces_dir: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    for name, extra in (("one", []), ("two", ["--workers", "2"])):
        assert main(["ingest", str(traces_dir / "swe"), "--out", str(tmp_path / name),
                     "--source", "swe", "--quiet", *extra]) == 0
    assert "5 trajectories, 25 turns" in capsys.readouterr().out.splitlines()[-1]
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*.parquet"))
    assert files and all((tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes()
                         for f in files)


def test_ingest_reports_a_misspelt_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(tmp_path), "--format", "swe_agent", "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "swe_agent" in error and "sweagent_traj" in error


def test_generate_then_ingest_through_the_console_script(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("worldtrace")
    corpus = tmp_path / "corpus"
    subprocess.run([str(script), "generate", "--domains", "terminal,web", "--trajectories", "5",
                    "--seed", "3", "--out", str(corpus)], check=True, capture_output=True)
    assert sorted(p.name for p in corpus.iterdir()) == ["_truth", "terminal", "web"]
    result = subprocess.run(
        [str(script), "ingest", str(corpus / "web"), "--out", str(tmp_path / "data"), "--quiet"],
        check=True, capture_output=True, text=True,
    )
    assert "5 trajectories" in result.stdout and "0 quarantined" in result.stdout
