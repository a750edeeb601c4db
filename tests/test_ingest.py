"""The ingest layer end to end: catalog -> readers -> Parquet, on real fixtures and bad input."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sources import tables
from sources.catalog import CatalogError, load_catalog, make_spec
from sources.ingest import IngestStats, iter_inputs, write_tables
from sources.ingest_walk import children
from sources.partition_sinks import domains_done
from sources.readers import UnknownFormat, all_readers, detect
from sources.table_checks import contiguous_turn_indices, unique_turn_keys

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_CATALOG = REPO_ROOT / "sources.example.toml"


def read_table(data_dir: Path, table: str, domain: str) -> list[dict]:
    """One domain's rows of a table, every shard of it."""
    return [row for path in tables.table(table).domain_files(data_dir, domain)
            for row in pq.read_table(path).to_pylist()]


def test_every_fixture_ingests(traces_dir: Path, tmp_path: Path) -> None:
    specs = load_catalog(EXAMPLE_CATALOG, tmp_path)
    stats = write_tables(specs, tmp_path)
    quarantined = {
        row["source"]: row["quarantined"] for row in stats.as_table() if row["quarantined"]
    }
    # The one terminal-bench fixture launched an agent that was not installed: no agent step.
    assert quarantined == {"terminal-fixtures": 1}, quarantined
    (row,) = read_table(tmp_path, "ingest_quarantine", "terminal")
    assert row["source_path"] == "tbench/fix-permissions.1-of-1"
    assert row["reason"].endswith("'bash: mini: command not found')")
    for row in stats.as_table():
        assert row["turns"] > 0, row
        assert row["records_read"] == row["turns"] + row["quarantined"]
    # every domain has turns, keys are unique and contiguous
    for domain in ("mcp", "search", "terminal", "swe", "android", "web", "os"):
        turns_path = tmp_path / "raw_turns" / f"domain={domain}" / "shard=0" / "part-0.parquet"
        assert pq.read_metadata(turns_path).num_rows > 0, domain
        assert unique_turn_keys(turns_path).passed
        assert contiguous_turn_indices(turns_path).passed


def test_fixture_formats_are_detected_by_content(traces_dir: Path) -> None:
    expected = {
        "swe/sweagent/function_calling_simple.traj": "sweagent_traj",
        "swe/openhands/basic.json": "openhands_events",
        "swe/miniswe/github_issue.traj.json": "miniswe_messages",
        "terminal/atif/hello-world-invalid-json.trajectory.json": "atif",
        "terminal/harbor/hello-world-invalid-json.traces.json": "harbor_traces",
        "terminal/tbench/fix-permissions.1-of-1": "tbench_run",
        "mcp/toolathlon/claude-4.5-sonnet_apply-phd-email.json": "toolathlon_chat",
        "mcp/jsonrpc/stdio-transcript.txt": "mcp_jsonrpc",
        "search/miroflow/task_result.json": "miroflow",
        "android/androidworld/demo.json": "androidworld",
        "web/webarena/render_16.html": "webarena_render",
        "os/osworld/traj.jsonl": "osworld_traj",
    }
    for relative, reader_name in expected.items():
        assert detect(traces_dir / relative).name == reader_name, relative


def test_detection_still_works_after_renaming(traces_dir: Path, tmp_path: Path) -> None:
    """Content, not the file name, decides the format."""
    renamed = tmp_path / "no_hint.dat"
    shutil.copy(traces_dir / "swe/sweagent/function_calling_simple.traj", renamed)
    assert detect(renamed).name == "sweagent_traj"


def test_unknown_format_lists_what_was_tried(tmp_path: Path) -> None:
    strange = tmp_path / "notes.txt"
    strange.write_text("just some prose, no trajectory here\n")
    with pytest.raises(UnknownFormat) as error:
        detect(strange)
    assert str(strange) in str(error.value)
    assert all(name in str(error.value) for name in all_readers())


def test_bad_files_are_quarantined_and_the_rest_is_ingested(
    traces_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    good = traces_dir / "swe/sweagent/function_calling_simple.traj"
    shutil.copy(good, folder / "a_good.traj")
    text = good.read_text()
    (folder / "b_truncated.traj").write_text(text[: len(text) // 2])
    (folder / "c_unknown.txt").write_text("hello, this is not a trace\n")
    raw = text.encode()
    (folder / "d_invalid_utf8.traj").write_bytes(raw[:200] + b"\xff\xfe" + raw[200:])
    # a 50 MB single line of one JSON string: parses, but is no trajectory format
    (folder / "e_huge_line.json").write_text(json.dumps("x" * 50_000_000))
    out = tmp_path / "out"
    stats = write_tables([make_spec("mixed", folder, "swe")], out)
    quarantine = read_table(out, "ingest_quarantine", "swe")
    by_file = {row["source_path"]: row for row in quarantine}
    assert set(by_file) == {"b_truncated.traj", "c_unknown.txt", "d_invalid_utf8.traj",
                            "e_huge_line.json"}
    assert "unknown format" in by_file["c_unknown.txt"]["reason"]
    assert "line" in by_file["b_truncated.traj"]["position"] or "byte" in by_file[
        "b_truncated.traj"]["position"]
    assert "UTF-8" in by_file["d_invalid_utf8.traj"]["reason"]
    turns = read_table(out, "raw_turns", "swe")
    trajectories = read_table(out, "raw_trajectories", "swe")
    assert [t["source_path"] for t in trajectories] == ["a_good.traj"]
    assert len(turns) == trajectories[0]["n_turns"] > 0
    counts = stats.counts("mixed")
    assert counts.records_read == len(turns) + len(quarantine)
    assert counts.inputs == 5


def test_output_is_byte_identical_across_runs(traces_dir: Path, tmp_path: Path) -> None:
    specs = load_catalog(EXAMPLE_CATALOG, tmp_path)
    digests = []
    for run in ("first", "second"):
        out = tmp_path / run
        write_tables(specs, out)
        files = sorted(out.rglob("*.parquet"))
        digests.append({f.relative_to(out).as_posix(): hashlib.sha256(f.read_bytes()).hexdigest()
                        for f in files})
    assert digests[0] == digests[1]
    assert len(digests[0]) == 7 * 3


def test_trajectory_ids_are_content_hashes(traces_dir: Path, tmp_path: Path) -> None:
    source = traces_dir / "swe/sweagent/function_calling_simple.traj"
    copy_dir = tmp_path / "elsewhere" / "deeper"
    copy_dir.mkdir(parents=True)
    shutil.copy(source, copy_dir / source.name)
    ids = []
    for folder in (source.parent, copy_dir):
        out = tmp_path / f"out{len(ids)}"
        write_tables([make_spec("swe", folder / source.name, "swe")], out)
        ids.append(read_table(out, "raw_trajectories", "swe")[0]["trajectory_id"])
    # same source name, same relative file, same content: same ID on any machine or folder
    assert ids[0] == ids[1]
    assert len(ids[0]) == 16 and int(ids[0], 16) >= 0


def test_catalog_errors_name_the_file_and_entry(tmp_path: Path) -> None:
    catalog = tmp_path / "sources.toml"
    catalog.write_text('[[source]]\nname = "x"\ndomain = "moon"\npath = "."\n')
    with pytest.raises(CatalogError, match=r"sources.toml \[\[source\]\] #1.*domain"):
        load_catalog(catalog, tmp_path)
    catalog.write_text('[[source]]\nname = "x"\ndomain = "os"\n')
    with pytest.raises(CatalogError, match="missing string `path`"):
        load_catalog(catalog, tmp_path)


def test_missing_source_path_is_quarantined(tmp_path: Path) -> None:
    stats = write_tables([make_spec("ghost", tmp_path / "nope", "web")], tmp_path / "out")
    rows = read_table(tmp_path / "out", "ingest_quarantine", "web")
    assert rows[0]["reason"] == "source path does not exist"
    assert stats.total("quarantined") == 1


def test_failed_write_keeps_the_previous_file(traces_dir: Path, tmp_path: Path) -> None:
    spec = make_spec("os", traces_dir / "os", "os")
    write_tables([spec], tmp_path)
    target = tmp_path / "raw_turns" / "domain=os" / "shard=0" / "part-0.parquet"
    before = target.read_bytes()

    class Boom(Exception):
        pass

    def explode(_stats: object) -> None:
        raise Boom

    with pytest.raises(Boom):
        write_tables([spec], tmp_path, on_trajectory=explode)
    assert target.read_bytes() == before
    assert [p.name for p in target.parent.iterdir()] == ["part-0.parquet"]  # no temp left


def test_a_datasets_folder_in_the_catalog_is_read_as_one_table(tmp_path: Path) -> None:
    """The folder's .arrow and .json files are not walked one by one (nor quarantined)."""
    import datasets

    rows = [
        {"trajectory_id": "a", "turn_index": 0, "action": "ls", "observation": "README.md",
         "task": "look around"},
        {"trajectory_id": "a", "turn_index": 1, "action": "cat README.md",
         "observation": "# demo", "task": "look around"},
    ]
    folder = tmp_path / "hub_copy"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder))
    catalog = tmp_path / "sources.toml"
    catalog.write_text('[[source]]\nname = "hub"\ndomain = "terminal"\npath = "hub_copy"\n')
    stats = write_tables(load_catalog(catalog, tmp_path), tmp_path / "out")
    turns = read_table(tmp_path / "out", "raw_turns", "terminal")
    assert [t["action"] for t in turns] == ["ls", "cat README.md"]
    assert stats.counts("hub").inputs == 1 and stats.total("quarantined") == 0


def test_hidden_entries_are_counted_not_read(traces_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(traces_dir / "swe/miniswe/github_issue.traj.json", folder / "run.traj.json")
    (folder / ".DS_Store").write_bytes(b"\x00\x01binary")
    (folder / ".git").mkdir()
    stats = write_tables([make_spec("runs", folder, "swe")], tmp_path / "out")
    assert stats.skipped_hidden == 2
    assert stats.total("quarantined") == 0 and stats.total("turns") == 10


def test_a_folder_lists_its_real_entries_by_name_before_its_links(tmp_path: Path) -> None:
    """The walk's order, as `sorted(iterdir(), key=(is_symlink, name))` gave it: names sorted,
    links after every real entry, so a file reached both ways keeps its own path."""
    for name in ("b.json", "a.json", "c"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "0-link.json").symlink_to("c")
    (tmp_path / "aa-link.json").symlink_to("gone")
    listed = list(children(tmp_path, str(tmp_path.resolve())))
    assert [child.name for child, _ in listed] == [
        "a.json", "b.json", "c", "0-link.json", "aa-link.json"]
    assert [real for _, real in listed] == [
        str(child.resolve()) for child in (tmp_path / "a.json", tmp_path / "b.json",
                                           tmp_path / "c")] + [None, None]
    stats = IngestStats()
    spec = make_spec("files", tmp_path)
    assert [entry.path.name for entry in iter_inputs(spec, stats)] == [
        "a.json", "b.json", "c", "aa-link.json"]
    assert stats.skipped_repeats == 1  # 0-link.json: c again


def test_domains_done_are_those_no_later_source_can_write() -> None:
    later = [make_spec("a", Path("/x"), "swe"), make_spec("b", Path("/y"), "web")]
    open_sinks = [("raw_turns", "android", "0"), ("raw_turns", "swe", "1"),
                  ("raw_turns", "web", "0")]
    assert domains_done(later, open_sinks) == {"android"}
    assert domains_done([], open_sinks) == {"android", "swe", "web"}
    assert domains_done([*later, make_spec("c", Path("/z"))], open_sinks) == set()
