"""Bootstrap 95 % intervals of bench scores over samples, stratified by domain.

A resample draws each domain's samples with replacement, as many as it has, so every resample
keeps the domain mix and the macro Overall (mean of the domain means) stays the official
statistic. Seeded: the same rows give the same interval. `paired_difference` resamples the same
sample ids for two predictors (both scored on one bench), which is the interval to read when
asking whether one model is better than another: two marginal intervals that overlap can still
hold a clearly positive paired difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

RESAMPLES = 2000
LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """A point estimate and its bootstrap percentile interval."""

    estimate: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.estimate:.2f} [{self.low:.2f}, {self.high:.2f}]"


def _by_domain(rows: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    scores: dict[str, list[float]] = {}
    for row in rows:
        scores.setdefault(row["domain"], []).append(float(row["score"]))
    return {domain: np.asarray(values) for domain, values in sorted(scores.items())}


def _interval(estimate: float, draws: np.ndarray) -> Interval:
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return Interval(float(estimate), float(low), float(high))


def score_intervals(rows: Sequence[Mapping[str, Any]], seed: int = 0,
                    resamples: int = RESAMPLES) -> dict[str, Interval]:
    """Each domain's mean score and the macro "overall", with stratified bootstrap intervals."""
    if not rows:
        raise ValueError("no score rows to bootstrap")
    rng = np.random.default_rng(seed)
    domains = _by_domain(rows)
    means = {}
    for domain, scores in domains.items():
        picks = rng.integers(0, len(scores), size=(resamples, len(scores)))
        means[domain] = scores[picks].mean(axis=1)
    out = {domain: _interval(scores.mean(), means[domain]) for domain, scores in domains.items()}
    overall = np.mean([means[d] for d in domains], axis=0)
    out["overall"] = _interval(float(np.mean([s.mean() for s in domains.values()])), overall)
    return out


def paired_difference(rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]],
                      seed: int = 0, resamples: int = RESAMPLES) -> Interval:
    """Macro overall of A minus B over the same samples (matched by id), with its interval."""
    b_by_id = {row["id"]: float(row["score"]) for row in rows_b}
    missing = [row["id"] for row in rows_a if row["id"] not in b_by_id]
    if missing or len(b_by_id) != len(rows_a):
        raise ValueError(f"paired rows must cover the same samples ({len(missing)} of A not in B)")
    differences = [{"domain": row["domain"], "score": float(row["score"]) - b_by_id[row["id"]]}
                   for row in sorted(rows_a, key=lambda r: r["id"])]
    return score_intervals(differences, seed, resamples)["overall"]
