"""The reader interface: one subclass per native format, one module per reader.

A reader turns one file (or one run folder) into a stream of `Trajectory` and `Quarantine`
items. It must stream: hold at most one trajectory in memory, never the whole file when the
file holds many trajectories. A record it cannot parse becomes a `Quarantine` with its position,
and the reader goes on with the next record; a file it cannot parse at all raises `FormatError`,
which the ingest layer turns into one quarantine row for the file.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from sources.schema import Quarantine, Trajectory

SNIFF_BYTES = 65536  # enough to see the keys of any format we read, small enough to be free


class FormatError(ValueError):
    """Input that does not parse, with the file and the place in it."""

    def __init__(self, path: Path | str, position: str, reason: str) -> None:
        self.path = str(path)
        self.position = position
        self.reason = reason
        super().__init__(f"{self.path} at {position}: {reason}")


class Reader(ABC):
    """Base class of every native-format reader."""

    name: ClassVar[str]  # registry key, e.g. "sweagent_traj"
    domain: ClassVar[str]  # default domain; a catalog entry may override it
    description: ClassVar[str]  # one line: what becomes action / observation
    reads_directories: ClassVar[bool] = False  # True for run folders (terminal-bench)

    @abstractmethod
    def sniff(self, path: Path, head: str) -> bool:
        """True when this file (or folder) is in this reader's format.

        `head` is the first SNIFF_BYTES of the file decoded leniently ("" for a folder). Decide by
        content, with the file name only as a tie-breaker.
        """

    @abstractmethod
    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        """Yield the trajectories in `path`, and a `Quarantine` for each record that fails."""


JSONL_BOUNDARY = re.compile(r"\}\r?\n\{")  # "}" then a line break then "{": one object a line


def is_single_json_object(head: str) -> bool:
    """True when `head` opens one JSON object, not a JSONL stream of objects."""
    text = head.lstrip()
    return text.startswith("{") and JSONL_BOUNDARY.search(text) is None


def read_head(path: Path, size: int = SNIFF_BYTES) -> str:
    """First bytes of a file as text, undecodable bytes replaced (sniffing only, never content)."""
    if path.is_dir():
        return ""
    with path.open("rb") as handle:
        return handle.read(size).decode("utf-8", errors="replace")
