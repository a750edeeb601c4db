"""Run predictors over a bench and judge them: what the assets and `worldtrace bench` share.

`run_predictors` builds each predictor from its spec, asks it for every sample and judges the
outputs with the offline rubric (timings recorded as it goes). `write_run` writes a run folder:
predictions.jsonl (the official records plus `gen`, the raw output, and `predictor`: the same
file the official eval.py `infer` step writes, so `score_predictions` also scores theirs; and
per sample the hash of the messages sent, `extracted_observation`, `failed` and why),
scores.csv (one judged row per sample) and the leaderboard files.
"""

from __future__ import annotations

import csv
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.evaluate import (
    RUBRIC_JUDGE,
    SCORE_SCHEMA,
    judge_outputs,
    predict,
    sent_fields,
    summarize,
)
from bench.leaderboard import leaderboard_rows, write_leaderboard
from bench.official import ImportProblem, RecordError, from_record, to_record
from bench.predictors.base import PredictorContext, build_predictor
from bench.progress import Progress
from bench.sample import BenchSample
from sources.storage import atomic_path


@dataclass
class PredictorRun:
    """One predictor's outputs, judged rows and speed."""

    name: str
    outputs: list[str]
    rows: list[dict[str, Any]]
    timings: dict[str, float] = field(default_factory=dict)
    sent: list[dict[str, Any]] = field(default_factory=list)  # prediction_fields per sample

    @property
    def failures(self) -> dict[str, str]:
        """sample id -> why it failed, for the failed samples."""
        return {f["id"]: f["failure_reason"] for f in self.sent if f["failed"]}


def run_predictors(samples: Sequence[BenchSample], specs: Sequence[str],
                   context: PredictorContext | None = None, scoring: str = "official",
                   log: Callable[[str], None] = lambda _: None, bar: bool = False
                   ) -> list[PredictorRun]:
    """Predict and judge every sample with each predictor spec, in the order given; progress
    per predictor (done / total, rate, time left) as lines to `log`, or a bar with `bar`."""
    runs = []
    for spec in specs:
        predictor = build_predictor(spec, context)
        progress = Progress(predictor.name, len(samples), log, bar=bar)
        clock = time.perf_counter()
        outputs = predict(predictor, samples, on_batch=progress.update)
        progress.close()
        predicted = time.perf_counter()
        sent = [{"id": s.id, **fields}
                for s, fields in zip(samples, sent_fields(predictor, samples, outputs),
                                     strict=True)]
        rows = judge_outputs(samples, outputs, predictor.name,
                             {f["id"]: f["failure_reason"] for f in sent}, scoring)
        judged = time.perf_counter()
        n = max(len(samples), 1)
        timings = {"predict_samples_per_s": n / max(predicted - clock, 1e-9),
                   "judge_samples_per_s": n / max(judged - predicted, 1e-9)}
        log(f"{predictor.name}: judged {len(rows)} samples "
            f"({timings['predict_samples_per_s']:.2f} predicted/s, "
            f"{timings['judge_samples_per_s']:.1f} judged/s)")
        run = PredictorRun(predictor.name, outputs, rows, timings, sent)
        if run.failures:
            reasons = Counter(re.sub(r"\d+", "N", reason) for reason in run.failures.values())
            log(f"{predictor.name}: {len(run.failures)} failed samples (no score, out of every "
                f"average; listed in predictions.jsonl): "
                + "; ".join(f"{n} x {reason}" for reason, n in reasons.most_common()))
        runs.append(run)
    return runs


def write_run(samples: Sequence[BenchSample], runs: Sequence[PredictorRun], out_dir: Path,
              scoring: str = "official") -> dict[str, Path]:
    """predictions.jsonl, scores.csv and the leaderboard files under out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    predictions = out_dir / "predictions.jsonl"
    with atomic_path(predictions) as tmp, tmp.open("w", encoding="utf-8") as handle:
        for run in runs:
            for sample, output, fields in zip(samples, run.outputs, run.sent, strict=True):
                record = {**to_record(sample), "gen": output, "predictor": run.name,
                          **{k: v for k, v in fields.items() if k != "id"}}
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    scores = out_dir / "scores.csv"
    columns = SCORE_SCHEMA.names
    with atomic_path(scores) as tmp, tmp.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(row for run in runs for row in run.rows)
    rows = leaderboard_rows(summarize([row for run in runs for row in run.rows]), RUBRIC_JUDGE,
                            scoring)
    return {"predictions": predictions, "scores": scores, **write_leaderboard(rows, out_dir)}


def score_predictions(path: Path, scoring: str = "official"
                      ) -> tuple[list[dict[str, Any]], list[ImportProblem]]:
    """Judge a predictions.jsonl (official records with `gen`, optional `predictor`)."""
    rows: list[dict[str, Any]] = []
    problems: list[ImportProblem] = []
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
                sample = from_record(record)
                output = record.get("gen")
                if not isinstance(output, str):
                    raise RecordError("$.gen (the model output) must be a string")
            except (ValueError, RecordError) as error:
                problems.append(ImportProblem(str(path), line_no, str(error)))
                continue
            rows += judge_outputs([sample], [output], str(record.get("predictor") or "model"),
                                  {sample.id: str(record.get("failure_reason") or "")}, scoring)
    return rows, problems
