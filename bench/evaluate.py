"""Run a predictor over samples, judge every output, and summarise: the bench's one loop.

`predict` asks the predictor in batches (progress on stderr-free callbacks); `judge_outputs`
parses and judges each output with the offline rubric and the rule verifiers and records the
diagnostics the official tools lack: malformed outputs and echoes (a prediction that is an
earlier observation of the history again while the reference is not; `rubric.copies_history`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

import pyarrow as pa

from bench.judges.rubric import judge
from bench.parsing import parse_prediction
from bench.predictors.base import Predictor
from bench.sample import BenchSample
from bench.scoring import AXES, Overall, aggregate

PREDICTION_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("domain", pa.string(), nullable=False),
    pa.field("source", pa.string(), nullable=False),
    pa.field("predictor", pa.string(), nullable=False),
    pa.field("output", pa.large_string(), nullable=False),
])
SCORE_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("domain", pa.string(), nullable=False),
    pa.field("source", pa.string(), nullable=False),
    pa.field("category", pa.string(), nullable=False),
    pa.field("predictor", pa.string(), nullable=False),
    pa.field("judge", pa.string(), nullable=False),
    *[pa.field(axis, pa.int8(), nullable=False) for axis in AXES],
    pa.field("score", pa.float64(), nullable=False),
    pa.field("rule_score", pa.float64()),
    pa.field("malformed", pa.bool_(), nullable=False),
    pa.field("copies_history", pa.bool_(), nullable=False),
    pa.field("evidence", pa.large_string(), nullable=False),
])
PREDICTION_COLUMN_DOCS = {
    "id": "bench sample id (agentworldbench.id)",
    "domain": "mcp, search, terminal, swe, android, web, os",
    "source": "catalog source of the sample's trajectory",
    "predictor": "predictor spec name (copy_last, empty, retrieval, hf_local:<model>, ...)",
    "output": "raw model text, thinking and tags included (parsing is the judge's job)",
}
SCORE_COLUMN_DOCS = {
    **PREDICTION_COLUMN_DOCS,
    "category": "turn_labels category of the target turn (informative or error)",
    "judge": "which judge scored the row (rubric: the offline reference-grounded rubric)",
    "format": "1..5: a complete <predicted_observation> block, same kind, shapes, line count",
    "factuality": "1..5: content F1, change recall and rule score against the reference",
    "consistency": "1..5: identifiers grounded in the history; GUI elements kept unchanged",
    "realism": "1..5: no assistant talk, placeholders, repetition or runaway length",
    "quality": "1..5: the reference's new information predicted, with factuality",
    "score": "official sample score: (mean of the five axes - 1) / 4 * 100",
    "rule_score": "the domain's rule verifier, 0..1 (null when no check applies)",
    "malformed": "no complete <predicted_observation> block in the output",
    "copies_history": "echo: the prediction repeats an earlier observation, the real one does not",
    "evidence": "JSON: every measurement behind the axes, the rule checks and the caps",
}
RUBRIC_JUDGE = "rubric"


def predict(predictor: Predictor, samples: Sequence[BenchSample], batch_size: int = 64,
            on_batch: Callable[[int], None] | None = None) -> list[str]:
    """The predictor's raw outputs, one per sample, asked in batches."""
    outputs: list[str] = []
    for lo in range(0, len(samples), batch_size):
        batch = list(samples[lo:lo + batch_size])
        answers = predictor.predict(batch)
        if len(answers) != len(batch):
            raise RuntimeError(f"predictor {predictor.name} returned {len(answers)} outputs for "
                               f"{len(batch)} samples")
        outputs.extend(answers)
        if on_batch:
            on_batch(len(batch))
    return outputs


def judge_outputs(samples: Sequence[BenchSample], outputs: Sequence[str], predictor: str
                  ) -> list[dict[str, Any]]:
    """One score row per sample (SCORE_SCHEMA), judged by the offline rubric."""
    rows = []
    for sample, output in zip(samples, outputs, strict=True):
        parsed = parse_prediction(output)
        axes = judge(sample, output, parsed)
        rows.append({
            "id": sample.id, "domain": sample.domain, "source": sample.source,
            "category": sample.category, "predictor": predictor, "judge": RUBRIC_JUDGE,
            **axes.as_dict(), "score": axes.score, "rule_score": axes.evidence.get("rule_score"),
            "malformed": parsed.malformed,
            "copies_history": bool(axes.evidence["echo"]),
            "evidence": json.dumps(axes.evidence, sort_keys=True),
        })
    return rows


@dataclass
class Summary:
    """One predictor's scores: the official overall and the diagnostics."""

    predictor: str
    overall: Overall
    samples: int = 0
    malformed_rate: float = 0.0
    echo_rate: float = 0.0
    axes: dict[str, dict[str, float]] = field(default_factory=dict)  # domain -> axis -> 0..100

    def row(self) -> dict[str, Any]:
        return {"predictor": self.predictor, **self.overall.row(), "Micro": self.overall.micro,
                "samples": self.samples, "malformed_rate": self.malformed_rate,
                "echo_rate": self.echo_rate}


def summarize(rows: Sequence[dict[str, Any]]) -> list[Summary]:
    """Summaries per predictor, in name order."""
    summaries = []
    for name in sorted({row["predictor"] for row in rows}):
        mine = [row for row in rows if row["predictor"] == name]
        axes: dict[str, dict[str, float]] = {}
        for domain in sorted({row["domain"] for row in mine}):
            of_domain = [row for row in mine if row["domain"] == domain]
            axes[domain] = {axis: (fmean(row[axis] for row in of_domain) - 1) / 4 * 100
                            for axis in AXES}
        summaries.append(Summary(
            name, aggregate((row["domain"], row["score"]) for row in mine), len(mine),
            fmean(float(row["malformed"]) for row in mine),
            fmean(float(row["copies_history"]) for row in mine), axes))
    return summaries


def run_predictor(predictor: Predictor, samples: Sequence[BenchSample]
                  ) -> tuple[list[str], list[dict[str, Any]], dict[str, float]]:
    """Outputs, score rows and timings (samples/s of prediction and of judging)."""
    clock = time.perf_counter()
    outputs = predict(predictor, samples)
    predicted = time.perf_counter()
    rows = judge_outputs(samples, outputs, predictor.name)
    judged = time.perf_counter()
    n = max(len(samples), 1)
    return outputs, rows, {"predict_samples_per_s": n / max(predicted - clock, 1e-9),
                           "judge_samples_per_s": n / max(judged - predicted, 1e-9)}
