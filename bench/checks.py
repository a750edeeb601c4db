"""Checks that the bench measures what it claims: no sample the models could have trained on.

- samples_in_bench_pool: every sample's trajectory is in trajectory_split's bench pool.
- no_near_duplicate_in_train: no train-pool trajectory is a near duplicate of a sample's
  trajectory: the MinHash estimate of their Jaccard (the dedup stage's stored signatures, word
  5-grams of task + turns) stays under the dedup stage's near-duplicate threshold, 0.8.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from bench.sample import BenchSample
from quality.minhash import estimate_jaccard, read_signatures
from quality.tables import DEDUP_SIGNATURES, TRAJECTORY_SPLIT
from sources.storage import CheckOutcome, load_sql

NEAR_DUPLICATE_JACCARD = 0.8  # quality/dedup.py's near-duplicate threshold


def _pools(data_dir, domain: str) -> dict[str, str]:
    path = TRAJECTORY_SPLIT.path(data_dir, domain)
    with duckdb.connect() as con:
        rows = con.execute(load_sql(__file__, "pools.sql"), {"path": str(path)}).fetchall()
    return dict(rows)


def samples_in_bench_pool(data_dir, samples: Sequence[BenchSample]) -> CheckOutcome:
    """Every sample's trajectory has pool == 'bench'."""
    outside: list[str] = []
    for domain in sorted({s.domain for s in samples}):
        pools = _pools(data_dir, domain)
        outside += [s.id for s in samples if s.domain == domain
                    and pools.get(s.trajectory_id) != "bench"]
    return CheckOutcome(not outside, f"{len(outside)} of {len(samples)} samples come from "
                        "trajectories outside the bench pool",
                        {"outside": len(outside), "examples": ", ".join(outside[:5])})


def no_near_duplicate_in_train(data_dir, samples: Sequence[BenchSample]) -> CheckOutcome:
    """The highest MinHash Jaccard between a sample's trajectory and any train trajectory
    whose signature is of the same kind (word or character shingles, as dedup made them)."""
    stored = read_signatures(DEDUP_SIGNATURES.path(data_dir))
    rows, kinds, sigs = stored.rows, stored.kinds, stored.matrix
    train = [t for d in sorted({s.domain for s in samples})
             for t, pool in _pools(data_dir, d).items() if pool == "train" and t in rows]
    worst, pairs = 0.0, 0
    for trajectory_id in sorted({s.trajectory_id for s in samples} & rows.keys()):
        kind = kinds[rows[trajectory_id]]
        same_kind = [rows[t] for t in train if kinds[rows[t]] == kind]
        if same_kind:
            similarity = estimate_jaccard(sigs[rows[trajectory_id]][None, :], sigs[same_kind])
            worst = max(worst, float(similarity.max()))
            pairs += int((similarity >= NEAR_DUPLICATE_JACCARD).sum())
    return CheckOutcome(pairs == 0, f"{pairs} (sample trajectory, train trajectory) pairs at "
                        f"MinHash Jaccard >= {NEAR_DUPLICATE_JACCARD}; highest {worst:.3f}",
                        {"near_duplicate_pairs": pairs, "max_jaccard": round(worst, 4)})
