"""Trained models against the untrained one and the baselines, on the same samples, per domain.

Model predictors may run on a per-domain subset of the bench (generation is slow on a CPU)
while the baselines run on all of it, so the leaderboard's rows are over different samples.
This compares like with like: per domain, only the samples every compared predictor was scored
on (a failed sample has no score), each predictor's mean official score (0..100) and mean
format axis (0..100, the axis "trained above untrained at least on format" is read on). The
judge is the bench's own; nothing here is tuned to any model.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from sources.schema import DOMAINS

MODEL_PREFIX = "hf_local:"


def short_name(predictor: str) -> str:
    """`hf_local:sft_model` -> `sft_model` (table headers stay readable)."""
    return predictor.removeprefix(MODEL_PREFIX)


def _axis_0_100(value: float) -> float:
    return (value - 1) / 4 * 100


def head_to_head(rows: Sequence[dict[str, Any]], predictors: Sequence[str]
                 ) -> list[dict[str, Any]]:
    """One row per domain (then "Overall", the macro mean of those domains): how many samples
    all `predictors` share there, and each one's mean score and mean format axis on them."""
    by_key = {(row["predictor"], row["id"]): row for row in rows if not row["failed"]}
    ids: dict[str, list[str]] = {}
    for row in rows:
        if row["predictor"] == predictors[0] and all((p, row["id"]) in by_key
                                                     for p in predictors):
            ids.setdefault(row["domain"], []).append(row["id"])
    table = []
    for domain in [d for d in DOMAINS if d in ids]:
        entry: dict[str, Any] = {"domain": domain, "samples": len(ids[domain])}
        for predictor in predictors:
            scored = [by_key[predictor, i] for i in ids[domain]]
            entry[short_name(predictor)] = fmean(r["score"] for r in scored)
            entry[f"{short_name(predictor)} format"] = fmean(_axis_0_100(r["format"])
                                                             for r in scored)
        table.append(entry)
    if table:
        overall: dict[str, Any] = {"domain": "Overall", "samples": sum(r["samples"]
                                                                       for r in table)}
        for column in [c for c in table[0] if c not in ("domain", "samples")]:
            overall[column] = fmean(r[column] for r in table)
        table.append(overall)
    return table


def standing(table: Sequence[dict[str, Any]], model: str, untrained: str, baseline: str
             ) -> str:
    """One plain sentence: `model` against the untrained model (overall score and format) and
    against the baseline (the domains where it is ahead, behind)."""
    model, untrained, baseline = short_name(model), short_name(untrained), short_name(baseline)
    overall = next(r for r in table if r["domain"] == "Overall")
    domains = [r for r in table if r["domain"] != "Overall"]
    ahead = [r["domain"] for r in domains if r[model] > r[baseline]]
    behind = [r["domain"] for r in domains if r[model] <= r[baseline]]
    versus_untrained = overall[model] - overall[untrained]
    format_gain = overall[f"{model} format"] - overall[f"{untrained} format"]
    return (f"{model}: {overall[model]:.2f} overall, {versus_untrained:+.2f} vs {untrained} "
            f"({'above' if versus_untrained > 0 else 'NOT above'}; format {format_gain:+.2f}); "
            f"vs {baseline} {overall[model] - overall[baseline]:+.2f}, ahead in "
            f"{len(ahead)}/{len(domains)} domains ({', '.join(ahead) or 'none'}), behind or "
            f"equal in {', '.join(behind) or 'none'}")
