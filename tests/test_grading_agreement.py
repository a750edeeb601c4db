"""grading/agreement.py: agreement between two labellers, on pairs whose figures are known by hand
and on the committed realdev2 sets (which carry both labels)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grading.agreement import Agreement, cohen_kappa, main, read_pairs, report

WEIGHTS = {"empty": 0.0, "error": 1.0, "unchanged": 0.1, "echo": 0.1, "boilerplate": 0.1,
           "informative": 1.0}
LABELLED = Path(__file__).resolve().parents[1] / "grading" / "labelled"


def test_kappa_by_hand():
    # 10 turns: 8 agree; A says informative 6, echo 4; B says informative 5, echo 3, empty 2.
    pairs = ([("informative", "informative")] * 5 + [("echo", "echo")] * 3
             + [("informative", "empty"), ("echo", "empty")])
    # chance = (6*5 + 4*3) / 100 = 0.42; kappa = (0.8 - 0.42) / 0.58
    assert cohen_kappa(pairs) == pytest.approx(0.38 / 0.58)
    assert cohen_kappa([("echo", "echo")] * 3) == 1.0
    assert cohen_kappa([("echo", "informative"), ("informative", "echo")]) == pytest.approx(-1.0)


def test_category_weight_and_binary_views():
    pairs = (("informative", "informative"), ("echo", "unchanged"), ("empty", "boilerplate"),
             ("error", "informative"), ("echo", "echo"))
    agreement = Agreement(pairs, WEIGHTS)
    assert agreement.accuracy == pytest.approx(2 / 5)
    assert agreement.category("echo") == (1, 2, 2, 1)
    assert agreement.category("informative") == (1, 2, 1, 2)
    # same weight: informative pair, echo/unchanged (0.1), error/informative (1.0), echo pair
    assert agreement.weight_agreement == pytest.approx(4 / 5)
    # binary: only error/informative disagrees
    assert agreement.low_information()[0] == pytest.approx(4 / 5)


def test_report_per_slice_and_bad_line(tmp_path, capsys):
    path = tmp_path / "set.jsonl"
    rows = [{"label_a": "echo", "label_b": "echo", "slice": "dev"},
            {"label_a": "echo", "label_b": "informative", "slice": "final"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = report([path], WEIGHTS)
    assert lines[0].startswith("slice dev: 1 turns, accuracy 1.000")
    assert any(line.startswith("slice final: 1 turns, accuracy 0.000") for line in lines)
    assert any(line.startswith("all: 2 turns, accuracy 0.500") for line in lines)
    assert main([str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == report([path], WEIGHTS)
    path.write_text(json.dumps({"label_a": "echo", "label_b": "spam"}) + "\n")
    with pytest.raises(ValueError, match=r"set.jsonl:1: label_a / label_b"):
        read_pairs([path])


def test_committed_realdev2_sets():
    """The two labellings of the realdev2 sample, as committed (no ../shared needed)."""
    paths = sorted(LABELLED.glob("realdev2_*.jsonl"))
    if not paths:
        pytest.skip("no realdev2 labelled sets in grading/labelled")
    by_slice = read_pairs(paths)
    every = Agreement(tuple(p for pairs in by_slice.values() for p in pairs), WEIGHTS)
    assert every.turns == 737
    assert every.accuracy > 0.95 and every.kappa > 0.9


def test_confusion_weight_agreement():
    """The grader's loss-weight view: echo predicted for unchanged costs nothing, informative
    for echo does (grading/confusion.py)."""
    from grading.confusion import Confusion

    confusion = Confusion()
    confusion.add("unchanged", "echo", 3)
    confusion.add("echo", "informative")
    confusion.add("error", "informative")
    confusion.add("empty", "boilerplate")
    assert confusion.weight_agreement(WEIGHTS) == pytest.approx(4 / 6)
