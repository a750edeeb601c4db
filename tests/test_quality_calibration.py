"""The learned calibration (quality/calibration.py) and its leave-one-source-out comparison
with the rules (`worldtrace quality grade --labels F --loso`), on the real dev set's turns.
Needs the real traces (../shared/traces and ../shared/realdev); skips with the reason when
they are absent."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from grading.calibration import (
    CalibrationConfig,
    design_matrix,
    fit,
    input_names,
    loso_predictions,
)
from grading.hand_labels import label_labelled_files, load_labels
from worldtrace.cli import main

DEV_SET = Path(__file__).resolve().parent.parent / "grading" / "labelled" / "real_dev.jsonl"


@pytest.fixture(scope="module")
def dev_rows(traces_dir, tmp_path_factory) -> pa.Table:
    """The dev set's labelled turns with their features and the rules' category."""
    root = traces_dir.parent
    if not (root / "realdev").is_dir():
        pytest.skip(f"real dev trajectories not found at {root / 'realdev'}")
    return label_labelled_files(load_labels(DEV_SET), root, tmp_path_factory.mktemp("dev"))


def test_the_fit_is_deterministic_and_converges(dev_rows):
    x, labels = design_matrix(dev_rows), dev_rows["label"].to_pylist()
    first, second = fit(x, labels), fit(x.copy(), list(labels))
    assert first.coefficients.tobytes() == second.coefficients.tobytes()
    assert first.mean.tobytes() == second.mean.tobytes()
    assert first.iterations < CalibrationConfig().max_iterations  # stopped on the gradient
    assert first.coefficients.shape == (len(input_names()) + 1, 6)
    # in-sample it must at least fit its training turns about as well as the rules do
    in_sample = np.mean(np.array(first.predict(x)) == np.array(labels))
    rules = np.mean(np.array(dev_rows["predicted"].to_pylist()) == np.array(labels))
    assert in_sample >= rules - 0.01


def test_with_the_features_penalised_away_the_calibration_is_the_rules(dev_rows):
    x, labels = design_matrix(dev_rows), dev_rows["label"].to_pylist()
    model = fit(x, labels, CalibrationConfig(l2=1e6))
    assert model.predict(x) == dev_rows["predicted"].to_pylist()


def test_loso_never_trains_on_the_held_out_source(dev_rows):
    x, labels = design_matrix(dev_rows), dev_rows["label"].to_pylist()
    sources = dev_rows["source"].to_pylist()
    predicted, folds = loso_predictions(x, labels, sources)
    assert sorted(f.held_out for f in folds) == sorted(set(sources))
    for fold in folds:
        assert fold.held_out not in fold.training_sources
        assert set(fold.training_sources) == set(sources) - {fold.held_out}
        assert fold.training_turns == sum(s != fold.held_out for s in sources)
    # relabelling a held-out source's turns changes nothing in its own predictions
    held_out = "swe/sweagent"
    scrambled = ["empty" if s == held_out else label
                 for s, label in zip(sources, labels, strict=True)]
    again, _ = loso_predictions(x, scrambled, sources)
    mine = [i for i, s in enumerate(sources) if s == held_out]
    assert [again[i] for i in mine] == [predicted[i] for i in mine]
    assert again != predicted  # ... while the other folds, which train on them, do change
    assert len(predicted) == len(labels)


def test_design_matrix_names_a_missing_column(dev_rows):
    with pytest.raises(ValueError, match="lack column.* predicted"):
        design_matrix(dev_rows.drop_columns(["predicted"]))


def test_grade_loso_prints_both_pooled_tables(tmp_path, traces_dir, capsys):
    # the dev set's turns from ../shared/traces (132 turns, 12 sources): no realdev needed
    lines = [line for line in DEV_SET.read_text(encoding="utf-8").splitlines()
             if json.loads(line)["file"].startswith("traces/")]
    labels = tmp_path / "traces.jsonl"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sources = {json.loads(line)["source"] for line in lines}
    assert main(["quality", "grade", "--labels", str(labels), "--root", str(traces_dir.parent),
                 "--loso"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("accuracy ") and "worst recall" in out[-1]
    assert f"pooled over {len(sources)} folds" in "\n".join(out)
    for method in ("rules", "calibration"):
        summary = [line for line in out if line.startswith(f"  LOSO {method}: accuracy ")]
        assert len(summary) == 1 and "informative recall" in summary[0]
    folds = [line for line in out if line.startswith("  fold ")]
    assert len(folds) == len(sources)
    assert all(f"of {len(sources) - 1} other sources" in line for line in folds)


def test_grade_calibrate_on_fits_on_one_set_and_grades_another(tmp_path, traces_dir, capsys):
    # the dev set's ../shared/traces turns, split in two by line: fit on one, grade the other
    lines = [line for line in DEV_SET.read_text(encoding="utf-8").splitlines()
             if json.loads(line)["file"].startswith("traces/")]
    fit_on, graded = tmp_path / "fit.jsonl", tmp_path / "graded.jsonl"
    fit_on.write_text("\n".join(lines[0::2]) + "\n", encoding="utf-8")
    graded.write_text("\n".join(lines[1::2]) + "\n", encoding="utf-8")
    assert main(["quality", "grade", "--labels", str(graded), "--root", str(traces_dir.parent),
                 "--calibrate-on", str(fit_on)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert (f"calibration fitted on fit.jsonl, {len(lines[0::2])} turns, graded on this set "
            "beside the rules:") in out
    for method in ("rules", "calibration"):
        summary = [line for line in out if line.startswith(f"  calibrate-on {method}: ")]
        assert len(summary) == 1 and "informative recall" in summary[0]
    assert out[0].startswith(f"labelled turns graded: {len(lines[1::2])} ")
    assert out[-1].startswith("accuracy ") and not any("LOSO" in line for line in out)
