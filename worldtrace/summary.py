"""The end-of-run summary: rows per table and domain, category shares, bench scores, checks,
where the data and the release are, and how to open the UI. Read from the data directory.

Only the domains of this run are counted: a run over a subset of the domains still finds
partitions of the others (an earlier run left its files), and an old count there would read
as this run's result."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench.tables import AGENTWORLDBENCH, BENCH_SCORES, LEADERBOARD
from quality.labels import category_shares
from quality.tables import SCRUB_FINDINGS, SCRUBBED_TURNS, TRAJECTORY_SPLIT, TURN_LABELS
from sources.schema import DOMAINS
from sources.storage import row_count
from sources.tables import INGEST_QUARANTINE, RAW_TRAJECTORIES, RAW_TURNS
from training.tables import CPT_CORPUS, RL_SPLIT, SFT_SPLIT

TABLES = (RAW_TRAJECTORIES, RAW_TURNS, INGEST_QUARANTINE, SCRUBBED_TURNS, SCRUB_FINDINGS,
          TURN_LABELS, TRAJECTORY_SPLIT, SFT_SPLIT, RL_SPLIT, CPT_CORPUS, AGENTWORLDBENCH,
          BENCH_SCORES)
CATEGORIES = ("informative", "error", "unchanged", "echo", "boilerplate", "empty")


def rows_table(data_dir: Path, domains: Sequence[str] = DOMAINS) -> list[str]:
    """One line per table present: its rows per domain of the run and in all of them."""
    width = max(len(d) for d in DOMAINS) + 2
    lines = [f"{'table':<20}" + "".join(f"{d:>{width + 4}}" for d in domains) + f"{'all':>10}"]
    for table in TABLES:
        counts = [row_count(files) if (files := table.domain_files(data_dir, d)) else None
                  for d in domains]
        if any(count is not None for count in counts):
            cells = "".join(f"{'-' if c is None else f'{c:,}':>{width + 4}}" for c in counts)
            lines.append(f"{table.name:<20}{cells}{sum(c or 0 for c in counts):>10,}")
    return lines


def category_lines(data_dir: Path, domains: Sequence[str] = DOMAINS) -> list[str]:
    if not TURN_LABELS.paths(data_dir, tuple(domains)):
        return []
    rows = [list(row.values()) for row in category_shares(
        TURN_LABELS.glob(data_dir), CATEGORIES, digits=6) if row["domain"] in domains]
    lines = [f"{'domain':<10}" + "".join(f"{c:>13}" for c in CATEGORIES)]
    lines += [f"{row[0]:<10}" + "".join(f"{share:>13.1%}" for share in row[1:]) for row in rows]
    return lines


def summary(data_dir: Path, releases: list[Path], checks_passed: int, checks_failed: int,
            seconds: float, dagster_home: str, domains: Sequence[str] = DOMAINS) -> str:
    """The summary of a run over `domains` (the others are named as not in it, not counted)."""
    left_out = [d for d in DOMAINS if d not in domains]
    parts = ["", f"worldtrace: finished in {seconds / 60:.1f} min; {checks_passed} checks "
                 f"passed, {checks_failed} failed", "", "Rows per table and domain:",
             *rows_table(data_dir, domains)]
    if left_out:
        parts.append(f"Not in this run (not counted): {', '.join(left_out)}")
    categories = category_lines(data_dir, domains)
    if categories:
        parts += ["", "Turn categories (share of turns):", *categories]
    leaderboard = LEADERBOARD.dir(data_dir) / "leaderboard.md"
    if leaderboard.exists():
        parts += ["", "Bench scores (AgentWorldBench-style, 0-100):",
                  leaderboard.read_text(encoding="utf-8").strip()]
    standing = LEADERBOARD.dir(data_dir) / "models_vs_baselines.md"
    if standing.exists():  # each trained model vs the untrained one and copy_last, same samples
        parts += ["", "Trained models on the samples they share with the others:",
                  *[line for line in standing.read_text(encoding="utf-8").splitlines()
                    if line.startswith("- ")]]
    parts += ["", f"Data:     {data_dir}/<table>/domain=<d>/[shard=<s>/]part-0.parquet "
                  "(shards: the per-turn tables)"]
    parts += [f"Release:  {path}" for path in releases]
    parts += [f"UI:       make ui   (DAGSTER_HOME={dagster_home}) -> http://127.0.0.1:3000 "
              "(Runs, and each asset's page: metadata, plots, checks per domain)"]
    return "\n".join(parts)
