"""Scores exactly as the official evaluation computes them, and the published table.

- sample score = (mean of its five axis scores - 1) / 4 * 100, so all-1 is 0 and all-5 is 100;
- domain score = the mean of its sample scores;
- overall = the plain (macro) mean of the seven domain scores, as the published "Overall";
  the sample-weighted (micro) mean is reported beside it, labelled, never in its place.

Published rows: the AgentWorldBench results table (0-100). Their per-domain macro mean gives the
published Overall to within 0.01 for three rows; for Qwen-AgentWorld-397B-A17B it gives 58.76
against a published 58.71 (a rounding or typo in the source, not a different formula).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from sources.schema import DOMAINS

AXES: tuple[str, ...] = ("format", "factuality", "consistency", "realism", "quality")
DOMAIN_COLUMNS: dict[str, str] = {
    "mcp": "MCP", "search": "Search", "terminal": "Terminal", "swe": "SWE",
    "android": "Android", "web": "Web", "os": "OS",
}
OFFICIAL_COUNTS: dict[str, int] = {
    "mcp": 286, "search": 458, "terminal": 354, "swe": 472, "android": 200, "web": 200, "os": 200,
}
# (MCP, Search, Terminal, SWE, Android, Web, OS, Overall) as published.
PUBLISHED: dict[str, tuple[float, ...]] = {
    "Qwen-AgentWorld-397B-A17B": (68.24, 37.82, 57.73, 68.49, 60.20, 50.98, 67.89, 58.71),
    "GPT-5.4": (70.10, 37.26, 53.69, 66.29, 60.00, 51.80, 68.58, 58.25),
    "Qwen-AgentWorld-35B-A3B": (64.79, 36.69, 53.96, 65.63, 58.17, 49.55, 65.92, 56.39),
    "Qwen3.5-35B-A3B": (57.87, 25.98, 46.13, 47.58, 53.18, 47.10, 56.27, 47.73),
}


@dataclass(frozen=True)
class AxisScores:
    """The five rubric axes, each an integer 1..5, with the evidence that set them."""

    format: int
    factuality: int
    consistency: int
    realism: int
    quality: int
    evidence: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for axis in AXES:
            value = getattr(self, axis)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
                raise ValueError(f"axis {axis} must be an integer 1..5, got {value!r}")

    def as_dict(self) -> dict[str, int]:
        return {axis: getattr(self, axis) for axis in AXES}

    @property
    def mean(self) -> float:
        return fmean(self.as_dict().values())

    @property
    def score(self) -> float:
        """The official 0-100 sample score."""
        return normalize(self.mean)


def normalize(mean_axis: float) -> float:
    """Official mapping of a 1..5 mean to 0..100."""
    return (mean_axis - 1.0) / 4.0 * 100.0


def sample_score(axes: AxisScores | Mapping[str, float]) -> float:
    """(mean of the five axes - 1) / 4 * 100."""
    values = axes.as_dict() if isinstance(axes, AxisScores) else axes
    return normalize(fmean(float(values[axis]) for axis in AXES))


@dataclass(frozen=True)
class Overall:
    """Per-domain scores and the two overalls; `complete` says all seven domains are present."""

    domains: dict[str, float]
    counts: dict[str, int]
    macro: float
    micro: float

    @property
    def complete(self) -> bool:
        return all(d in self.domains for d in DOMAINS)

    def row(self) -> dict[str, float | None]:
        """The published table's columns (None for a domain without samples)."""
        out: dict[str, float | None] = {DOMAIN_COLUMNS[d]: self.domains.get(d) for d in DOMAINS}
        out["Overall"] = self.macro
        return out


def macro_overall(domain_scores: Mapping[str, float]) -> float:
    """Plain mean over the domains given (the official Overall when all seven are)."""
    if not domain_scores:
        raise ValueError("no domain scores to average")
    return fmean(domain_scores.values())


def aggregate(scored: Iterable[tuple[str, float]]) -> Overall:
    """(domain, sample score) pairs -> domain means, macro and micro overall."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for domain, score in scored:
        if domain not in DOMAIN_COLUMNS:
            raise ValueError(f"unknown domain {domain!r}")
        sums[domain] = sums.get(domain, 0.0) + score
        counts[domain] = counts.get(domain, 0) + 1
    domains = {d: sums[d] / counts[d] for d in DOMAINS if d in counts}
    micro = sum(sums.values()) / sum(counts.values())
    return Overall(domains, {d: counts[d] for d in domains}, macro_overall(domains), micro)


def published_overall(name: str) -> tuple[float, float]:
    """(recomputed macro of the published domain columns, published Overall) for one row."""
    *domains, overall = PUBLISHED[name]
    return fmean(domains), overall
