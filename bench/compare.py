"""Trained models against the untrained one and the baselines, on the same samples, per domain.

Model predictors may run on a per-domain subset of the bench (generation is slow on a CPU)
while the baselines run on all of it, so the leaderboard's rows are over different samples.
This compares like with like: per domain, only the samples every compared predictor was scored
on (a failed sample has no score), each predictor's mean official score (0..100) and mean
format axis (0..100, the axis "trained above untrained at least on format" is read on). The
judge is the bench's own; nothing here is tuned to any model.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from bench.leaderboard import to_markdown
from sources.schema import DOMAINS
from sources.storage import atomic_path

MODEL_PREFIX = "hf_local:"
BASELINES = ("copy_last", "empty", "retrieval")


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


def model_specs(folders: Iterable[Path]) -> list[str]:
    """hf_local specs for the folders that hold a model (a config.json), in the given order."""
    return [f"{MODEL_PREFIX}{folder}" for folder in folders
            if (Path(folder) / "config.json").exists()]


def compare_models(scores: Sequence[dict[str, Any]], untrained: str, out_path: Path
                   ) -> tuple[str, dict[str, float]]:
    """Each trained model against `untrained` and the baselines on the samples they all share
    (head_to_head), as Markdown (also written to out_path) and the figures
    `<model>_minus_untrained`, `<model>_minus_copy_last`; ("", {}) without models to compare."""
    present = {row["predictor"] for row in scores}
    trained = sorted(p for p in present if p.startswith(MODEL_PREFIX) and p != untrained)
    if not trained or untrained not in present or "copy_last" not in present:
        return "", {}
    compared = [*trained, untrained, *(b for b in BASELINES if b in present)]
    table = head_to_head(scores, compared)
    if not table:  # every sample failed for one of them: nothing shared to compare on
        return "no sample was scored for every compared predictor", {}
    rounded = [{k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()}
               for row in table]
    score_columns = ["domain", "samples", *map(short_name, compared)]
    format_columns = ["domain", *(f"{short_name(p)} format" for p in [*trained, untrained])]
    lines = [standing(table, model, untrained, "copy_last") for model in trained]
    text = (f"Scores (0..100) on the samples every compared predictor answered:\n\n"
            f"{to_markdown(rounded, score_columns)}\n\nFormat axis (0..100):\n\n"
            f"{to_markdown(rounded, format_columns)}\n\n" + "\n".join(f"- {x}" for x in lines))
    with atomic_path(out_path) as tmp:
        tmp.write_text(text + "\n", encoding="utf-8")
    overall = table[-1]
    figures = {}
    floor = overall[short_name(untrained)]
    for model in trained:
        name = short_name(model)
        figures[f"{name}_minus_untrained"] = round(overall[name] - floor, 2)
        figures[f"{name}_minus_copy_last"] = round(overall[name] - overall["copy_last"], 2)
    return text, figures
