"""OpenHands file store: one session folder, one event per file.

OpenHands' local file store (`~/.openhands/sessions/<session id>/`) writes each event of a
conversation as its own file, named by the event id:

    63b4315947a049e2b7a51249b3d4fcc3/events/0.json   {"id": 0, "source": "environment",
                                                      "observation": "agent_state_changed", ...}
    63b4315947a049e2b7a51249b3d4fcc3/events/4.json   {"id": 4, "source": "user",
                                                      "action": "message", "args": {...}}
    63b4315947a049e2b7a51249b3d4fcc3/events/8.json   {"id": 8, "action": "run_ipython", ...}
    63b4315947a049e2b7a51249b3d4fcc3/events/9.json   {"id": 9, "cause": 8, "observation": ...}

Each file alone is no trajectory; the session folder is one, read as a unit: the events in the
order of their numbers, paired exactly as the OpenHands event-list reader pairs them (an action
with the observation whose `cause` is its id). Positions name the file: `events[8]` is
`events/8.json`. A file that is not one JSON event object is quarantined with its reason and
the rest of the session is still read; other files of the session folder (metadata, agent
state) are listed in metadata.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sources.readers.base import FormatError, Reader, load_json
from sources.readers.openhands import events_trajectory
from sources.schema import Quarantine, Trajectory

EVENTS = "events"
_EVENT_FILE = re.compile(r"^(\d+)\.json$")


def event_files(folder: Path) -> list[tuple[int, Path]]:
    """The numbered event files of a session folder, in event order."""
    events = folder / EVENTS
    if not events.is_dir():
        return []
    numbered = [(_EVENT_FILE.match(p.name), p) for p in events.iterdir() if p.is_file()]
    return sorted((int(match.group(1)), path) for match, path in numbered if match)


class OpenHandsFileStoreReader(Reader):
    """An OpenHands session folder of the file store: its `events/N.json` as one trajectory."""

    name: ClassVar[str] = "openhands_filestore"
    domain: ClassVar[str] = "swe"
    description: ClassVar[str] = (
        "OpenHands session folder (events/<id>.json, one event a file): paired like the "
        "OpenHands event list, action = command / code / tool call, observation = its answer"
    )
    reads_directories: ClassVar[bool] = True

    def sniff(self, path: Path, head: str) -> bool:
        if not path.is_dir():
            return False
        files = event_files(path)
        if not files:
            return False
        first = files[0][1].read_bytes()[:2000].decode("utf-8", errors="replace")
        return first.lstrip().startswith("{") and '"id"' in first and (
            '"action"' in first or '"observation"' in first)

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        files = event_files(path)
        if not files:
            raise FormatError(path, EVENTS, "no numbered event files (events/<id>.json)")
        broken: list[Quarantine] = []

        def events() -> Iterator[tuple[int, Any]]:
            for number, file in files:
                try:
                    event = load_json(file)
                except FormatError as error:
                    broken.append(Quarantine(str(path), f"{EVENTS}[{number}] {error.position}",
                                             f"{EVENTS}/{file.name}: {error.reason}"))
                    continue
                if not isinstance(event, dict):
                    broken.append(Quarantine(str(path), f"{EVENTS}[{number}]",
                                             f"{EVENTS}/{file.name}: an event must be an object"))
                    continue
                yield number, event

        for item in events_trajectory(path, "folder", events(), EVENTS, None):
            if isinstance(item, Trajectory):
                item.metadata["session_id"] = path.name
                item.metadata["event_files"] = len(files)
                others = sorted(p.name for p in path.iterdir() if p.name != EVENTS)
                if others:
                    item.metadata["other_session_files"] = others
            yield item
        yield from broken
