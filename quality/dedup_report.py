"""What the dedup decisions say, per domain, and what their columns mean (for the asset)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from sources.storage import load_sql

DEDUP_COLUMN_DOCS = {
    "trajectory_id": "the trajectory",
    "domain": "its domain partition",
    "source": "catalog source",
    "source_path": "file it was read from, relative to the source's root",
    "cluster_id": "trajectory_id of the cluster's kept member (itself when unique)",
    "cluster_size": "members of its cluster (1 = unique)",
    "kept": "true for the one member of each cluster that stays",
    "reason": "unique, kept, exact_duplicate or near_duplicate",
    "max_jaccard": "highest confirmed Jaccard to another member (null when unique)",
}


def removed_per_domain(decisions: Path) -> list[dict]:
    """Rows (domain, trajectories, kept, exact, near, across domains) from trajectory_dedup;
    `across domains` counts removed ones whose kept member sits in another domain."""
    rows = duckdb.sql(load_sql(__file__, "removed_per_domain.sql"),
                      params={"decisions": str(decisions)}).fetchall()
    names = ("domain", "trajectories", "kept", "exact", "near", "across_domains")
    return [dict(zip(names, row, strict=True)) for row in rows]
