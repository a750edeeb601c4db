"""trajectory_split: every trajectory dedup kept goes to the train or the bench pool.

The pool is a stable hash of a *grouping key* (the source task), so every run of one task lands
in the same pool and a model is never benchmarked on a task it trained on: sha256 of
"{seed}:{group_key}" read as a number in [0, 1), bench when below `bench_share`. The key is, in
order: a task id the format records (`task_id`, `instance_id` in the trajectory metadata), the
task text (lowercased, whitespace collapsed), and for a trajectory without either (a raw MCP
transcript has no task) its own id. Then decontamination (decontaminate.py) moves every train
trajectory that is a near copy of a bench trajectory to the `contaminated` pool.

Output: {data}/trajectory_split/domain={d}/part-0.parquet, sorted by trajectory_id (CONTRACTS).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from quality.decontaminate import DecontaminationConfig, find_contaminated
from quality.tables import DEDUP_SIGNATURES, TRAJECTORY_DEDUP, TRAJECTORY_SPLIT
from sources.ids import seeded_fraction
from sources.storage import (
    CheckOutcome,
    load_sql,
    scalar_query,
    write_parquet,
)
from sources.tables import RAW_TRAJECTORIES

POOLS = ("train", "bench", "contaminated")
TASK_ID_KEYS = ("task_id", "instance_id")  # metadata fields that name the source task

@dataclass(frozen=True)
class SplitConfig:
    """Bench share, the seed of the pool hash, and the decontamination settings."""

    bench_share: float = 0.15
    seed: int = 0
    decontamination: DecontaminationConfig = DecontaminationConfig()

    def __post_init__(self) -> None:
        if not 0.0 <= self.bench_share <= 1.0:
            raise ValueError(f"bench_share must be in [0, 1], got {self.bench_share}")

    def __str__(self) -> str:
        return f"bench{self.bench_share:g}_seed{self.seed}_{self.decontamination}"


@dataclass
class SplitStats:
    """Trajectories per (domain, pool), groups, and seconds, recorded while splitting."""

    config: str = ""
    pools: Counter = field(default_factory=Counter)  # (domain, pool) -> trajectories
    groups: Counter = field(default_factory=Counter)  # pool -> distinct group keys
    trajectories: int = 0

    def count(self, domain: str, pool: str) -> int:
        return self.pools[domain, pool]

    def rows(self) -> list[dict]:
        """One row per domain: trajectories per pool."""
        domains = sorted({d for d, _ in self.pools})
        return [{"domain": d, **{p: self.pools[d, p] for p in POOLS}} for d in domains]


def group_key(task: str | None, metadata: str | None, trajectory_id: str) -> str:
    """The source task a trajectory belongs to (see module docstring)."""
    try:
        fields = json.loads(metadata) if metadata else {}
    except json.JSONDecodeError:
        fields = {}
    for key in TASK_ID_KEYS:
        value = fields.get(key) if isinstance(fields, dict) else None
        if value not in (None, ""):
            return f"{key}:{value}"
    text = " ".join((task or "").lower().split())
    if text:
        return "task:" + hashlib.sha256(text.encode()).hexdigest()[:20]
    return f"trajectory:{trajectory_id}"


def stable_fraction(key: str, seed: int) -> float:
    """A stable number in [0, 1) for a key (a group key here, a trajectory id for sft_split's
    validation share): the first 8 bytes of sha256 of "{seed}:{key}", scaled."""
    return seeded_fraction(seed, key)


def kept_trajectories(data_dir: Path, domains: Sequence[str]) -> pa.Table:
    """trajectory_id, domain, source, task, metadata of the trajectories dedup kept."""
    present = RAW_TRAJECTORIES.domains_present(data_dir, domains)
    if not present:
        raise FileNotFoundError(f"{data_dir}: no raw_trajectories partition to split")
    with duckdb.connect() as con:
        return con.sql(load_sql(__file__, "kept_trajectories.sql"), params={
            "trajectories": RAW_TRAJECTORIES.glob(data_dir),
            "decisions": str(TRAJECTORY_DEDUP.path(data_dir)), "domains": present,
        }).to_arrow_table()


def split_trajectories(data_dir: Path, domains: Sequence[str],
                       config: SplitConfig = SplitConfig()) -> SplitStats:
    """Write trajectory_split for every domain present; return the counts."""
    data_dir = Path(data_dir)
    kept = kept_trajectories(data_dir, domains)
    keys = [group_key(t, m, i) for t, m, i in zip(
        kept["task"].to_pylist(), kept["metadata"].to_pylist(),
        kept["trajectory_id"].to_pylist(), strict=True)]
    pools = ["bench" if stable_fraction(k, config.seed) < config.bench_share else "train"
             for k in keys]
    ids = kept["trajectory_id"].to_pylist()
    found = find_contaminated(DEDUP_SIGNATURES.path(data_dir),
                              pa.table({"trajectory_id": ids, "pool": pools}),
                              config.decontamination)
    pools = ["contaminated" if t in found else p for t, p in zip(ids, pools, strict=True)]
    table = pa.table({
        "trajectory_id": kept["trajectory_id"], "domain": kept["domain"],
        "source": kept["source"], "group_key": keys, "pool": pools,
        "nearest_bench_id": [found[t].bench_id if t in found else None for t in ids],
        "similarity": [found[t].similarity if t in found else None for t in ids],
    }, schema=TRAJECTORY_SPLIT.schema)
    stats = SplitStats(config=str(config), trajectories=table.num_rows)
    stats.pools.update(zip(kept["domain"].to_pylist(), pools, strict=True))
    for pool in POOLS:
        stats.groups[pool] = len({k for k, p in zip(keys, pools, strict=True) if p == pool})
    metadata = {b"split_config": str(config).encode()}
    for domain in sorted(set(kept["domain"].to_pylist())):
        part = table.filter(pa.compute.equal(table["domain"], domain))
        write_parquet(part.replace_schema_metadata(metadata),
                      TRAJECTORY_SPLIT.path(data_dir, domain))
    return stats


def groups_in_one_pool(data_dir: Path) -> CheckOutcome:
    """No group key (source task) has runs in both train and bench."""
    straddling = scalar_query(load_sql(__file__, "straddling_groups.sql"),
                              path=TRAJECTORY_SPLIT.glob(data_dir))
    return CheckOutcome(straddling == 0, f"{straddling} source tasks in both train and bench",
                        {"straddling_groups": straddling})
