"""The dataset card (README.md with Hugging Face YAML front matter) and its figures.

Every figure is computed from the release's own shards (DuckDB over data/), so the card
describes exactly what was published.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from quality.labels import CATEGORIES
from quality.labels import category_shares as labelled_category_shares
from release.published import PUBLISHED
from sources.markdown import markdown_table as table_lines
from sources.plots import png_bytes, stacked_shares
from sources.storage import load_sql

GENERATED_LICENSE = "Apache-2.0"  # what worldtrace's own factory makes
UNKNOWN_LICENSE = "unknown (see the source)"


def shard_path(config: str, domain: str) -> str:
    """Where a config's split lives inside the release (Hugging Face's file naming)."""
    return f"data/{config}/{domain}-00000-of-00001.parquet"


def front_matter(name: str, version: str, rows: dict[str, dict[str, int]],
                 licenses: dict[str, str]) -> str:
    """YAML: license, pretty name, one config per table with one split per domain."""
    distinct = sorted(set(licenses.values()))
    single = len(distinct) == 1 and distinct[0] != UNKNOWN_LICENSE
    lines = ["---",
             f"license: {distinct[0].lower() if single else 'other'}",
             f"pretty_name: {name} {version}", "language:", "- en",
             "tags:", "- agents", "- world-models", "- trajectories", "configs:"]
    for config, splits in rows.items():
        lines += [f"- config_name: {config}"]
        if config == "turns":
            lines += ["  default: true"]
        lines += ["  data_files:"]
        for domain in splits:
            lines += [f"  - split: {domain}", f"    path: {shard_path(config, domain)}"]
    return "\n".join(lines + ["---", ""])


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "_not built when this release was made_\n"
    return table_lines(rows, cell=_format) + "\n"


def _format(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _query(sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    with duckdb.connect() as con:
        result = con.execute(sql, params)
        names = [c[0] for c in result.description]
        return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def _glob(root: Path, config: str) -> str:
    return str(root / "data" / config / "*.parquet")


# figure -> the config it is computed from (the SQL is in figure_<name>.sql beside this file)
FIGURE_CONFIGS = {"domains": "turns", "dedup": "dedup", "split": "split",
                  "scrub": "scrub_findings"}


def figures(root: Path, rows: dict[str, dict[str, int]], name: str) -> list[dict[str, Any]]:
    """One figure's table from the release's shards; empty when its config was not built."""
    config = FIGURE_CONFIGS[name]
    if config not in rows:
        return []
    return _query(load_sql(__file__, f"figure_{name}.sql"), {"table": _glob(root, config)})


def category_shares(root: Path, rows: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    if "turns" not in rows:
        return []
    return labelled_category_shares(_glob(root, "turns"), CATEGORIES, digits=3)


def category_plot(shares: list[dict[str, Any]]) -> bytes | None:
    if not shares:
        return None
    figure = stacked_shares([row["domain"] for row in shares],
                            {c: [row[c] for row in shares] for c in CATEGORIES},
                            title="turn categories per domain")
    return png_bytes(figure)


def card(name: str, version: str, root: Path, rows: dict[str, dict[str, int]],
         licenses: dict[str, str], rescrubbed: dict[str, int], leaderboard: str | None,
         has_category_plot: bool) -> str:
    """The whole README.md."""
    described = {table.config: table.description for table in PUBLISHED}
    configs = [{"config": config, "what": described[config],
                "rows": sum(splits.values()), "splits": ", ".join(splits)}
               for config, splits in rows.items()]
    sections = [
        front_matter(name, version, rows, licenses),
        f"# {name} {version}\n",
        "Agent trajectories from seven digital-environment domains (MCP, Search, Terminal, SWE, "
        "Android, Web, desktop OS), curated for training *language world models*: given the "
        "task, the history and the agent's next action, predict the environment's next "
        "observation. Every turn carries a category and a loss weight (low-information "
        "observations stay in the context with a low weight); duplicates are marked; secrets "
        "and personal data are replaced by typed placeholders (`<SECRET_1>`, `<EMAIL_2>`, "
        "`<PHONE_1>`, `<IP_1>`, numbered within each trajectory).\n",
        "## Configs\n", markdown_table(configs),
        "Load with `datasets.load_dataset(\"<this folder>\", \"turns\")` (one split per domain), "
        "or `datasets.load_from_disk(\"<this folder>/hf/turns\")`.\n",
        "## Per-domain statistics\n", markdown_table(figures(root, rows, "domains")),
        "## Category distribution (share of turns)\n",
        markdown_table(category_shares(root, rows)),
        "![categories](plots/categories.png)\n" if has_category_plot else "",
        "## Deduplication\n", markdown_table(figures(root, rows, "dedup")),
        "## Train / bench split and decontamination\n",
        "Trajectories of one source task stay in one pool; train trajectories that are near "
        "copies of a bench trajectory are moved to `contaminated`.\n",
        markdown_table(figures(root, rows, "split")),
        "## Scrubbing\n",
        "Values replaced by the scrub stage, per domain and kind (the values are never stored):\n",
        markdown_table(figures(root, rows, "scrub")),
        "Values the release's own final pass still replaced: "
        + (", ".join(f"{k} {n}" for k, n in sorted(rescrubbed.items())) or "none") + ".\n",
    ]
    if leaderboard:
        sections += ["## AgentWorldBench\n", leaderboard.strip() + "\n",
                     "Samples in the official JSONL layout are in `bench/official/`.\n"]
    sections += [
        "## Sources and licenses\n",
        markdown_table([{"source": s, "license": lic} for s, lic in sorted(licenses.items())]),
        "## How to rebuild\n",
        "```bash\n"
        "git clone <worldtrace> && cd worldtrace\n"
        "make run                                   # default data, all stages, all domains\n"
        f".venv/bin/worldtrace release --version {version}   # this folder, byte for byte\n"
        f".venv/bin/worldtrace release verify releases/{name}-{version}\n"
        "```\n",
        "`manifest.json` lists the SHA-256 of every file, the row counts, the release settings, "
        "the loss-weight policy and its hash, the fingerprints of the input tables, the "
        "package versions and the code version. The CPT token corpus and the models are not "
        "published; they are rebuilt from these tables by the same pipeline.\n",
    ]
    return "\n".join(section for section in sections if section)


def licenses_for(sources: Sequence[str], given: dict[str, str]) -> dict[str, str]:
    """License per source: as given, else the factory's own license for generated and
    collected default data, else unknown."""
    return {source: given.get(source) or (
        GENERATED_LICENSE if source.endswith(("-generated", "-collected")) else UNKNOWN_LICENSE)
        for source in sources}
