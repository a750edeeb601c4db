"""A small generated corpus through ingest and the quality stage, for the bench tests.

The trace factory writes native-format files with real collectors and the seeded generator;
the readers ingest them and the quality stage labels every turn, exactly as `make run` does,
only smaller. Until the split table exists, the bench pool is every other trajectory (by id)
and the train pool the rest: `pools()`.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from quality.stage import run_quality_stage
from sources.catalog import make_spec
from sources.factory.scale import generate_corpus
from sources.ingest import write_tables
from sources.schema import DOMAINS
from sources.storage import sql_path
from sources.tables import RAW_TRAJECTORIES


def make_corpus(root: Path, trajectories: int = 8, seed: int = 5) -> Path:
    """Generate, ingest and label `trajectories` per domain; returns the data directory."""
    generated, data = root / "generated", root / "data"
    generate_corpus(generated, DOMAINS, trajectories, seed)
    specs = [make_spec(f"{domain}-generated", generated / domain, domain) for domain in DOMAINS]
    write_tables(specs, data, domains=DOMAINS)
    run_quality_stage(data, data, DOMAINS)
    return data


def pools(data: Path, domain: str) -> tuple[list[str], list[str]]:
    """(bench ids, train ids): alternate trajectories of the domain, sorted by id."""
    with duckdb.connect() as con:
        ids = [row[0] for row in con.execute(
            "SELECT trajectory_id FROM read_parquet("
            f"{sql_path(RAW_TRAJECTORIES.domain_glob(data, domain))}) ORDER BY 1"
        ).fetchall()]
    return ids[::2], ids[1::2]
