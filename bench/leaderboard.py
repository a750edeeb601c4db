"""The leaderboard: our predictor runs beside the published rows, as CSV, Markdown and PNG.

Columns are the published table's (MCP, Search, Terminal, SWE, Android, Web, OS, Overall =
the macro mean), then ours: Micro (sample-weighted), domains scored (an Overall over fewer than
seven is not comparable with the published one), samples, malformed and echo rates, the judge,
and `kind` ("ours" or "published"). A published row's numbers are on the official
benchmark with an LLM judge; ours are on our bench with the named judge: side by side for
scale, not as one ranking.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.evaluate import Summary
from bench.scoring import DOMAIN_COLUMNS, PUBLISHED
from sources.storage import atomic_path

COLUMNS = ["kind", "predictor", "judge", *DOMAIN_COLUMNS.values(), "Overall", "Micro",
           "domains", "samples", "malformed_rate", "echo_rate"]


def leaderboard_rows(summaries: Sequence[Summary], judge: str) -> list[dict[str, Any]]:
    """Ours (best Overall first), then the published rows."""
    ours = [{"kind": "ours", "judge": judge, "domains": len(s.overall.domains), **s.row()}
            for s in summaries]
    ours.sort(key=lambda row: (-row["Overall"], row["predictor"]))
    published = [{"kind": "published", "predictor": name, "judge": "LLM (official)",
                  **dict(zip([*DOMAIN_COLUMNS.values(), "Overall"], values, strict=True)),
                  "Micro": None, "domains": len(DOMAIN_COLUMNS), "samples": None,
                  "malformed_rate": None, "echo_rate": None}
                 for name, values in PUBLISHED.items()]
    return [{column: row.get(column) for column in COLUMNS} for row in ours + published]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def to_markdown(rows: Sequence[dict[str, Any]], columns: Sequence[str] = COLUMNS) -> str:
    """A Markdown table of the rows (the leaderboard's columns unless others are named)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def write_csv(rows: Sequence[dict[str, Any]], path: Path) -> None:
    with atomic_path(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows({c: _cell(row[c]) for c in COLUMNS} for row in rows)


def write_chart(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Grouped bars per domain and overall, one colour per row; published rows hatched."""
    from quality.plots import plt, write_png  # matplotlib only when a chart is drawn

    groups = [*DOMAIN_COLUMNS.values(), "Overall"]
    width = 0.8 / max(len(rows), 1)
    figure, axes = plt.subplots(figsize=(12, 4.5), dpi=100)
    for k, row in enumerate(rows):
        values = [row[g] if row[g] is not None else 0.0 for g in groups]
        positions = [g + (k - (len(rows) - 1) / 2) * width for g in range(len(groups))]
        axes.bar(positions, values, width, label=f"{row['predictor']} ({row['kind']})",
                 hatch="//" if row["kind"] == "published" else None, alpha=0.9)
    axes.set_xticks(range(len(groups)), groups)
    axes.set_ylim(0, 100)
    axes.set_ylabel("score (0-100)")
    axes.set_title("AgentWorldBench-style scores: our runs and the published rows")
    axes.legend(fontsize=7, ncols=2, loc="upper left")
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
