"""Secret and PII scrubbing: raw tables -> scrubbed tables + a findings table (no secret in it).

Each credential, e-mail address, phone number or IP address (quality.secrets) is replaced with
a typed placeholder numbered within its trajectory: the same value gets the same placeholder in
the task, the system prompt, the metadata and every turn (`<SECRET_1>` stays `<SECRET_1>` when
the agent pastes the key again), so a world model still learns that the key it was given is the
key the server checks. Numbers restart in every trajectory, so no placeholder links two
trajectories.

    scrub_partition(trajectories, turns, out_trajectories, out_turns, out_findings)

streams the two raw tables of a partition in lockstep (ingest writes them in the same order),
one trajectory at a time, and counts what it replaced per kind and field.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from quality.secrets import Finding, find_sensitive, gated_kinds
from quality.tables import SCRUB_FINDINGS
from sources.storage import ParquetSink

TRAJECTORY_TEXT_FIELDS = ("task", "system_prompt", "metadata")
TURN_TEXT_FIELDS = ("action", "observation")
READ_ROWS = 2048

class Placeholders:
    """Typed placeholders numbered within one trajectory: one value, one placeholder."""

    def __init__(self) -> None:
        self._assigned: dict[tuple[str, str], str] = {}
        self._next: Counter[str] = Counter()

    def for_value(self, placeholder_class: str, value: str) -> str:
        key = (placeholder_class, value)
        if key not in self._assigned:
            self._next[placeholder_class] += 1
            self._assigned[key] = f"<{placeholder_class}_{self._next[placeholder_class]}>"
        return self._assigned[key]


@dataclass
class ScrubStats:
    """Counters recorded while scrubbing: rows, replaced values per kind and per field."""

    trajectories: int = 0
    turns: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    fields: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def replaced(self) -> int:
        return sum(self.kinds.values())

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.seconds if self.seconds else 0.0


Replacement = tuple[str, str]  # (kind, placeholder)


def scrub_text(text: str | None, placeholders: Placeholders, kinds: Sequence[str] | None = None
               ) -> tuple[str | None, list[Replacement]]:
    """`text` with every finding replaced, and what was replaced (kind, placeholder), in order.
    `kinds`: the kinds whose gate the text passed (`gated_kinds`), when known."""
    if not text or kinds == ():
        return text, []
    return replace_findings(text, find_sensitive(text, kinds), placeholders)


def replace_findings(text: str, findings: Sequence[Finding], placeholders: Placeholders
                     ) -> tuple[str, list[Replacement]]:
    """`text` with each of `findings` (from `find_sensitive`) replaced by its placeholder."""
    if not findings:
        return text, []
    pieces, replaced, position = [], [], 0
    for finding in findings:
        placeholder = placeholders.for_value(finding.placeholder_class,
                                             text[finding.start:finding.end])
        pieces += [text[position:finding.start], placeholder]
        replaced.append((finding.kind, placeholder))
        position = finding.end
    pieces.append(text[position:])
    return "".join(pieces), replaced


def scrub_partition(trajectories_path: Path, turns_path: Path, out_trajectories: Path,
                    out_turns: Path, out_findings: Path) -> ScrubStats:
    """Write scrubbed copies of one partition's trajectories and turns, and its findings."""
    stats = ScrubStats()
    started = time.perf_counter()
    turn_rows = _rows(turns_path, TURN_TEXT_FIELDS)
    with (ParquetSink(out_trajectories, pq.read_schema(trajectories_path)) as trajectory_sink,
          ParquetSink(out_turns, pq.read_schema(turns_path)) as turn_sink,
          ParquetSink(out_findings, SCRUB_FINDINGS.schema) as finding_sink):
        for trajectory, trajectory_gates in _rows(trajectories_path, TRAJECTORY_TEXT_FIELDS):
            placeholders = Placeholders()
            turns = [_next_turn(turn_rows, trajectory, turns_path)
                     for _ in range(trajectory["n_turns"])]
            for row, gates, turn_index in [(trajectory, trajectory_gates, None)] + [
                    (t, g, t["turn_index"]) for t, g in turns]:
                names = TRAJECTORY_TEXT_FIELDS if turn_index is None else TURN_TEXT_FIELDS
                for name, kinds in zip(names, gates, strict=True):
                    row[name], replaced = _scrub_field(row, name, kinds, placeholders)
                    stats.fields[name] += len(replaced)
                    if not replaced:  # most fields: nothing found, nothing to record
                        continue
                    stats.kinds.update(kind for kind, _ in replaced)
                    finding_sink.write_many(
                        {"domain": trajectory["domain"],
                         "trajectory_id": trajectory["trajectory_id"],
                         "turn_index": turn_index, "field": name, "kind": kind,
                         "placeholder": placeholder}
                        for kind, placeholder in replaced)
            trajectory_sink.write(trajectory)
            turn_sink.write_many(turn for turn, _ in turns)
            stats.trajectories += 1
            stats.turns += len(turns)
        leftover, _ = next(turn_rows, (None, ()))
        if leftover is not None:
            raise ValueError(f"{turns_path}: turn of trajectory {leftover['trajectory_id']} "
                             f"has no row in {trajectories_path}")
    stats.seconds = time.perf_counter() - started
    return stats


def _scrub_field(row: dict[str, Any], name: str, kinds: tuple[str, ...],
                 placeholders: Placeholders) -> tuple[str | None, list[Replacement]]:
    scrubbed, replaced = scrub_text(row[name], placeholders, kinds)
    if name == "metadata" and replaced:
        json.loads(scrubbed)  # a placeholder never breaks the JSON; if it does, fail loudly
    return scrubbed, replaced


Gated = tuple[dict[str, Any], tuple[tuple[str, ...], ...]]  # a row, its text fields' gates


def _rows(path: Path, text_fields: Sequence[str]) -> Iterator[Gated]:
    """The rows of a Parquet file, each with the kinds its text fields' gates let through
    (computed for a whole batch at once), in the order of `text_fields`."""
    for batch in pq.ParquetFile(path).iter_batches(batch_size=READ_ROWS):
        gates = [gated_kinds(batch.column(name).to_pylist()) for name in text_fields]
        yield from zip(batch.to_pylist(), zip(*gates, strict=True), strict=True)


def _next_turn(turn_rows: Iterator[Gated], trajectory: dict[str, Any],
               turns_path: Path) -> Gated:
    """The next turn row, which must belong to `trajectory` (tables written in lockstep)."""
    turn, gates = next(turn_rows, (None, ()))
    if turn is None or turn["trajectory_id"] != trajectory["trajectory_id"]:
        found = "the end of the file" if turn is None else f"trajectory {turn['trajectory_id']}"
        raise ValueError(f"{turns_path}: expected the turns of trajectory "
                         f"{trajectory['trajectory_id']} (n_turns {trajectory['n_turns']}) "
                         f"next, found {found}")
    return turn, gates


def residual_findings(path: Path, text_fields: Sequence[str]) -> Counter[str]:
    """What a second pass still finds in the text fields of a (scrubbed) table, per kind."""
    found: Counter[str] = Counter()
    for row, gates in _rows(path, text_fields):
        for name, kinds in zip(text_fields, gates, strict=True):
            found.update(f.kind for f in find_sensitive(row[name], kinds))
    return found
