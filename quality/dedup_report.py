"""What the dedup decisions say, per domain, and what their columns mean (for the asset)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from sources.storage import load_sql


def removed_per_domain(decisions: Path) -> list[dict]:
    """Rows (domain, trajectories, kept, exact, near, across domains) from trajectory_dedup;
    `across domains` counts removed ones whose kept member sits in another domain."""
    rows = duckdb.sql(load_sql(__file__, "removed_per_domain.sql"),
                      params={"decisions": str(decisions)}).fetchall()
    names = ("domain", "trajectories", "kept", "exact", "near", "across_domains")
    return [dict(zip(names, row, strict=True)) for row in rows]
