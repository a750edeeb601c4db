"""Run a predictor over samples, judge every output, and summarise: the bench's one loop.

`predict` asks the predictor in batches (progress on stderr-free callbacks); `judge_outputs`
parses and judges each output with the offline rubric and the rule verifiers and records the
diagnostics the official tools lack: malformed outputs and echoes (a prediction that is an
earlier observation of the history again while the reference is not; `rubric.copies_history`).
As in the released evaluation, an empty generation is a *failed* sample: no axes, no score, out
of every average, counted, with its reason (`failure_reason`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

import pyarrow as pa

from bench.judges.rubric import judge
from bench.official import chat_messages
from bench.parsing import parse_prediction
from bench.predictors.base import Predictor, predictor_failures, predictor_fitted
from bench.progress import Progress
from bench.result_cache import content_hash
from bench.sample import BenchSample
from bench.scoring import AXES, SCORING_MODES, Overall, aggregate, normalize

PREDICTION_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("domain", pa.string(), nullable=False),
    pa.field("source", pa.string(), nullable=False),
    pa.field("predictor", pa.string(), nullable=False),
    pa.field("output", pa.large_string(), nullable=False),
    pa.field("messages_sha256", pa.string(), nullable=False),
    pa.field("messages_fitted", pa.bool_(), nullable=False),
    pa.field("extracted_observation", pa.large_string(), nullable=False),
    pa.field("failed", pa.bool_(), nullable=False),
    pa.field("failure_reason", pa.string(), nullable=False),
])
SCORE_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("domain", pa.string(), nullable=False),
    pa.field("source", pa.string(), nullable=False),
    pa.field("category", pa.string(), nullable=False),
    pa.field("predictor", pa.string(), nullable=False),
    pa.field("judge", pa.string(), nullable=False),
    pa.field("scoring", pa.string(), nullable=False),
    *[pa.field(axis, pa.int8()) for axis in AXES],
    pa.field("score", pa.float64()),
    pa.field("failed", pa.bool_(), nullable=False),
    pa.field("failure_reason", pa.string(), nullable=False),
    pa.field("rule_score", pa.float64()),
    pa.field("malformed", pa.bool_(), nullable=False),
    pa.field("copies_history", pa.bool_(), nullable=False),
    pa.field("evidence", pa.large_string(), nullable=False),
])
SAMPLE_COLUMN_DOCS = {
    "id": "bench sample id (agentworldbench.id)",
    "domain": "mcp, search, terminal, swe, android, web, os",
    "source": "catalog source of the sample's trajectory",
    "predictor": "predictor spec name (copy_last, empty, retrieval, hf_local:<model>, ...)",
    "output": "raw model text, thinking and tags included (parsing is the judge's job)",
}
SENT_COLUMN_DOCS = {
    "messages_sha256": "sha256 of the messages sent (JSON, keys sorted): the record's own "
                       "strings in the official construction, or the fitted ones",
    "messages_fitted": "the prompt was fitted to a token budget (not the official setting)",
    "extracted_observation": "what the judge saw: the official extraction of the output",
    "failed": "an empty generation: the sample leaves every average (released evaluation)",
    "failure_reason": "why it failed (a prompt over the model's context, no generation)",
}
PREDICTION_COLUMN_DOCS = {**SAMPLE_COLUMN_DOCS, **SENT_COLUMN_DOCS}
SCORE_COLUMN_DOCS = {
    **SAMPLE_COLUMN_DOCS,
    "category": "turn_labels category of the target turn (informative or error)",
    "judge": "which judge scored the row (the offline rubric, an approximation of the LLM "
             "judge; or an LLM judge, labelled official or not)",
    "scoring": "official (the released evaluation's semantics) or strict (our malformed, "
               "echo and GUI caps lower the score too)",
    "format": "1..5: same kind, line shapes and line count as the reference",
    "factuality": "1..5: content F1, change recall and rule score against the reference",
    "consistency": "1..5: identifiers grounded in the history; GUI elements kept unchanged",
    "realism": "1..5: no assistant talk, placeholders, repetition or runaway length",
    "quality": "1..5: the reference's new information predicted, with factuality",
    "score": "official sample score: (mean of the axes - 1) / 4 * 100 (null when failed)",
    "failed": "no score: an empty generation (or a judge that never answered readably); the "
              "sample leaves every average, as in the released evaluation",
    "failure_reason": "why the sample failed (empty when it did not)",
    "rule_score": "the domain's rule verifier, 0..1 (null when no check applies)",
    "malformed": "diagnostic: the block the judge saw has no closing tag, or there is none "
                 "(lowers the score only under strict scoring)",
    "copies_history": "diagnostic, echo: the prediction repeats an earlier observation, the "
                      "real one does not (lowers the score only under strict scoring)",
    "evidence": "JSON: every measurement behind the axes, the rule checks and the caps",
}
RUBRIC_JUDGE = "rubric (offline approximation)"
NO_GENERATION = "No model generation"  # the released evaluation's reason for an empty output


def predict(predictor: Predictor, samples: Sequence[BenchSample], batch_size: int = 64,
            on_batch: Callable[[int], None] | None = None) -> list[str]:
    """The predictor's raw outputs, one per sample, asked in batches. `on_batch(n)` hears of
    finished samples: from the predictor itself as they finish when it reports progress (an
    `on_done` attribute: model predictors), else after each batch."""
    reports = on_batch is not None and hasattr(predictor, "on_done")
    if reports:
        predictor.on_done = on_batch
    outputs: list[str] = []
    try:
        for lo in range(0, len(samples), batch_size):
            batch = list(samples[lo:lo + batch_size])
            answers = predictor.predict(batch)
            if len(answers) != len(batch):
                raise RuntimeError(f"predictor {predictor.name} returned {len(answers)} "
                                   f"outputs for {len(batch)} samples")
            outputs.extend(answers)
            if on_batch and not reports:
                on_batch(len(batch))
    finally:
        if reports:
            predictor.on_done = None
    return outputs


def failure_reason(output: str, predictor_reason: str = "") -> str:
    """Why a generation is a failed sample ("" when it is not): officially, when it is empty;
    the predictor's own reason (a prompt over the context) when it gave one."""
    return "" if output else (predictor_reason or NO_GENERATION)


def prediction_fields(sample: BenchSample, output: str, predictor_reason: str = "",
                      sent_hash: str | None = None) -> dict[str, Any]:
    """The per-sample record of a prediction (SENT_COLUMN_DOCS): the hash of the messages sent
    (`sent_hash` when the predictor fitted them, else the official ones), what the judge saw,
    and whether the sample failed and why."""
    reason = failure_reason(output, predictor_reason)
    return {"messages_sha256": sent_hash or content_hash(chat_messages(sample)),
            "messages_fitted": sent_hash is not None,
            "extracted_observation": "" if reason else parse_prediction(output).observation,
            "failed": bool(reason), "failure_reason": reason}


def sent_fields(predictor: Predictor, samples: Sequence[BenchSample], outputs: Sequence[str]
                ) -> list[dict[str, Any]]:
    """`prediction_fields` of each sample, with the predictor's own failure reasons and the
    hashes of the prompts it fitted."""
    failures, fitted = predictor_failures(predictor), predictor_fitted(predictor)
    return [prediction_fields(s, output, failures.get(s.id, ""), fitted.get(s.id))
            for s, output in zip(samples, outputs, strict=True)]


def failed_row(sample: BenchSample, predictor: str, judge: str, reason: str,
               malformed: bool = True, echo: bool = False, scoring: str = "official"
               ) -> dict[str, Any]:
    """The score row of a failed sample: no axes, no score, the reason."""
    return {"id": sample.id, "domain": sample.domain, "source": sample.source,
            "category": sample.category, "predictor": predictor, "judge": judge,
            "scoring": scoring,
            **dict.fromkeys(AXES), "score": None, "failed": True, "failure_reason": reason,
            "rule_score": None, "malformed": malformed, "copies_history": echo,
            "evidence": "{}"}


def judge_outputs(samples: Sequence[BenchSample], outputs: Sequence[str], predictor: str,
                  failures: Mapping[str, str] | None = None, scoring: str = "official"
                  ) -> list[dict[str, Any]]:
    """One score row per sample (SCORE_SCHEMA), judged by the offline rubric (`scoring`
    "strict": with our malformed and echo caps); an empty output is a failed row (its reason
    from `failures`, sample id -> why, when the predictor said)."""
    if scoring not in SCORING_MODES:
        raise ValueError(f"scoring must be one of {SCORING_MODES}, got {scoring!r}")
    rows = []
    for sample, output in zip(samples, outputs, strict=True):
        reason = failure_reason(output, (failures or {}).get(sample.id, ""))
        if reason:
            rows.append(failed_row(sample, predictor, RUBRIC_JUDGE, reason, scoring=scoring))
            continue
        parsed = parse_prediction(output)
        axes = judge(sample, output, parsed, strict=scoring == "strict")
        rows.append({
            "id": sample.id, "domain": sample.domain, "source": sample.source,
            "category": sample.category, "predictor": predictor, "judge": RUBRIC_JUDGE,
            "scoring": scoring, **axes.as_dict(), "score": axes.score, "failed": False,
            "failure_reason": "",
            "rule_score": axes.evidence.get("rule_score"), "malformed": parsed.malformed,
            "copies_history": bool(axes.evidence["echo"]),
            "evidence": json.dumps(axes.evidence, sort_keys=True),
        })
    return rows


@dataclass
class Summary:
    """One predictor's scores: both overalls, the failed samples and the diagnostics."""

    predictor: str
    overall: Overall
    samples: int = 0
    malformed_rate: float = 0.0
    echo_rate: float = 0.0
    axes: dict[str, dict[str, float]] = field(default_factory=dict)  # domain -> axis -> 0..100

    def row(self) -> dict[str, Any]:
        failed = self.overall.failed
        return {"predictor": self.predictor, **self.overall.row(), "samples": self.samples,
                "failed": sum(failed.values()),
                "failed_by_domain": " ".join(f"{d}:{n}" for d, n in failed.items() if n),
                "malformed_rate": self.malformed_rate, "echo_rate": self.echo_rate}


def axis_means(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Per axis, the 0..100 mean over the rows that have a score on it (officially a missing
    axis, 0, and a failed sample count nowhere); an axis nobody scored is left out."""
    means = {}
    for axis in AXES:
        values = [row[axis] for row in rows if not row["failed"] and row[axis]]
        if values:
            means[axis] = normalize(fmean(values))
    return means


def summarize(rows: Sequence[dict[str, Any]]) -> list[Summary]:
    """Summaries per predictor, in name order (diagnostic rates over all its samples)."""
    summaries = []
    for name in sorted({row["predictor"] for row in rows}):
        mine = [row for row in rows if row["predictor"] == name]
        axes = {domain: axis_means([row for row in mine if row["domain"] == domain])
                for domain in sorted({row["domain"] for row in mine})}
        summaries.append(Summary(
            name, aggregate((row["domain"], None if row["failed"] else row["score"])
                            for row in mine), len(mine),
            fmean(float(row["malformed"]) for row in mine),
            fmean(float(row["copies_history"]) for row in mine), axes))
    return summaries


def run_predictor(predictor: Predictor, samples: Sequence[BenchSample],
                  log: Callable[[str], None] | None = None
                  ) -> tuple[list[str], list[dict[str, Any]], dict[str, float]]:
    """Outputs, score rows and timings (samples/s of prediction and of judging); with `log`,
    progress lines (done / total, rate, time left) as samples finish."""
    progress = Progress(predictor.name, len(samples), log) if log is not None else None
    clock = time.perf_counter()
    outputs = predict(predictor, samples, on_batch=progress.update if progress else None)
    if progress is not None:
        progress.close()
    predicted = time.perf_counter()
    rows = judge_outputs(samples, outputs, predictor.name, predictor_failures(predictor))
    judged = time.perf_counter()
    n = max(len(samples), 1)
    return outputs, rows, {"predict_samples_per_s": n / max(predicted - clock, 1e-9),
                           "judge_samples_per_s": n / max(judged - predicted, 1e-9)}
