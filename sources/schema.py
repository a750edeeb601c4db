"""The canonical trace schema: a row per trajectory, a row per turn, a row per quarantined record.

Every reader in `sources/` produces `Trajectory` objects (with their `Turn`s) or `Quarantine`
records; `sources.ingest` stamps them with source, domain and content-hash IDs and turns them
into rows of the pyarrow schemas below. A turn is one (action, observation) pair: what the agent
sent, and what the environment said back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

DOMAINS: tuple[str, ...] = ("mcp", "search", "terminal", "swe", "android", "web", "os")
OUTCOMES: tuple[str, ...] = ("success", "failure", "unknown")

# Free vocabularies, listed so readers agree on spelling; a reader may add a new value.
ACTION_KINDS: tuple[str, ...] = (
    "shell", "tool_call", "click", "type", "scroll", "navigate", "key", "search", "open",
    "code", "edit", "submit", "message", "other",
)
OBSERVATION_FORMATS: tuple[str, ...] = (
    "stdout", "terminal_screen", "json_rpc", "tool_result_json", "tool_result_text", "a11y_tree",
    "ui_elements", "html", "search_results", "page_text", "text",
)


@dataclass
class Turn:
    """One action the agent took and what the environment returned."""

    action: str
    observation: str
    action_kind: str
    observation_format: str
    tool_name: str | None = None
    exit_code: int | None = None
    is_error: bool | None = None


@dataclass
class Trajectory:
    """One episode as a reader saw it, before IDs and source names are attached."""

    task: str
    turns: list[Turn]
    position: str  # where in the source file: "$", "$[3]", "line 12", "folder"
    outcome: str = "unknown"
    system_prompt: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Quarantine:
    """A file or record that could not be read, with where and why."""

    source_path: str
    position: str
    reason: str


TURN_SCHEMA = pa.schema(
    [
        pa.field("trajectory_id", pa.string(), nullable=False),
        pa.field("turn_index", pa.int32(), nullable=False),
        pa.field("domain", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("source_format", pa.string(), nullable=False),
        pa.field("action", pa.large_string(), nullable=False),
        pa.field("action_kind", pa.string(), nullable=False),
        pa.field("observation", pa.large_string(), nullable=False),
        pa.field("observation_format", pa.string(), nullable=False),
        pa.field("tool_name", pa.string()),
        pa.field("exit_code", pa.int32()),
        pa.field("is_error", pa.bool_()),
    ]
)

TRAJECTORY_SCHEMA = pa.schema(
    [
        pa.field("trajectory_id", pa.string(), nullable=False),
        pa.field("content_hash", pa.string(), nullable=False),
        pa.field("domain", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("source_format", pa.string(), nullable=False),
        pa.field("source_path", pa.string(), nullable=False),
        pa.field("source_position", pa.string(), nullable=False),
        pa.field("task", pa.large_string(), nullable=False),
        pa.field("system_prompt", pa.large_string()),
        pa.field("n_turns", pa.int32(), nullable=False),
        pa.field("outcome", pa.string(), nullable=False),
        pa.field("metadata", pa.large_string(), nullable=False),
    ]
)

QUARANTINE_SCHEMA = pa.schema(
    [
        pa.field("domain", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("source_format", pa.string(), nullable=False),
        pa.field("source_path", pa.string(), nullable=False),
        pa.field("position", pa.string(), nullable=False),
        pa.field("reason", pa.large_string(), nullable=False),
    ]
)

# Column descriptions, shown in README and in Dagster's column schema.
TURN_COLUMN_DOCS: dict[str, str] = {
    "trajectory_id": "content hash of (source, file, position, content); stable across runs",
    "turn_index": "0-based position of the turn in its trajectory",
    "domain": "one of mcp, search, terminal, swe, android, web, os",
    "source": "catalog name of the source",
    "source_format": "reader that parsed it (see `worldtrace formats`)",
    "action": "text the agent sent to the environment",
    "action_kind": "shell, tool_call, click, type, search, code, ...",
    "observation": "text the environment returned",
    "observation_format": "stdout, json_rpc, tool_result_json, a11y_tree, ui_elements, html, ...",
    "tool_name": "tool or command name where the format has one",
    "exit_code": "process exit code where the format records one",
    "is_error": "error flag where the format records one",
}
QUARANTINE_COLUMN_DOCS: dict[str, str] = {
    "domain": "partition the source feeds",
    "source": "catalog name of the source",
    "source_format": "reader that tried it (or `unknown` when no reader claimed the file)",
    "source_path": "file or folder that could not be read, relative to the source's root",
    "position": "where in it: line, byte offset or JSON path",
    "reason": "why: the reader's error, naming what it expected",
}
TRAJECTORY_COLUMN_DOCS: dict[str, str] = {
    "trajectory_id": "content hash; key shared with the turn rows",
    "content_hash": "hash of task + turns only: equal for exact duplicates",
    "domain": "one of the seven domains",
    "source": "catalog name of the source",
    "source_format": "reader that parsed it",
    "source_path": "file or folder the trajectory came from",
    "source_position": "where in that file: $, $[3], line 12, ...",
    "task": "the instruction c given to the agent",
    "system_prompt": "the agent's system prompt when the format has one",
    "n_turns": "number of turn rows",
    "outcome": "success / failure / unknown, from the format's own label",
    "metadata": "JSON of whatever else the format carries (model, agent, timings, costs)",
}
