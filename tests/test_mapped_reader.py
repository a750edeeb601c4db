"""The declarative reader: a real layout no reader knows, mapped in a catalog and ingested."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sources.catalog import CatalogError, load_catalog
from sources.ingest import write_tables
from sources.readers import UnknownFormat, detect
from sources.readers.mapped import MappedReader, Mapping, MappingError, parse_path

SAMPLE = Path(__file__).parent / "data" / "mapped" / "annotation_trace_excerpt.json"
MAPPING = """
[[source]]
name = "annotation-traces"
domain = "swe"
path = "runs"
[source.mapping]
task = "annotationTrace[0].details.userPrompt"
steps = "annotationTrace"
action = "details.command"
observation = "{observation}"
exit_code = "details.exitCode"
keep_steps = {{ action = ["execute_terminal_command"] }}
metadata = ["tags", "taskIssue"]
action_kind = "shell"
observation_format = "stdout"
"""


def _catalog(tmp_path: Path, observation: str = "details.output") -> Path:
    (tmp_path / "runs").mkdir()
    shutil.copy(SAMPLE, tmp_path / "runs" / SAMPLE.name)
    catalog = tmp_path / "sources.toml"
    catalog.write_text(MAPPING.format(observation=observation))
    return catalog


def test_no_dedicated_reader_claims_the_layout() -> None:
    with pytest.raises(UnknownFormat):
        detect(SAMPLE)


def test_mapped_layout_ingests_without_python(tmp_path: Path) -> None:
    specs = load_catalog(_catalog(tmp_path), tmp_path / "data")
    assert specs[0].format == "mapped"
    stats = write_tables(specs, tmp_path / "data")
    counts = stats.counts("annotation-traces")
    assert (counts.trajectories, counts.turns, counts.quarantined) == (1, 3, 0)
    turns = pq.read_table(tmp_path / "data" / "raw_turns" / "domain=swe" / "shard=0").to_pylist()
    assert [turn["action"] for turn in turns] == [
        "cd packages/tldraw && npm run build 2>&1 | head -100",
        "cd packages/tldraw && npx tsc --noEmit 2>&1 | "
        'grep -E "(error|NoteShapeUtil|useTranslation)" | head -20',
        "cd packages/tldraw && npx eslint src/lib/shapes/note/NoteShapeUtil.tsx "
        "src/lib/ui/hooks/useTranslation/useTranslation.tsx 2>&1",
    ]
    assert [turn["exit_code"] for turn in turns] == [1, 0, 0]
    assert turns[0]["observation"].startswith("Error: ENOENT: no such file or directory")
    assert turns[2]["observation"] == ""
    assert {(t["action_kind"], t["observation_format"], t["source_format"]) for t in turns} == {
        ("shell", "stdout", "mapped")
    }
    (row,) = pq.read_table(
        tmp_path / "data" / "raw_trajectories" / "domain=swe" / "shard=0").to_pylist()
    assert row["task"].startswith("I've received a bug report that TldrawEditor")
    metadata = json.loads(row["metadata"])
    assert metadata["steps_left_out"] == 2  # begin_interaction and search_string
    assert metadata["tags"]["issueType"] == "BugFix"


def test_a_path_that_does_not_resolve_is_named(tmp_path: Path) -> None:
    specs = load_catalog(_catalog(tmp_path, observation="details.stdout"), tmp_path / "data")
    (item,) = list(MappedReader(specs[0].mapping).read(tmp_path / "runs" / SAMPLE.name))
    assert item.position == "$"
    assert item.reason == (
        "mapping.observation = 'details.stdout' did not resolve: key 'stdout' not found at "
        "$.annotationTrace[2].details (keys: command, directory, error, exitCode, output)"
    )


def test_jsonl_records_and_a_final_step_without_observation(tmp_path: Path) -> None:
    mapping = Mapping.from_table(
        {"task": "q", "steps": "turns", "action": "cmd", "observation": "out", "is_error": "err"}
    )
    path = tmp_path / "runs.jsonl"
    records = [
        {"q": "list", "turns": [{"cmd": "ls", "out": "a", "err": False}, {"cmd": "submit"}]},
        {"q": "broken", "turns": [{"cmd": "ls"}, {"cmd": "pwd", "out": "/"}]},
        {"turns": []},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "{not json\n")
    first, *problems = list(MappedReader(mapping).read(path))
    assert [(t.action, t.observation, t.is_error) for t in first.turns] == [("ls", "a", False)]
    assert first.metadata["final_action"] == "submit"
    assert [(q.position, q.reason.split(":")[0]) for q in problems] == [
        ("line 2", "mapping.observation = 'out' did not resolve"),
        ("line 3", "mapping.task = 'q' did not resolve"),
        ("line 4 column 2", "invalid JSON"),
    ]


def test_bad_mappings_are_catalog_errors(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    text = catalog.read_text()
    catalog.write_text(text.replace("\nsteps =", "\nstepz ="))
    with pytest.raises(CatalogError, match=r"unknown mapping key\(s\) \['stepz'\]"):
        load_catalog(catalog, tmp_path)
    catalog.write_text(text.replace('path = "runs"', 'path = "runs"\nformat = "atif"'))
    with pytest.raises(CatalogError, match="a mapping is its own format"):
        load_catalog(catalog, tmp_path)
    with pytest.raises(MappingError, match="cannot parse path"):
        parse_path("a..b")
    assert parse_path("$.a.b[2].c") == ["a", "b", 2, "c"]


def test_records_inside_a_document(tmp_path: Path) -> None:
    mapping = Mapping.from_table(
        {"records": "data.runs", "task": "q", "steps": "s", "action": "c", "observation": "o"}
    )
    path = tmp_path / "runs.json"
    runs = [{"q": "a", "s": [{"c": "ls", "o": "x"}]}, {"q": "b", "s": [{"c": "pwd", "o": "/"}]}]
    path.write_text(json.dumps({"meta": 1, "data": {"runs": runs}}))
    trajectories = list(MappedReader(mapping).read(path))
    assert [(t.position, t.task, t.turns[0].action) for t in trajectories] == [
        ("$.data.runs[0]", "a", "ls"),
        ("$.data.runs[1]", "b", "pwd"),
    ]
    with pytest.raises(MappingError, match="records must be a path of object keys"):
        Mapping.from_table({**{k: "x" for k in Mapping.required}, "records": "data[0]"})
