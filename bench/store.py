"""The bench tables in the data directory (Parquet per domain, atomic writes).

- agentworldbench/domain=<d>/part-0.parquet   the samples (BENCH_SCHEMA), sorted by id
- agentworldbench/official/<d>_test.jsonl     the same samples in the official layout
- bench_predictions/domain=<d>/part-0.parquet raw outputs per (predictor, sample)
- bench_scores/domain=<d>/part-0.parquet      judged rows per (predictor, judge, sample)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bench.official import official_file
from bench.sample import BenchSample
from bench.tables import AGENTWORLDBENCH
from sources.schema import DOMAINS
from sources.storage import write_parquet
from sources.tables import Table

OFFICIAL_FOLDER = "official"
def official_dir(data_dir: Path | str) -> Path:
    return AGENTWORLDBENCH.dir(data_dir) / OFFICIAL_FOLDER


def _row(sample: BenchSample) -> dict[str, Any]:
    return {"id": sample.id, "domain": sample.domain, "source": sample.source,
            "trajectory_id": sample.trajectory_id, "turn_idx": sample.turn_idx,
            "total_turns": sample.total_turns, "category": sample.category,
            "history": [{"action": a, "observation": o} for a, o in sample.history],
            "current_action": sample.current_action, "reference": sample.reference,
            "system_prompt": sample.system_prompt, "task": sample.task,
            "initial_state": sample.initial_state}


def _sample(row: dict[str, Any]) -> BenchSample:
    history = [(turn["action"], turn["observation"]) for turn in row.pop("history")]
    return BenchSample(history=history, **row)


def write_samples(samples: Sequence[BenchSample], data_dir: Path | str, domain: str) -> Path:
    """One domain's samples as agentworldbench/domain=<d>/part-0.parquet."""
    path = AGENTWORLDBENCH.path(data_dir, domain)
    write_parquet(pa.Table.from_pylist([_row(s) for s in samples], schema=AGENTWORLDBENCH.schema),
                  path)
    return path


def remove_samples(data_dir: Path | str, domains: Iterable[str]) -> list[str]:
    """Remove the samples of domains a build no longer makes (their agentworldbench partition
    and official file), since the predictors read every domain on disk; returns the domains
    that had any."""
    removed = []
    for domain in domains:
        official = official_file(official_dir(data_dir), domain)
        had_official = official.exists()
        official.unlink(missing_ok=True)
        if AGENTWORLDBENCH.remove_domain(data_dir, domain) or had_official:
            removed.append(domain)
    return removed


def read_samples(data_dir: Path | str, domains: Iterable[str] = DOMAINS) -> list[BenchSample]:
    """Every stored sample of the given domains (domains without a table are skipped)."""
    samples: list[BenchSample] = []
    for domain in domains:
        path = AGENTWORLDBENCH.path(data_dir, domain)
        if path.exists():
            samples += [_sample(row) for row in pq.read_table(path).to_pylist()]
    return samples


def write_rows(rows: Sequence[dict[str, Any]], data_dir: Path | str, table: Table
               ) -> dict[str, int]:
    """Rows split by their `domain` into {table}/domain=<d>/part-0.parquet; rows per domain.
    A domain without rows has no partition: an earlier run's is removed, so no stale file stays
    and a run over some domains leaves no empty partitions of the others."""
    counts = {}
    for domain in DOMAINS:
        mine = [row for row in rows if row["domain"] == domain]
        if mine:
            write_parquet(pa.Table.from_pylist(mine, schema=table.schema),
                          table.path(data_dir, domain))
        else:
            table.remove_domain(data_dir, domain)
        counts[domain] = len(mine)
    return counts


def read_rows(data_dir: Path | str, table: Table) -> list[dict[str, Any]]:
    """All rows of a per-domain table (empty when it was never written)."""
    rows: list[dict[str, Any]] = []
    for domain in DOMAINS:
        path = table.path(data_dir, domain)
        if path.exists():
            rows += pq.read_table(path).to_pylist()
    return rows
