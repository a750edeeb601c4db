"""AgentWorldBench samples from the bench pool: real prefix, real action, real next observation.

Per domain: the bench-pool trajectories (`trajectory_split`, pool == 'bench'; or an explicit set
of trajectory ids), their judgeable turns (turn_labels category informative or error: a world
model can be judged on them; echo, unchanged, boilerplate and empty turns would reward copying),
a seeded draw of target turns stratified by source (`allocation.py`), at most one target per
trajectory until every trajectory has one (many targets of one trajectory share long prefixes:
near-identical samples), and the official per-domain counts by default. Each sample carries the
whole real history before its target, untruncated, as the official benchmark does.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import duckdb
import pyarrow as pa

from bench.allocation import allocate
from bench.prompts import PROMPT_VERSION, system_prompt
from bench.sample import GUI_DOMAINS, BenchSample
from bench.scoring import OFFICIAL_COUNTS
from quality.labels import JUDGEABLE
from quality.tables import SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS, TRAJECTORY_SPLIT, TURN_LABELS
from sources.ids import seeded_digest
from sources.storage import load_sql, parquet_view

INITIAL_STATE_KEYS = ("initial_state", "initial_observation")  # reader metadata, GUI domains


@dataclass(frozen=True)
class BuildConfig:
    """Samples per domain (default: the official counts), seed, target categories, prompts."""

    counts: Mapping[str, int] = field(default_factory=lambda: dict(OFFICIAL_COUNTS))
    seed: int = 0
    categories: tuple[str, ...] = JUDGEABLE
    prompt_version: str = PROMPT_VERSION

    def __str__(self) -> str:
        return f"s{self.seed}_{'+'.join(self.categories)}_{self.prompt_version}"


@dataclass
class BuildStats:
    """What one domain's build found and took."""

    domain: str
    requested: int = 0
    pool_trajectories: int = 0
    eligible_turns: int = 0
    eligible_trajectories: int = 0
    built: int = 0
    per_source: Counter = field(default_factory=Counter)
    per_category: Counter = field(default_factory=Counter)

    @property
    def shortfall(self) -> int:
        return max(self.requested - self.built, 0)


def bench_pool_ids(data_dir: Path, domain: str) -> list[str]:
    """Trajectory ids of the bench pool of one domain (FileNotFoundError before the split)."""
    path = TRAJECTORY_SPLIT.path(data_dir, domain)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no trajectory_split for {domain} (build the split "
                                f"first, or pass trajectory ids)")
    with duckdb.connect() as con:
        rows = con.execute(load_sql(__file__, "bench_pool_ids.sql"), {"path": str(path)}
                           ).fetchall()
    return [row[0] for row in rows]


def _connect(data_dir: Path, domain: str, trajectory_ids: Iterable[str]
             ) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    # The scrubbed tables (same schema as the raw ones): no secret reaches a bench sample.
    for view, table in (("turns", SCRUBBED_TURNS), ("labels", TURN_LABELS),
                        ("trajectories", SCRUBBED_TRAJECTORIES)):
        path = table.domain_glob(data_dir, domain)
        if not table.has(data_dir, domain):
            con.close()
            raise FileNotFoundError(f"{path}: {table} of {domain} is needed to build the bench")
        parquet_view(con, view, path)
    con.register("pool", pa.table({"trajectory_id": pa.array(list(trajectory_ids), pa.string())}))
    return con


def select_targets(con: duckdb.DuckDBPyConnection, n: int, config: BuildConfig,
                   stats: BuildStats) -> list[tuple[str, int, str]]:
    """(trajectory_id, turn_index, category) of the drawn targets, in a stable order."""
    rows = con.execute(load_sql(__file__, "select_targets.sql"),
                       {"categories": list(config.categories), "seed": str(config.seed)}
                       ).fetchall()
    by_source: dict[str, list[tuple]] = {}
    for row in rows:
        by_source.setdefault(row[2], []).append(row)
    stats.eligible_turns = len(rows)
    stats.eligible_trajectories = len({row[0] for row in rows})
    trajectories = {s: len({r[0] for r in group}) for s, group in by_source.items()}
    quota = allocate(n, trajectories, {s: len(group) for s, group in by_source.items()})
    chosen = [row for source, group in sorted(by_source.items()) for row in group[: quota[source]]]
    stats.per_source.update(row[2] for row in chosen)
    stats.per_category.update(row[3] for row in chosen)
    return sorted((row[0], row[1], row[3]) for row in chosen)


def sample_id(domain: str, trajectory_id: str, turn_index: int) -> str:
    """A stable id: the domain and a hash of the target turn."""
    return f"{domain}-{seeded_digest(trajectory_id, turn_index).hex()[:16]}"


def initial_state(domain: str, metadata: str | None) -> str:
    """The screen before the first action of a GUI trajectory (from the reader's metadata)."""
    if domain not in GUI_DOMAINS or not metadata:
        return ""
    values = json.loads(metadata)
    return next((values[k] for k in INITIAL_STATE_KEYS if isinstance(values.get(k), str)), "")


def _samples(con: duckdb.DuckDBPyConnection, domain: str, targets: list[tuple[str, int, str]],
             config: BuildConfig) -> Iterator[BenchSample]:
    """One sample per target; a trajectory's turns are read once for all its targets."""
    prompt = system_prompt(domain, config.prompt_version)
    by_trajectory: dict[str, list[tuple[int, str]]] = {}
    for trajectory_id, turn_index, category in targets:
        by_trajectory.setdefault(trajectory_id, []).append((turn_index, category))
    con.register("chosen", pa.table({"trajectory_id": list(by_trajectory)}))
    info = {row[0]: row[1:] for row in con.execute(
        load_sql(__file__, "chosen_trajectories.sql")).fetchall()}
    cursor = con.execute(load_sql(__file__, "chosen_turns.sql"))
    current: str | None = None
    turns: list[tuple[str, str]] = []
    for row in chain(iter(cursor.fetchone, None), [None]):
        if row is None or row[0] != current:
            if current is not None:
                source, task, metadata, n_turns = info[current]
                for turn_index, category in by_trajectory[current]:
                    yield BenchSample(
                        domain=domain, id=sample_id(domain, current, turn_index),
                        history=turns[:turn_index], current_action=turns[turn_index][0],
                        reference=turns[turn_index][1], system_prompt=prompt,
                        turn_idx=turn_index + 1, total_turns=max(n_turns, len(turns)),
                        trajectory_id=current, source=source,
                        task=task if domain in GUI_DOMAINS else "",
                        initial_state=initial_state(domain, metadata), category=category)
            if row is None:
                break
            current, turns = row[0], []
        turns.append((row[2], row[3]))


def build_domain(data_dir: Path | str, domain: str, config: BuildConfig = BuildConfig(),
                 trajectory_ids: Iterable[str] | None = None
                 ) -> tuple[list[BenchSample], BuildStats]:
    """The samples of one domain, sorted by id, and what the build found."""
    data_dir = Path(data_dir)
    ids = list(trajectory_ids) if trajectory_ids is not None else bench_pool_ids(data_dir, domain)
    stats = BuildStats(domain, requested=config.counts.get(domain, 0), pool_trajectories=len(ids))
    con = _connect(data_dir, domain, ids)
    try:
        targets = select_targets(con, stats.requested, config, stats)
        samples = sorted(_samples(con, domain, targets, config), key=lambda s: s.id)
    finally:
        con.close()
    stats.built = len(samples)
    return samples, stats
