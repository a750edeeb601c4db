"""The ablation's tables: every variant's scores with intervals, and the questions it answers as
paired differences.

A variant's per-domain and Overall scores each get a stratified bootstrap 95 % interval over
the bench samples (bench/bootstrap.py). Two variants scored on the same samples are compared
by the paired difference (the same sample ids resampled for both), which is the interval that
says whether one is better: two marginal intervals can overlap while the paired one is clear of
zero. The questions (`QUESTIONS`) are the ones the ablation exists for; a pair is reported when
both of its variants were scored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.bootstrap import Interval, paired_difference, score_intervals
from sources.markdown import markdown_table
from sources.schema import DOMAINS
from sources.storage import atomic_path, write_parquet

BASELINE = "copy_last"

# (a, b, what a - b measures); every variant is also compared with the baseline
QUESTIONS = (
    ("cpt_sft", "untrained", "what CPT + SFT buys over the untrained model"),
    ("cpt_sft", "cpt", "what SFT adds after CPT"),
    ("cpt", "cpt_unweighted", "loss weighting in CPT alone"),
    ("cpt_sft", "cpt_unweighted_sft", "loss weighting in CPT, after the same SFT"),
    ("cpt_sft_rl", "cpt_sft", "what RL (GSPO) adds after SFT"),
    ("sft_all_turns", "sft_one_turn", "SFT on every turn against one turn per trajectory"),
    ("cpt_knowledge_sft", "cpt_sft", "the knowledge mix in CPT, after the same SFT"),
)


@dataclass
class AblationReport:
    """What the ablation measured: `rows` one per variant (per-domain scores, Overall with its
    interval, echo and malformed rates), `paired` one per question both variants of which were
    scored, `scores` every sample's score (to recompute any other comparison)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    paired: list[dict[str, Any]] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)


def variant_row(variant: str, summary: Any, scored: Sequence[Mapping[str, Any]]
                ) -> dict[str, Any]:
    """A bench Summary as one table row (scores 0..100, rates 0..1), each domain's score and
    the Overall with their bootstrap 95 % intervals (`<domain>_low`, `<domain>_high`)."""
    intervals = score_intervals(scored)
    domains = summary.overall.domains
    row: dict[str, Any] = {"variant": variant}
    for domain in DOMAINS:
        row[domain] = _round(domains.get(domain))
        interval = intervals.get(domain)
        row[f"{domain}_low"] = None if interval is None else _round(interval.low)
        row[f"{domain}_high"] = None if interval is None else _round(interval.high)
    overall = intervals["overall"]
    return {**row, "overall_macro": _round(summary.overall.macro),
            "overall_ci_low": _round(overall.low), "overall_ci_high": _round(overall.high),
            "overall_pooled": _round(summary.overall.pooled),
            "echo_rate": round(summary.echo_rate, 3),
            "malformed_rate": round(summary.malformed_rate, 3), "samples": summary.samples}


def paired_rows(scored: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """The questions both of whose variants were scored, then every variant against the
    baseline: the paired difference of the macro Overall, a - b, with its interval."""
    pairs = [(a, b, why) for a, b, why in QUESTIONS if a in scored and b in scored]
    pairs += [(variant, BASELINE, "against copying the last observation")
              for variant in scored if variant != BASELINE and BASELINE in scored]
    rows = []
    for a, b, why in pairs:
        difference: Interval = paired_difference(scored[a], scored[b])
        rows.append({"a": a, "b": b, "question": why,
                     "difference": _round(difference.estimate),
                     "low": _round(difference.low), "high": _round(difference.high),
                     "clear_of_zero": difference.low > 0 or difference.high < 0})
    return rows


def score_rows(scored: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Every sample's score under every variant, sorted by variant order then sample id."""
    return [{"variant": variant, "id": row["id"], "domain": row["domain"],
             "score": float(row["score"])}
            for variant, rows in scored.items()
            for row in sorted(rows, key=lambda r: r["id"])]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _with_interval(score: float | None, low: float | None, high: float | None) -> str:
    return "" if score is None else f"{score} [{low}, {high}]"


def markdown(report: AblationReport) -> str:
    """The score table (each cell `score [low, high]`) and the paired differences."""
    scores = [{"variant": row["variant"],
               **{d: _with_interval(row[d], row[f"{d}_low"], row[f"{d}_high"])
                  for d in DOMAINS if any(r[d] is not None for r in report.rows)},
               "Overall [95 %]": _with_interval(row["overall_macro"], row["overall_ci_low"],
                                               row["overall_ci_high"]),
               "echo": row["echo_rate"], "malformed": row["malformed_rate"],
               "samples": row["samples"]} for row in report.rows]
    text = markdown_table(scores, cell=str)
    if report.paired:
        paired = [{"a - b": f"{p['a']} - {p['b']}", "question": p["question"],
                   "difference [95 %]": _with_interval(p["difference"], p["low"], p["high"]),
                   "clear of zero": "yes" if p["clear_of_zero"] else "no"}
                  for p in report.paired]
        text += "\n\nPaired differences (same samples):\n\n" + markdown_table(paired, cell=str)
    return text


def write_report(report: AblationReport, out_dir: Path) -> Path:
    """ablation.parquet, ablation_paired.parquet, ablation_scores.parquet (atomic) and
    ablation.md beside them; returns the first one's path."""
    import pyarrow as pa

    out_dir = Path(out_dir)
    path = out_dir / "ablation.parquet"
    write_parquet(pa.Table.from_pylist(report.rows), path)
    if report.paired:
        write_parquet(pa.Table.from_pylist(report.paired), out_dir / "ablation_paired.parquet")
    write_parquet(pa.Table.from_pylist(report.scores), out_dir / "ablation_scores.parquet")
    with atomic_path(out_dir / "ablation.md") as tmp:
        tmp.write_text(markdown(report) + "\n")
    return path
