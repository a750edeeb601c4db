"""Assertions shared by the reader tests."""

from __future__ import annotations

import json
from pathlib import Path

from sources.readers.base import Reader, read_head
from sources.schema import ACTION_KINDS, OBSERVATION_FORMATS, Quarantine, Trajectory


def claimed_fixtures(reader: Reader, traces_dir: Path) -> set[str]:
    """Every file and folder under the traces dir that `reader.sniff` claims, as relative paths."""
    entries = sorted(traces_dir.rglob("*"))
    assert len(entries) > 20, f"expected the full fixture tree under {traces_dir}"
    return {
        path.relative_to(traces_dir).as_posix()
        for path in entries
        if reader.sniff(path, read_head(path))
    }


def split_items(items: list) -> tuple[list[Trajectory], list[Quarantine]]:
    """A reader's output split into trajectories and quarantine items (nothing else allowed)."""
    trajectories = [item for item in items if isinstance(item, Trajectory)]
    quarantined = [item for item in items if isinstance(item, Quarantine)]
    assert len(trajectories) + len(quarantined) == len(items)
    return trajectories, quarantined


def read_checked(reader: Reader, path: Path) -> tuple[list[Trajectory], list[Quarantine]]:
    """Read `path`, split the items, and check every trajectory against the schema vocabularies
    (action kinds, observation formats) and that its metadata is JSON-serialisable."""
    trajectories, quarantined = split_items(list(reader.read(path)))
    for trajectory in trajectories:
        json.dumps(trajectory.metadata)
        for turn in trajectory.turns:
            assert turn.action_kind in ACTION_KINDS, turn.action_kind
            assert turn.observation_format in OBSERVATION_FORMATS, turn.observation_format
    return trajectories, quarantined
