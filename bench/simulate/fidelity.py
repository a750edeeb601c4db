"""Fidelity by depth: how close the simulated observations are to the real ones, per mode.

One row per (model, mode, depth) and per (model, mode) over all depths (depth null): the judged
calls, the mean sample score (0-100, rubric) with its bootstrap 95 % interval (bench/bootstrap.py,
resampling the calls of that depth), the mean over the calls to writing tools (which the model
answers in both modes: anchored, only its context differs), and on anchored rows the paired
difference anchored - free over the same sessions' calls at that depth, with its interval.
Failed calls (no answer in time) are counted apart and leave the means, as in the bench.
When the replay had an LLM judge, its llm_ columns give the same per (model, mode, depth): the
calls it graded, the mean of its sample scores with their interval, and the paired difference;
a call it could not grade counts in llm_failed and leaves its means (null without a judge).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from bench.bootstrap import paired_difference, score_intervals
from bench.simulate.replay import ANCHORED, FREE, MODES
from bench.simulate.simulation import DOMAIN
from sources.storage import atomic_path

Group = tuple[str, str, int | None]  # (model, mode, depth or None for all depths)


def _key(group: Group) -> str:
    model, mode, depth = group
    return f"{model}|{mode}|{'all' if depth is None else depth}"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


@dataclass(frozen=True)
class _Judge:
    """One judge's view of the replay rows: its score column and the rows it graded."""

    score: str
    graded: Callable[[dict[str, Any]], bool]


RUBRIC = _Judge("score", lambda row: not row["failed"])
LLM = _Judge("llm_score", lambda row: row.get("llm_score") is not None)


class _Measured:
    """Per group: the rows a judge graded, their bootstrap interval, and the paired
    anchored - free difference (anchored groups)."""

    def __init__(self, groups: dict[Group, list[dict[str, Any]]], judge: _Judge, seed: int):
        self.judge, self.seed = judge, seed
        self.graded = {key: [r for r in group if judge.graded(r)]
                       for key, group in groups.items()}
        scored = [{"domain": _key(key), "score": r[judge.score]}
                  for key, group in self.graded.items() for r in group]
        self.intervals = score_intervals(scored, seed) if scored else {}

    def paired(self, model: str, depth: int | None):
        """Anchored - free over the calls both modes got graded at this depth (None: none)."""
        def by_call(mode: str) -> dict[str, float]:
            return {f"{r['session']}#{r['depth']}": r[self.judge.score]
                    for r in self.graded.get((model, mode, depth), [])}

        anchored, free = by_call(ANCHORED), by_call(FREE)
        common = sorted(anchored.keys() & free.keys())
        if not common:
            return None
        return paired_difference(
            [{"id": k, "domain": DOMAIN, "score": anchored[k]} for k in common],
            [{"id": k, "domain": DOMAIN, "score": free[k]} for k in common], self.seed)


def fidelity_table(rows: Sequence[dict[str, Any]], seed: int = 0) -> list[dict[str, Any]]:
    """The fidelity rows (FIDELITY_SCHEMA) of judged replay rows, by model, mode and depth."""
    groups: dict[Group, list[dict[str, Any]]] = {}
    for row in rows:
        for depth in (row["depth"], None):
            groups.setdefault((row["model"], row["mode"], depth), []).append(row)
    rubric, llm = _Measured(groups, RUBRIC, seed), _Measured(groups, LLM, seed)
    table = []
    for model in sorted({model for model, _, _ in groups}):
        for mode in MODES:
            depths = sorted({d for m, o, d in groups if (m, o) == (model, mode) and d})
            for depth in [*depths, None]:
                key = (model, mode, depth)
                if key in groups:
                    table.append({**_rubric_row(key, groups[key], rubric),
                                  **_llm_row(key, groups[key], llm)})
    return table


def _rubric_row(key: Group, group: list[dict[str, Any]], rubric: _Measured) -> dict[str, Any]:
    graded, interval = rubric.graded[key], rubric.intervals.get(_key(key))
    difference = rubric.paired(key[0], key[2]) if key[1] == ANCHORED else None
    writes = [r["score"] for r in graded if r["kind"] == "write"]
    return {
        "model": key[0], "mode": key[1], "depth": key[2], "calls": len(graded),
        "failed": len(group) - len(graded),
        "score": _round(interval.estimate) if interval else None,
        "score_low": _round(interval.low) if interval else None,
        "score_high": _round(interval.high) if interval else None,
        "write_calls": len(writes), "write_score": _round(fmean(writes)) if writes else None,
        "anchored_minus_free": _round(difference.estimate) if difference else None,
        "difference_low": _round(difference.low) if difference else None,
        "difference_high": _round(difference.high) if difference else None,
    }


def _llm_row(key: Group, group: list[dict[str, Any]], llm: _Measured) -> dict[str, Any]:
    """The LLM judge's columns: all null when no judge was given for these rows."""
    names = sorted({r.get("llm_judge") or "" for r in group} - {""})
    asked = [r for r in group if r.get("llm_judge")]
    graded, interval = llm.graded[key], llm.intervals.get(_key(key))
    difference = llm.paired(key[0], key[2]) if key[1] == ANCHORED and names else None
    return {
        "llm_judge": "; ".join(names) or None,
        "llm_calls": len(graded) if names else None,
        "llm_failed": len(asked) - len(graded) if names else None,
        "llm_score": _round(interval.estimate) if interval else None,
        "llm_score_low": _round(interval.low) if interval else None,
        "llm_score_high": _round(interval.high) if interval else None,
        "llm_anchored_minus_free": _round(difference.estimate) if difference else None,
        "llm_difference_low": _round(difference.low) if difference else None,
        "llm_difference_high": _round(difference.high) if difference else None,
    }


def write_rows_csv(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    """The rows as CSV (the columns of the first row), atomically."""
    with atomic_path(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else [])
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_fidelity_chart(table: Sequence[dict[str, Any]], path: Path, title: str = ""
                         ) -> Path:
    """Score by depth, one colour per model, anchored solid and free dashed, each with its
    95 % band."""
    from sources.plots import DPI, SIZE, plt, write_png  # matplotlib only when drawing

    figure, axes = plt.subplots(figsize=SIZE, dpi=DPI)
    models = sorted({r["model"] for r in table})
    for model, mode in sorted({(r["model"], r["mode"]) for r in table}):
        mine = [r for r in table if (r["model"], r["mode"]) == (model, mode)
                and r["depth"] is not None and r["score"] is not None]
        depths = [r["depth"] for r in mine]
        colour = f"C{models.index(model) % 10}"
        axes.plot(depths, [r["score"] for r in mine], "-o" if mode == ANCHORED else "--o",
                  color=colour, label=f"{model} {mode}", markersize=3)
        axes.fill_between(depths, [r["score_low"] for r in mine],
                          [r["score_high"] for r in mine], color=colour, alpha=0.15)
    axes.set_xlabel("depth (tools/call in the session)")
    axes.set_ylabel("score (0-100)")
    axes.set_ylim(0, 100)
    axes.set_title(title or "MCP simulation fidelity by depth")
    if table:  # an empty report (nothing replayed) draws the axes alone
        axes.legend(fontsize=7)
    figure.tight_layout()
    return write_png(figure, path)
