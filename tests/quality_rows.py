"""Hand-made canonical rows for the quality tests: trajectories in, raw_turns / raw_trajectories
Parquet out, through the ingest layer's own `to_rows` (IDs and content hashes as in a real run).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sources.ingest import to_rows
from sources.schema import TRAJECTORY_SCHEMA, TURN_SCHEMA, Trajectory, Turn
from sources.shards import shard_of
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS

Step = tuple[str, str] | tuple[str, str, dict]


def trajectory(task: str, steps: list[Step], position: str = "$") -> Trajectory:
    """A trajectory of (action, observation[, Turn fields]) steps, shell turns by default."""
    turns = []
    for step in steps:
        action, observation, *extra = step
        fields = {"action_kind": "shell", "observation_format": "stdout",
                  **(extra[0] if extra else {})}
        turns.append(Turn(action=action, observation=observation, **fields))
    return Trajectory(task=task, turns=turns, position=position)


def write_partition(data_dir: Path, domain: str, trajectories: dict[str, Trajectory],
                    source: str = "hand", shards: int = 1) -> tuple[Path, Path]:
    """Write {data}/raw_turns and raw_trajectories for one domain; keys are source paths, and
    a trajectory goes to the shard its source path hashes to (as ingest puts it).

    Returns (turns_path, trajectories_path) of the first shard."""
    by_shard: dict[str, tuple[list, list]] = {"0": ([], [])}  # an empty domain: empty files
    for source_path, item in trajectories.items():
        rows = to_rows(item, source, domain, "hand_made", source_path)
        turn_rows, trajectory_rows = by_shard.setdefault(shard_of(source_path, shards), ([], []))
        trajectory_rows.append(rows.trajectory)
        turn_rows.extend(rows.turns)
    written = []
    for shard, (turn_rows, trajectory_rows) in sorted(by_shard.items()):
        turns, trajs = RAW_TURNS.path(data_dir, domain, shard), RAW_TRAJECTORIES.path(
            data_dir, domain, shard)
        for path, rows, schema in ((turns, turn_rows, TURN_SCHEMA),
                                   (trajs, trajectory_rows, TRAJECTORY_SCHEMA)):
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
        written.append((turns, trajs))
    return written[0]
