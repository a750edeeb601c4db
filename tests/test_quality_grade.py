"""The quality stage against the scale generator's planted truth (issue 4's floors)."""

from __future__ import annotations

import pytest

from grading.planted import GRADED, GradeReport, grade
from worldtrace.cli import main


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> GradeReport:
    return grade(100, 2024, tmp_path_factory.mktemp("grade"))


def test_every_generated_turn_is_graded(report):
    assert report.unmatched_turns == 0 and report.turns > 10_000


@pytest.mark.parametrize("category", GRADED)
def test_category_floors(report, category):
    assert report.precision(category) >= 0.9, report.lines()
    assert report.recall(category) >= 0.9, report.lines()


def test_duplicate_pair_floors(report):
    assert report.dup_true_pairs >= 20  # enough planted pairs for the floor to mean something
    assert report.dup_precision >= 0.95 and report.dup_recall >= 0.95, report.lines()


def test_report_ends_with_the_worst_figures(report):
    last = report.lines()[-1]
    (p, p_category), (r, r_category) = report.worst()
    assert last.startswith(f"worst category precision {p:.3f} ({p_category}), recall {r:.3f}")


def test_cli_prints_the_report(tmp_path, capsys):
    assert main(["quality", "grade", "--trajectories", "12", "--seed", "3",
                 "--domains", "terminal,web", "--work-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[1].startswith("confusion") and lines[-1].startswith("worst category precision")
