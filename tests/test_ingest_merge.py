"""Ingest never silently replaces data: several sources in one output, idempotent re-ingest,
a refused name clash (and --replace), and a folder that links back to itself."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sources.catalog import make_spec
from sources.ingest import IngestStats, iter_inputs, write_tables
from sources.source_merge import SourceConflict, load_manifest
from worldtrace.cli import main

SWE_FILES = ("sweagent/function_calling_simple.traj", "openhands/basic.json")


def _sources(out: Path, domain: str = "swe") -> dict[str, int]:
    """Trajectories per source in one domain partition of `out`."""
    rows = pq.read_table(out / "raw_trajectories" / f"domain={domain}" / "shard=0").to_pylist()
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["source"]] = counts.get(row["source"], 0) + 1
    return counts


def _digests(out: Path) -> dict[str, str]:
    return {
        path.relative_to(out).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(out.rglob("*"))
        if path.is_file()
    }


def _two_sources(traces_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Two folders of real SWE trajectories with different names."""
    folders = []
    for name, relative in zip(("alpha", "beta"), SWE_FILES, strict=True):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(traces_dir / "swe" / relative, folder)
        folders.append(folder)
    return folders[0], folders[1]


def test_two_sources_into_one_output_keep_both(
    traces_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alpha, beta = _two_sources(traces_dir, tmp_path)
    out = tmp_path / "out"
    assert main(["ingest", str(alpha), "--out", str(out), "--quiet"]) == 0
    assert main(["ingest", str(beta), "--out", str(out), "--quiet"]) == 0
    assert _sources(out) == {"alpha": 1, "beta": 1}
    turns = pq.read_table(out / "raw_turns" / "domain=swe" / "shard=0").to_pylist()
    assert {row["source"] for row in turns} == {"alpha", "beta"}
    assert len({(r["trajectory_id"], r["turn_index"]) for r in turns}) == len(turns)
    assert set(load_manifest(out, "swe")) == {"alpha", "beta"}
    assert not list(out.glob("_staging-*"))  # nothing left behind

    # Re-ingesting a source is idempotent, and the order sources arrived in does not matter.
    before = _digests(out)
    assert main(["ingest", str(alpha), "--out", str(out), "--quiet"]) == 0
    assert _digests(out) == before
    other_order = tmp_path / "other"
    for folder in (beta, alpha):
        write_tables([make_spec(folder.name, folder)], other_order)
    assert _digests(other_order) == before
    capsys.readouterr()


def test_same_name_from_another_path_is_refused(traces_dir: Path, tmp_path: Path) -> None:
    alpha, beta = _two_sources(traces_dir, tmp_path)
    out = tmp_path / "out"
    write_tables([make_spec("runs", alpha)], out)
    before = _digests(out)
    with pytest.raises(SourceConflict, match=r"source 'runs' \(domain swe\) was read from"):
        write_tables([make_spec("runs", beta)], out)
    assert _digests(out) == before  # refused before anything was written
    assert main(["ingest", str(beta), "--source", "runs", "--out", str(out), "--quiet"]) == 2

    write_tables([make_spec("runs", beta)], out, replace=True)
    (row,) = pq.read_table(out / "raw_trajectories" / "domain=swe" / "shard=0").to_pylist()
    assert (row["source"], row["source_path"]) == ("runs", "basic.json")
    assert load_manifest(out, "swe")["runs"]["path"] == str(beta.absolute())


def test_a_source_that_moves_domain_leaves_no_stale_rows(traces_dir: Path, tmp_path: Path) -> None:
    alpha, beta = _two_sources(traces_dir, tmp_path)
    out = tmp_path / "out"
    write_tables([make_spec("alpha", alpha, "swe"), make_spec("beta", beta, "swe")], out)
    write_tables([make_spec("alpha", alpha, "terminal")], out)
    assert _sources(out, "swe") == {"beta": 1}
    assert _sources(out, "terminal") == {"alpha": 1}
    assert set(load_manifest(out, "swe")) == {"beta"}


def test_a_folder_linking_to_itself_is_walked_once(traces_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    (folder / "inner").mkdir(parents=True)
    shutil.copy(traces_dir / "swe" / SWE_FILES[1], folder / "inner")
    (folder / "inner" / "self").symlink_to(".", target_is_directory=True)
    (folder / "again").symlink_to("inner", target_is_directory=True)
    (folder / "alias.json").symlink_to("inner/basic.json")
    stats = IngestStats()
    spec = make_spec("runs", folder, "swe")
    assert [i.path.relative_to(folder).as_posix() for i in iter_inputs(spec, stats)] == [
        "inner/basic.json"
    ]
    assert stats.skipped_repeats == 3  # inner/self, again, alias.json
    stats = write_tables([spec], tmp_path / "out")
    assert (stats.total("trajectories"), stats.total("quarantined")) == (1, 0)
