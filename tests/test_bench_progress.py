"""Progress per predictor: samples done / total, rate and time left, as lines in a log; model
predictors report each finished batch, not only each batch the bench hands them."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.evaluate import predict
from bench.predictors.hf_local import HfLocalConfig, HfLocalPredictor
from bench.progress import Progress, duration
from tests.test_bench_remote_predictors import SAMPLES
from tests.tiny_lm import tiny_model_dir, torch_one_thread  # noqa: F401  (fixtures)


def test_durations_read_plainly() -> None:
    assert [duration(s) for s in (7.4, 132, 3725)] == ["7s", "2m12s", "1h02m05s"]


def test_lines_say_done_total_rate_and_time_left_at_most_every_interval() -> None:
    now = [0.0]
    lines: list[str] = []
    progress = Progress("hf_local:sft_model", 70, lines.append, every_s=10.0,
                        clock=lambda: now[0])
    for moment in (4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0, 32.0):  # 8 samples every 4 s
        now[0] = moment
        progress.update(8)
    now[0] = 34.0
    progress.update(6)
    assert lines[0] == "hf_local:sft_model: predicting 70 samples"
    assert lines[1] == ("hf_local:sft_model: 24/70 samples, 2.00 samples/s, about 23s left "
                        "(12s so far)")
    assert len(lines) == 4  # start, 12 s, 24 s (none at 32 s: 8 s after), the end
    assert lines[-1] == "hf_local:sft_model: 70/70 samples, 2.06 samples/s, done (34s so far)"


@pytest.mark.usefixtures("torch_one_thread")
def test_a_model_reports_each_of_its_batches(tiny_model_dir: Path) -> None:  # noqa: F811
    predictor = HfLocalPredictor(HfLocalConfig(tiny_model_dir, batch_size=2, max_new_tokens=4,
                                               dtype="float32"))
    heard: list[int] = []
    outputs = predict(predictor, SAMPLES, batch_size=64, on_batch=heard.append)
    assert len(outputs) == len(SAMPLES) and heard == [2, 2, 1]
    assert predictor.on_done is None  # handed back after the run


def test_bench_run_logs_progress_lines(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from bench.official import write_official
    from tests.test_bench_cli import _samples
    from worldtrace.cli import main

    write_official(_samples(), tmp_path / "bench")
    assert main(["bench", "run", "--bench-dir", str(tmp_path / "bench"), "--predictor",
                 "copy_last", "--out", str(tmp_path / "run")]) == 0
    err = capsys.readouterr().err
    assert "copy_last: predicting 21 samples" in err
    assert "copy_last: 21/21 samples, " in err and "samples/s, done" in err


@pytest.mark.usefixtures("torch_one_thread")
def test_run_predictor_logs_progress_as_the_model_finishes_batches(
        tiny_model_dir: Path) -> None:  # noqa: F811
    from bench.evaluate import run_predictor

    predictor = HfLocalPredictor(HfLocalConfig(tiny_model_dir, batch_size=2, max_new_tokens=4,
                                               dtype="float32"))
    lines: list[str] = []
    _, rows, _ = run_predictor(predictor, SAMPLES, log=lines.append)
    assert len(rows) == len(SAMPLES) == 5
    assert lines[0] == f"{predictor.name}: predicting 5 samples"
    assert lines[-1].startswith(f"{predictor.name}: 5/5 samples, ") and "done" in lines[-1]
    assert predictor.on_done is None
