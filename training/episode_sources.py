"""Episodes to score from either kind of input: a worldtrace data directory (its scrubbed,
labelled trajectories of both pools) or trace files in any native format the readers know
(read the way `worldtrace ingest` reads them; what cannot be read is counted, not scored)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.build import initial_state
from quality.tables import TRAJECTORY_SPLIT
from sources.catalog import make_spec
from sources.ingest import IngestedTrajectory, IngestStats, ingest_source
from sources.schema import DOMAINS
from training.render import Episode, Step, read_episodes

POOLS = ("train", "bench")


@dataclass
class EpisodeSourceStats:
    """What the input held: trajectories read, records quarantined (with their reasons)."""

    trajectories: int = 0
    quarantined: list[str] = field(default_factory=list)


def is_data_dir(path: Path) -> bool:
    return TRAJECTORY_SPLIT.dir(path).is_dir()


def data_dir_episodes(data_dir: Path, stats: EpisodeSourceStats) -> Iterator[Episode]:
    """Every episode of both pools of every domain with a split, by domain and id."""
    for domain in DOMAINS:
        if not TRAJECTORY_SPLIT.path(data_dir, domain).exists():
            continue
        for pool in POOLS:
            for episode in read_episodes(data_dir, domain, pool):
                stats.trajectories += 1
                yield episode


def trace_episodes(path: Path, stats: EpisodeSourceStats, domain: str | None = None,
                   fmt: str = "auto") -> Iterator[Episode]:
    """The trajectories of a file, folder or glob of traces (no labels: every turn weighs 1)."""
    spec = make_spec(Path(path).stem or "validate", Path(path), domain, fmt)
    for item in ingest_source(spec, IngestStats()):
        if not isinstance(item, IngestedTrajectory):
            row = item.row
            stats.quarantined.append(f"{row.get('source_path')} {row.get('position')}: "
                                     f"{row.get('reason')}")
            continue
        stats.trajectories += 1
        yield episode_of(item)


def episode_of(item: IngestedTrajectory) -> Episode:
    """An ingested trajectory as an Episode (category unknown, weight 1 on every turn)."""
    head = item.trajectory
    steps = tuple(Step(t["turn_index"], t["action"] or "", t["observation"] or "",
                       t["observation_format"] or "", "", 1.0, t["exit_code"], t["is_error"],
                       t["action_kind"] or "", t["tool_name"] or "") for t in item.turns)
    return Episode(head["trajectory_id"], head["domain"], head["task"] or "", steps,
                   initial_state(head["domain"], head["metadata"]))


def episodes(path: Path, stats: EpisodeSourceStats, domain: str | None = None,
             fmt: str = "auto") -> Iterator[Episode]:
    """A data directory's episodes, or those of trace files."""
    if is_data_dir(path):
        return data_dir_episodes(Path(path), stats)
    return trace_episodes(Path(path), stats, domain, fmt)
