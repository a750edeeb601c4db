"""Assertions shared by the reader tests."""

from __future__ import annotations

from pathlib import Path

from sources.reader import Reader, read_head
from sources.schema import Quarantine, Trajectory


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
