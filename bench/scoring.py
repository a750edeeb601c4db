"""The score arithmetic of the released evaluation, both overalls, and the published table.

- An axis score is an integer 1..5; 0 means the judge gave none for it (the released judge
  parser's "missing axis"): it is left out of every mean.
- sample total = the mean of its axes above 0; sample score = (total - 1) / 4 * 100;
- a *failed* sample (an empty generation, a judge that never answered readably) has no score
  and leaves every average; failed samples are counted per domain;
- domain score = the mean score of its valid samples;
- `overall_macro` = the plain mean of the domain scores: the rule of the published table's
  "Overall" (13 of its 14 rows reproduce within 0.005; Qwen-AgentWorld-397B-A17B gives 58.76
  against a published 58.71, a slip in the source);
- `overall_pooled` = the mean score over every valid sample of every domain: what the released
  `eval.py` prints as "Overall" (sample-weighted, so the large text domains count more).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from sources.schema import DOMAINS

# official: the released evaluation's semantics; strict: our checks (malformed output, echoes
# of the history, the GUI caps in code) lower the score too (bench.judges.rubric).
SCORING_MODES: tuple[str, ...] = ("official", "strict")
AXES: tuple[str, ...] = ("format", "factuality", "consistency", "realism", "quality")
DOMAIN_COLUMNS: dict[str, str] = {
    "mcp": "MCP", "search": "Search", "terminal": "Terminal", "swe": "SWE",
    "android": "Android", "web": "Web", "os": "OS",
}
OFFICIAL_COUNTS: dict[str, int] = {
    "mcp": 286, "search": 458, "terminal": 354, "swe": 472, "android": 200, "web": 200, "os": 200,
}
# (MCP, Search, Terminal, SWE, Android, Web, OS, Overall) as published (LLM judge, the
# official benchmark), in the order of the released README's table.
PUBLISHED: dict[str, tuple[float, ...]] = {
    "GPT-5.4": (70.10, 37.26, 53.69, 66.29, 60.00, 51.80, 68.58, 58.25),
    "Claude Opus 4.8": (54.93, 35.14, 59.18, 64.10, 61.50, 54.66, 66.62, 56.59),
    "Claude Opus 4.6": (69.90, 29.30, 57.51, 64.55, 61.74, 51.42, 70.20, 57.80),
    "Gemini 3.1 Pro": (59.07, 30.21, 52.47, 59.07, 61.40, 52.83, 66.92, 54.57),
    "Claude Sonnet 4.6": (70.00, 28.79, 56.98, 64.52, 58.03, 50.78, 63.17, 56.04),
    "DeepSeek-V4-Pro": (63.27, 27.61, 51.26, 59.44, 55.17, 50.32, 63.70, 52.97),
    "GLM-5.1": (67.60, 22.46, 47.32, 52.07, 59.10, 51.50, 59.13, 51.31),
    "Kimi K2.6": (65.23, 27.48, 52.54, 58.77, 58.93, 50.20, 60.80, 53.42),
    "MiniMax-M2.7": (55.82, 27.30, 41.62, 37.44, 52.40, 50.52, 57.73, 46.12),
    "Qwen3.5-35B-A3B": (57.87, 25.98, 46.13, 47.58, 53.18, 47.10, 56.27, 47.73),
    "Qwen3.5-397B-A17B": (68.31, 30.81, 55.30, 64.44, 54.90, 48.55, 60.85, 54.74),
    "Qwen3.6-Plus": (55.28, 21.94, 50.58, 59.08, 57.65, 50.78, 60.33, 50.81),
    "Qwen-AgentWorld-35B-A3B": (64.79, 36.69, 53.96, 65.63, 58.17, 49.55, 65.92, 56.39),
    "Qwen-AgentWorld-397B-A17B": (68.24, 37.82, 57.73, 68.49, 60.20, 50.98, 67.89, 58.71),
}


@dataclass(frozen=True)
class AxisScores:
    """The five rubric axes, each an integer 1..5 (0: the judge gave none), with the evidence
    that set them."""

    format: int
    factuality: int
    consistency: int
    realism: int
    quality: int
    evidence: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for axis in AXES:
            value = getattr(self, axis)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 5:
                raise ValueError(f"axis {axis} must be an integer 1..5 (0: missing), "
                                 f"got {value!r}")
        if not any(self.as_dict().values()):
            raise ValueError("no axis has a score")

    def as_dict(self) -> dict[str, int]:
        return {axis: getattr(self, axis) for axis in AXES}

    @property
    def mean(self) -> float:
        """The sample total: the mean of the axes that have a score."""
        return fmean(v for v in self.as_dict().values() if v > 0)

    @property
    def score(self) -> float:
        """The official 0-100 sample score."""
        return normalize(self.mean)


def normalize(mean_axis: float) -> float:
    """Official mapping of a 1..5 mean to 0..100."""
    return (mean_axis - 1.0) / 4.0 * 100.0


def sample_score(axes: AxisScores | Mapping[str, float]) -> float:
    """(mean of the axes above 0 - 1) / 4 * 100."""
    values = axes.as_dict() if isinstance(axes, AxisScores) else axes
    return normalize(fmean(v for v in (float(values[axis]) for axis in AXES) if v > 0))


@dataclass(frozen=True)
class Overall:
    """Per-domain scores over valid samples, the failed samples per domain, both overalls
    (None when nothing was valid); `complete` says all seven domains have a score."""

    domains: dict[str, float]
    counts: dict[str, int]
    failed: dict[str, int]
    macro: float | None
    pooled: float | None

    @property
    def complete(self) -> bool:
        return all(d in self.domains for d in DOMAINS)

    def row(self) -> dict[str, Any]:
        """The published table's domain columns (None for a domain without a valid sample) and
        both overalls, labelled."""
        out: dict[str, Any] = {DOMAIN_COLUMNS[d]: self.domains.get(d) for d in DOMAINS}
        out.update(overall_macro=self.macro, overall_pooled=self.pooled)
        return out


def macro_overall(domain_scores: Mapping[str, float]) -> float:
    """Plain mean over the domains given (the published Overall when all seven are)."""
    if not domain_scores:
        raise ValueError("no domain scores to average")
    return fmean(domain_scores.values())


def aggregate(scored: Iterable[tuple[str, float | None]]) -> Overall:
    """(domain, sample score, None for a failed sample) pairs -> domain means over the valid
    samples, failed counts, the macro and the pooled overall."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    failed: dict[str, int] = {}
    for domain, score in scored:
        if domain not in DOMAIN_COLUMNS:
            raise ValueError(f"unknown domain {domain!r}")
        failed.setdefault(domain, 0)
        if score is None:
            failed[domain] += 1
            continue
        sums[domain] = sums.get(domain, 0.0) + score
        counts[domain] = counts.get(domain, 0) + 1
    domains = {d: sums[d] / counts[d] for d in DOMAINS if d in counts}
    valid = sum(counts.values())
    return Overall(domains, {d: counts[d] for d in domains},
                   {d: failed[d] for d in DOMAINS if d in failed},
                   macro_overall(domains) if domains else None,
                   sum(sums.values()) / valid if valid else None)


def published_overall(name: str) -> tuple[float, float]:
    """(recomputed macro of the published domain columns, published Overall) for one row."""
    *domains, overall = PUBLISHED[name]
    return fmean(domains), overall
