"""The declarative reader: a JSON / JSONL layout no reader knows, mapped in the catalog.

    [[source]]
    name = "my-agent-runs"
    domain = "swe"
    path = "runs/"
    [source.mapping]
    task = "annotationTrace[0].details.userPrompt"   # paths inside one trajectory record
    steps = "annotationTrace"                         # the list of steps
    action = "details.command"                        # paths inside one step
    observation = "details.output"
    exit_code = "details.exitCode"                    # optional: is_error, exit_code, tool_name
    keep_steps = { action = ["execute_terminal_command"] }  # optional: only steps matching
    action_kind = "shell"                             # optional constants for the whole source
    observation_format = "stdout"

A file is a JSONL stream of records (one trajectory a line), a JSON array of records, or one
JSON record; `records = "path"` picks the list of records inside a JSON document instead. Paths
are dotted keys with `[n]` list indices (`$.` in front is allowed). A required path that does not
resolve quarantines its record with a reason that names the mapping key, the path and the first
part of it that failed (and the keys that were there); the next record is read. A last step
with an action but no observation (a final submit) goes to metadata, as in every reader. Steps
that `keep_steps` leaves out are counted in metadata.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from sources.readers.base import (
    FormatError,
    Reader,
    as_text,
    is_single_json_object,
    iter_json_array,
    iter_jsonl,
    load_json,
    outcome_label,
    read_head,
)
from sources.schema import Quarantine, Trajectory, Turn

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")
_MISSING = object()


class MappingError(ValueError):
    """A mapping that cannot be used (names the key at fault)."""


@dataclass(frozen=True)
class Mapping:
    """Where a layout keeps each canonical field (see the module docstring)."""

    task: str
    steps: str
    action: str
    observation: str
    records: str | None = None
    is_error: str | None = None
    exit_code: str | None = None
    tool_name: str | None = None
    system_prompt: str | None = None
    outcome: str | None = None
    metadata: tuple[str, ...] = ()
    keep_steps: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    action_kind: str = "other"
    observation_format: str = "text"
    required: ClassVar[tuple[str, ...]] = ("task", "steps", "action", "observation")

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> Mapping:
        """Build from a catalog `[source.mapping]` table; unknown or missing keys are errors."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(table) - known)
        if unknown:
            raise MappingError(f"unknown mapping key(s) {unknown}; known: {sorted(known)}")
        missing = [key for key in cls.required if not isinstance(table.get(key), str)]
        if missing:
            raise MappingError(f"mapping needs string path(s) for {missing}")
        values = dict(table)
        for key, value in values.items():
            if key not in ("metadata", "keep_steps") and not isinstance(value, str):
                raise MappingError(f"mapping key {key!r} must be a string")
        metadata = values.get("metadata", [])
        if not isinstance(metadata, list) or not all(isinstance(p, str) for p in metadata):
            raise MappingError("metadata must be a list of paths")
        values["metadata"] = tuple(metadata)
        keep = values.get("keep_steps", {})
        if not isinstance(keep, dict):
            raise MappingError("keep_steps must be a table {path = value or [values]}")
        values["keep_steps"] = tuple(
            (path, tuple(v) if isinstance(v, list) else (v,)) for path, v in keep.items()
        )
        constants = ("action_kind", "observation_format")
        paths = [v for k, v in values.items() if isinstance(v, str) and k not in constants]
        for path in [*paths, *values["metadata"], *(p for p, _ in values["keep_steps"])]:
            parse_path(path)
        if "records" in values and any(isinstance(p, int) for p in parse_path(values["records"])):
            raise MappingError("records must be a path of object keys (no [n] index)")
        return cls(**values)


def parse_path(path: str) -> list[str | int]:
    """`a.b[2].c` -> ["a", "b", 2, "c"]; raises MappingError on anything else."""
    text = path[2:] if path.startswith("$.") else path.lstrip("$")
    parts: list[str | int] = []
    position = 0
    while position < len(text):
        if text[position] == "." and parts:
            position += 1
        match = _SEGMENT.match(text, position)
        if not match:
            raise MappingError(f"cannot parse path {path!r} at character {position}")
        parts.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        position = match.end()
    return parts


def resolve(value: Any, path: str, where: str) -> Any:
    """The value at `path` inside `value`, or _MISSING."""
    found, _ = lookup(value, path, where)
    return found


def lookup(value: Any, path: str, where: str) -> tuple[Any, str]:
    """(value at `path`, "") or (_MISSING, why: the first part that did not resolve, and where)."""
    at = where
    for part in parse_path(path):
        if isinstance(part, int):
            if not isinstance(value, list) or not -len(value) <= part < len(value):
                size = f"a list of {len(value)}" if isinstance(value, list) else _kind(value)
                return _MISSING, f"[{part}] not found at {at} ({size})"
            value, at = value[part], f"{at}[{part}]"
        else:
            if not isinstance(value, dict) or part not in value:
                keys = (
                    f"keys: {', '.join(sorted(value)[:12])}"
                    if isinstance(value, dict)
                    else _kind(value)
                )
                return _MISSING, f"key {part!r} not found at {at} ({keys})"
            value, at = value[part], f"{at}.{part}"
    return value, ""


def _kind(value: Any) -> str:
    return f"a {type(value).__name__}, not an object or list"


@dataclass
class _Record:
    """One trajectory record being mapped, and where it came from."""

    path: Path
    position: str
    data: Any
    metadata: dict[str, Any] = field(default_factory=dict)

    def required(self, mapping_key: str, path: str, value: Any, where: str) -> Any:
        found, why = lookup(value, path, where)
        if found is _MISSING:
            raise FormatError(
                self.path, self.position, f"mapping.{mapping_key} = {path!r} did not resolve: {why}"
            )
        return found


class MappedReader(Reader):
    """A catalog-declared layout: paths to task, steps, action, observation and flags."""

    name: ClassVar[str] = "mapped"
    domain: ClassVar[str] = "mcp"  # never used: a mapped source names its domain in the catalog
    description: ClassVar[str] = (
        "declarative: a JSON / JSONL layout mapped in the catalog ([source.mapping] paths to "
        "task, steps, action, observation, error flag, ...)"
    )

    def __init__(self, mapping: Mapping) -> None:
        self.mapping = mapping

    def sniff(self, path: Path, head: str) -> bool:
        return False  # only ever chosen by a catalog entry, never by detection

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        for position, data in self._records(path):
            if isinstance(data, FormatError):
                yield Quarantine(str(path), data.position, data.reason)
                continue
            record = _Record(path, position, data)
            try:
                yield self._trajectory(record)
            except FormatError as error:
                yield Quarantine(str(path), error.position, error.reason)

    def _records(self, path: Path) -> Iterator[tuple[str, Any]]:
        head = read_head(path).lstrip()
        if self.mapping.records is not None:
            prefix = ".".join(str(p) for p in parse_path(self.mapping.records)) + ".item"
            for index, item in iter_json_array(path, prefix):
                yield f"$.{self.mapping.records}[{index}]", item
        elif head.startswith("["):
            for index, item in iter_json_array(path):
                yield f"$[{index}]", item
        elif is_single_json_object(head):
            yield "$", load_json(path)  # one record a file: one trajectory in memory anyway
        else:
            for line_number, item in iter_jsonl(path):
                yield f"line {line_number}", item

    def _trajectory(self, record: _Record) -> Trajectory:
        m = self.mapping
        root = "$"
        task = as_text(record.required("task", m.task, record.data, root))
        steps = record.required("steps", m.steps, record.data, root)
        if not isinstance(steps, list):
            raise FormatError(
                record.path, record.position, f"mapping.steps = {m.steps!r} is not a list"
            )
        turns: list[Turn] = []
        left_out = 0
        for index, step in enumerate(steps):
            where = f"{root}.{m.steps}[{index}]"
            if not self._kept(step):
                left_out += 1
                continue
            action = as_text(record.required("action", m.action, step, where))
            observation, why = lookup(step, m.observation, where)
            if observation is _MISSING and index == len(steps) - 1:
                record.metadata["final_action"] = action
                continue
            if observation is _MISSING:
                reason = f"mapping.observation = {m.observation!r} did not resolve: {why}"
                raise FormatError(record.path, record.position, reason)
            turns.append(self._turn(step, action, as_text(observation)))
        if left_out:
            record.metadata["steps_left_out"] = left_out
        for path in m.metadata:
            value = resolve(record.data, path, root)
            if value is not _MISSING:
                record.metadata[path] = value
        return Trajectory(
            task=task,
            turns=turns,
            position=record.position,
            outcome=self._outcome(record.data),
            system_prompt=self._optional_text(record.data, m.system_prompt),
            metadata=record.metadata,
        )

    def _kept(self, step: Any) -> bool:
        return all(resolve(step, path, "$") in allowed for path, allowed in self.mapping.keep_steps)

    def _turn(self, step: Any, action: str, observation: str) -> Turn:
        m = self.mapping
        error = resolve(step, m.is_error, "$") if m.is_error else None
        exit_code = resolve(step, m.exit_code, "$") if m.exit_code else None
        tool_name = self._optional_text(step, m.tool_name)
        return Turn(
            action=action,
            observation=observation,
            action_kind=m.action_kind,
            observation_format=m.observation_format,
            tool_name=tool_name,
            exit_code=exit_code if type(exit_code) is int else None,
            is_error=error if isinstance(error, bool) else None,
        )

    @staticmethod
    def _optional_text(value: Any, path: str | None) -> str | None:
        found = resolve(value, path, "$") if path else _MISSING
        return None if found is _MISSING or found is None else as_text(found)

    def _outcome(self, data: Any) -> str:
        value = resolve(data, self.mapping.outcome, "$") if self.mapping.outcome else None
        return outcome_label(value, scores=False)
