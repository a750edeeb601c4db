"""Decontamination: no train trajectory may be a near copy of a bench trajectory.

Dedup (quality/dedup.py) already removed copies at Jaccard >= 0.8 (0.7 on characters for short
runs) across the whole corpus, so what is left to catch is the looser kind of leak a benchmark
cares about: a train run that shares half its text with a bench run (the same files listed, the
same pages visited, under another task wording). Those train runs move to the `contaminated`
pool. Candidates come from LSH banding of the signatures dedup stored (decontaminate.sql); each
candidate's Jaccard is estimated from the two signatures (the share of equal values), and a
train run is contaminated when its best bench match reaches the threshold.

Banding: 42 bands x 3 rows (126 of 128 values) give P(candidate) = 0.996 at Jaccard 0.5 and
0.67 at 0.3 (1 - (1 - s^r)^b, Leskovec et al., Mining of Massive Datasets 3.4): a missed leak
is worse than a few thousand extra signature comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from quality.minhash import estimate_jaccard, read_signatures
from sources.storage import load_sql, parquet_view, query_arrow


@dataclass(frozen=True)
class DecontaminationConfig:
    """Similarity threshold (MinHash estimate of Jaccard) and the LSH banding that finds it."""

    threshold: float = 0.5
    bands: int = 42
    rows: int = 3
    min_shingles: int = 20  # signatures of fewer shingles (a few words) are too noisy to judge

    def __str__(self) -> str:
        return f"decon_t{self.threshold:g}_{self.bands}b_{self.rows}r_min{self.min_shingles}"


@dataclass(frozen=True)
class Contamination:
    """A train trajectory's nearest bench trajectory and their estimated Jaccard."""

    train_id: str
    bench_id: str
    similarity: float


def find_contaminated(signatures_path: Path, pools: pa.Table,
                      config: DecontaminationConfig = DecontaminationConfig()
                      ) -> dict[str, Contamination]:
    """Train trajectories (pools: trajectory_id, pool) with a bench match at the threshold,
    keyed by trajectory id; ties go to the smallest bench id."""
    params = {"bands": int(config.bands), "rows": int(config.rows),
              "min_shingles": int(config.min_shingles)}
    with duckdb.connect() as con:
        parquet_view(con, "signatures", signatures_path)
        con.register("pools", pools.select(["trajectory_id", "pool"]))
        pairs = query_arrow(con, load_sql(__file__, "decontaminate.sql"), params)
    if pairs.num_rows == 0:
        return {}
    similarity = _estimates(signatures_path, pairs)
    found: dict[str, Contamination] = {}
    for train_id, bench_id, s in zip(pairs["train_id"].to_pylist(),
                                     pairs["bench_id"].to_pylist(), similarity, strict=True):
        best = found.get(train_id)
        if s >= config.threshold and (best is None or s > best.similarity):
            found[train_id] = Contamination(train_id, bench_id, float(s))
    return found


def _estimates(signatures_path: Path, pairs: pa.Table) -> np.ndarray:
    """MinHash Jaccard estimate of every (train_id, bench_id) pair."""
    stored = read_signatures(signatures_path)
    left = np.array([stored.rows[t] for t in pairs["train_id"].to_pylist()], dtype=np.int64)
    right = np.array([stored.rows[t] for t in pairs["bench_id"].to_pylist()], dtype=np.int64)
    return estimate_jaccard(stored.matrix[left], stored.matrix[right]).astype(np.float32)
