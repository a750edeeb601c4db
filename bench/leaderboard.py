"""The leaderboard: our predictor runs beside the published rows, as CSV, Markdown and PNG.

Columns: the published table's domains (MCP ... OS), then both overalls, labelled:
`overall_macro` (the plain mean of the seven domains: the published table's "Overall") and
`overall_pooled` (the mean over every valid sample: what the released `eval.py` prints); then
ours: domains scored (an overall over fewer than seven compares with nothing published),
samples, failed samples (in all and per domain: they leave every average), the strict
diagnostics (malformed and echo rates, never part of the score), the judge, the scoring mode
and `kind` ("ours" or "published"). A published row is the official benchmark judged by an LLM;
ours are the bench given, judged as the `judge` column says: the chart draws them in separate
panels so that no one reads them as one scale.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.evaluate import Summary
from bench.scoring import DOMAIN_COLUMNS, PUBLISHED
from bench.tables import LEADERBOARD
from sources.markdown import markdown_table
from sources.storage import atomic_path

COLUMNS = LEADERBOARD.schema.names  # declared, with a description each, in bench/tables.py
PUBLISHED_JUDGE = "LLM judge (official prompts, official data)"


def leaderboard_rows(summaries: Sequence[Summary], judge: str, scoring: str = "official"
                     ) -> list[dict[str, Any]]:
    """Ours (best overall_macro first; none last), then the published rows (their Overall is
    the macro; the pooled figure was not published)."""
    ours = [{"kind": "ours", "judge": judge, "scoring": scoring,
             "domains": len(s.overall.domains), **s.row()} for s in summaries]
    ours.sort(key=lambda row: (row["overall_macro"] is None, -(row["overall_macro"] or 0.0),
                               row["predictor"]))
    published = [{"kind": "published", "predictor": name, "judge": PUBLISHED_JUDGE,
                  "scoring": "official",
                  **dict(zip([*DOMAIN_COLUMNS.values(), "overall_macro"], values, strict=True)),
                  "domains": len(DOMAIN_COLUMNS)}
                 for name, values in PUBLISHED.items()]
    return [{column: row.get(column) for column in COLUMNS} for row in ours + published]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def to_markdown(rows: Sequence[dict[str, Any]], columns: Sequence[str] = COLUMNS) -> str:
    """A Markdown table of the rows (the leaderboard's columns unless others are named)."""
    return markdown_table(rows, columns, _cell)


def write_csv(rows: Sequence[dict[str, Any]], path: Path) -> None:
    with atomic_path(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows({c: _cell(row[c]) for c in COLUMNS} for row in rows)


def write_chart(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Two panels of grouped bars per domain and overall_macro: our runs (the judge named in
    the title) and the published rows (LLM judge, official data): two scales, never one."""
    from sources.plots import plt, write_png  # matplotlib only when a chart is drawn

    groups = [*DOMAIN_COLUMNS.values(), "overall_macro"]
    panels = [("ours", "Our runs (judge: " + ", ".join(sorted({str(r["judge"]) for r in rows
                                                               if r["kind"] == "ours"}))
               + ")"), ("published", f"Published rows ({PUBLISHED_JUDGE})")]
    figure, axes_pair = plt.subplots(2, 1, figsize=(12, 8), dpi=100)
    for axes, (kind, title) in zip(axes_pair, panels, strict=True):
        mine = [row for row in rows if row["kind"] == kind]
        width = 0.8 / max(len(mine), 1)
        for k, row in enumerate(mine):
            values = [row[g] if row[g] is not None else 0.0 for g in groups]
            positions = [g + (k - (len(mine) - 1) / 2) * width for g in range(len(groups))]
            axes.bar(positions, values, width, label=row["predictor"], alpha=0.9,
                     color=plt.cm.tab20(k % 20))  # 14 published rows: tab10 repeats colours
        axes.set_xticks(range(len(groups)), groups)
        axes.set_ylim(0, 100)
        axes.set_ylabel("score (0-100)")
        axes.set_title(title, fontsize=10)
        if mine:
            axes.legend(fontsize=6, ncols=4, loc="upper left")
    figure.suptitle("AgentWorldBench-style scores: not one scale across the two panels")
    figure.tight_layout()
    write_png(figure, path)


def write_leaderboard(rows: Sequence[dict[str, Any]], out_dir: Path) -> dict[str, Path]:
    """leaderboard.csv, leaderboard.md and leaderboard.png under out_dir."""
    paths = {"csv": out_dir / "leaderboard.csv", "markdown": out_dir / "leaderboard.md",
             "png": out_dir / "leaderboard.png"}
    write_csv(rows, paths["csv"])
    with atomic_path(paths["markdown"]) as tmp:
        tmp.write_text(to_markdown(rows) + "\n", encoding="utf-8")
    write_chart(rows, paths["png"])
    return paths
