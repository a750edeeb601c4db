"""How far the offline rubric judge and the LLM judge agree: Spearman rank correlation of their
sample scores, per domain and over all samples.

Rank correlation, because the two judges need not share a scale (the rubric is measured
evidence, the LLM a reading), only an order: a rubric that ranks samples as the LLM judge does
can stand in for it where no judge model is at hand. Ties take their average rank. Fewer than
three samples, or a judge that gave every sample the same score, has no correlation (None).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

MIN_SAMPLES = 3


@dataclass(frozen=True)
class Agreement:
    """One domain's (or 'all') agreement: samples compared, Spearman rho, mean score gap."""

    domain: str
    samples: int
    spearman: float | None
    mean_rubric: float
    mean_llm: float

    def row(self) -> dict[str, object]:
        return {"domain": self.domain, "samples": self.samples,
                "spearman": None if self.spearman is None else round(self.spearman, 4),
                "mean_rubric": round(self.mean_rubric, 2), "mean_llm": round(self.mean_llm, 2)}


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing the mean of the ranks they span."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), dtype=float)
    sorted_values = values[order]
    start = 0
    for end in range(1, len(values) + 1):
        if end == len(values) or sorted_values[end] != sorted_values[start]:
            ranks[order[start:end]] = (start + 1 + end) / 2
            start = end
    return ranks


def spearman(first: Iterable[float], second: Iterable[float]) -> float | None:
    """Spearman's rho (Pearson correlation of average ranks); None when undefined."""
    a, b = np.asarray(list(first), dtype=float), np.asarray(list(second), dtype=float)
    if len(a) != len(b):
        raise ValueError(f"{len(a)} scores against {len(b)}")
    if len(a) < MIN_SAMPLES:
        return None
    ra, rb = average_ranks(a), average_ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def judge_agreement(scored: Iterable[tuple[str, float, float]]) -> list[Agreement]:
    """(domain, rubric score, LLM score) per sample -> one Agreement per domain, then 'all'."""
    by_domain: dict[str, list[tuple[float, float]]] = {}
    for domain, rubric, llm in scored:
        by_domain.setdefault(domain, []).append((rubric, llm))
    every = [pair for pairs in by_domain.values() for pair in pairs]
    groups = [*sorted(by_domain.items()), ("all", every)] if every else []
    return [Agreement(domain, len(pairs), spearman(*zip(*pairs, strict=True)),
                      float(np.mean([p[0] for p in pairs])), float(np.mean([p[1] for p in pairs])))
            for domain, pairs in groups]
