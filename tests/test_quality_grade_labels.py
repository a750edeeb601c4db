"""Grading the classifier on a hand-labelled set: `worldtrace quality grade --labels FILE`."""

from __future__ import annotations

import json

import pytest

from grading.hand_labels import LabelsFileError, grade_labels, load_labels
from worldtrace.cli import main

# Three real turns of ../shared/traces and what a person reading them calls them.
SMALL_SET = [
    {"file": "traces/swe/miniswe/github_issue.traj.json", "position": "$", "turn_index": 0,
     "label": "error", "why": "cat: No such file or directory, return code 1",
     "source": "swe/miniswe"},
    {"file": "traces/swe/miniswe/github_issue.traj.json", "position": "$", "turn_index": 1,
     "label": "informative", "why": "directory listing", "source": "swe/miniswe"},
    {"file": "traces/mcp/jsonrpc/stdio-transcript.txt", "position": "line 1", "turn_index": 3,
     "label": "error", "why": "tool result flagged isError", "source": "mcp/jsonrpc"},
]


def write_labels(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_labels_file_problems_name_the_line(tmp_path):
    bad = dict(SMALL_SET[0], label="noise")
    with pytest.raises(LabelsFileError, match=r"labels.jsonl:2: label 'noise'"):
        load_labels(write_labels(tmp_path / "labels.jsonl", [SMALL_SET[1], bad]))
    with pytest.raises(LabelsFileError, match=r"labels.jsonl:2: turn .* labelled twice"):
        load_labels(write_labels(tmp_path / "labels.jsonl", [SMALL_SET[0], SMALL_SET[0]]))
    with pytest.raises(LabelsFileError, match=r"labels.jsonl:1: missing turn_index"):
        load_labels(write_labels(tmp_path / "labels.jsonl", [{"file": "x", "position": "$",
                                                              "label": "echo"}]))


def test_a_missing_labelled_file_is_named(tmp_path, traces_dir):
    labels = write_labels(tmp_path / "labels.jsonl", [dict(SMALL_SET[0], file="traces/nope")])
    with pytest.raises(LabelsFileError, match="traces/nope not found"):
        grade_labels(labels, traces_dir.parent, tmp_path / "work")


def test_grade_finds_every_labelled_turn(tmp_path, traces_dir):
    labels = write_labels(tmp_path / "labels.jsonl", SMALL_SET)
    report = grade_labels(labels, traces_dir.parent, tmp_path / "work")
    assert not report.unmatched and report.overall.total == 3
    assert set(report.by_source) == {"swe/miniswe", "mcp/jsonrpc"}
    assert report.overall.counts["error", "error"] == 2  # exit 1 and an isError result
    assert report.lines()[-1].startswith(f"accuracy {report.overall.accuracy:.3f}, worst recall")


def test_an_unknown_position_is_reported_unmatched(tmp_path, traces_dir):
    labels = write_labels(tmp_path / "labels.jsonl", [dict(SMALL_SET[1], position="$[7]")])
    report = grade_labels(labels, traces_dir.parent, tmp_path / "work")
    assert len(report.unmatched) == 1 and report.overall.total == 0


def test_cli_grades_a_labels_file(tmp_path, traces_dir, capsys):
    labels = write_labels(tmp_path / "labels.jsonl", SMALL_SET)
    assert main(["quality", "grade", "--labels", str(labels),
                 "--root", str(traces_dir.parent)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("labelled turns graded: 3 (unmatched: 0)")
    assert any(line.startswith("low-information") for line in lines)
    assert lines[-1].startswith("accuracy ") and "worst recall" in lines[-1]


def test_cli_grades_several_labels_files_one_after_the_other(tmp_path, traces_dir, capsys):
    first = write_labels(tmp_path / "first.jsonl", SMALL_SET[:1])
    second = write_labels(tmp_path / "second.jsonl", SMALL_SET[1:])
    assert main(["quality", "grade", "--labels", str(first), str(second),
                 "--root", str(traces_dir.parent)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("== labels ")]
    assert [lines[i] for i in headers] == [f"== labels {first}", f"== labels {second}"]
    assert lines[headers[0] + 1].startswith("labelled turns graded: 1 ")
    assert lines[headers[1] + 1].startswith("labelled turns graded: 2 ")
    assert lines[headers[1] - 1].startswith("accuracy ") and lines[-1].startswith("accuracy ")


@pytest.mark.parametrize("bad_line, problem", [
    ("{not json", "not JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"file": "a", "position": "$", "turn_index": "three", "label": "echo"}',
     "turn_index 'three' is not an integer"),
])
def test_cli_reports_a_bad_labels_file_in_one_line(tmp_path, capsys, bad_line, problem):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps(SMALL_SET[0]) + "\n" + bad_line + "\n", encoding="utf-8")
    assert main(["quality", "grade", "--labels", str(labels), "--work-dir",
                 str(tmp_path / "work")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"worldtrace: {labels}:2: ")
    assert problem in err[0]


def test_cli_reports_a_missing_labels_file(tmp_path, capsys):
    missing = tmp_path / "nope.jsonl"
    assert main(["quality", "grade", "--labels", str(missing)]) == 2
    assert capsys.readouterr().err.startswith(f"worldtrace: {missing}: cannot read")
