"""Secret and PII scrubbing: raw tables -> scrubbed tables + a findings table (no secret in it).

Each credential, e-mail address, phone number or IP address (quality.secrets) is replaced with
a typed placeholder numbered within its trajectory: the same value gets the same placeholder in
the task, the system prompt, the metadata and every turn (`<SECRET_1>` stays `<SECRET_1>` when
the agent pastes the key again), so a world model still learns that the key it was given is the
key the server checks. Numbers restart in every trajectory, so no placeholder links two
trajectories.

    scrub_partition(trajectories, turns, out_trajectories, out_turns, out_findings)

streams the two raw tables of a partition in lockstep (ingest writes them in the same order),
a batch of trajectories (READ_ROWS) and their turns at a time (turns read GATE_ROWS at a time),
as Arrow columns: only the texts that pass a gate reach Python. It counts what it replaced
per kind and field.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from quality.scrub_copy import CopyingSink
from quality.secrets import Finding, find_sensitive, gated_kinds
from quality.tables import SCRUB_FINDINGS
from sources.storage import ParquetSink

TRAJECTORY_TEXT_FIELDS = ("task", "system_prompt", "metadata")
TURN_TEXT_FIELDS = ("action", "observation")
READ_ROWS = 2048
# Turns are read and gated 16,384 at a time: a gate pass over a column costs about 4 ms a call
# beside its texts (polars compiles each kind's gate again for every call), which over
# 2,048-row batches was about a third of the gates' CPU (148,483 turns: 1.6-2.0 -> 0.9-1.0 s).
GATE_ROWS = 16_384


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

    def read(self, names: Sequence[str]) -> None:
        """Count fields as read: listed with 0 values replaced until one is found."""
        for name in names:
            self.fields.setdefault(name, 0)

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
    """Write scrubbed copies of one partition's trajectories and turns, and its findings.

    The rows stay Arrow batches: a batch of trajectories and their turns goes through the gate
    pass (only a text that passes a gate, `gated_kinds`, a batch of a column at once, is read
    into Python and scrubbed) and then the write pass (the batch with the cells that changed
    replaced, in the row groups a row-by-row copy has: ParquetSink)."""
    stats = ScrubStats()
    started = time.perf_counter()
    turns = _TurnStream(turns_path)
    with (CopyingSink(trajectories_path, out_trajectories) as trajectory_sink,
          CopyingSink(turns_path, out_turns) as turn_sink,
          ParquetSink(out_findings, SCRUB_FINDINGS.schema) as finding_sink):
        for trajectories, trajectory_gates in _gated_batches(trajectories_path,
                                                             TRAJECTORY_TEXT_FIELDS):
            n_turns = trajectories["n_turns"].to_numpy(zero_copy_only=False).astype(np.int64)
            batch_turns, turn_gates = turns.take(trajectories["trajectory_id"], n_turns)
            batch = _Batch(trajectories, batch_turns, trajectory_gates, turn_gates,
                           np.r_[0, np.cumsum(n_turns)])
            changed, findings = _gate_pass(batch, stats)
            _write_pass(batch, changed, trajectory_sink, turn_sink)
            finding_sink.write_many(findings)
            stats.trajectories += trajectories.num_rows
            stats.turns += batch_turns.num_rows
        turns.check_exhausted(trajectories_path)
    stats.seconds = time.perf_counter() - started
    return stats


Gates = list[list[tuple[str, ...]]]  # per text field, per row: the kinds whose gate it passed
Changed = dict[tuple[str, str], dict[int, str]]  # (table, field) -> row -> scrubbed text


@dataclass(frozen=True)
class _Batch:
    """A batch of trajectories and their turns (first_turn[k]: the row of trajectory k's first
    turn; first_turn[-1]: the turns in all), with each text field's gates."""

    trajectories: pa.Table
    turns: pa.Table
    trajectory_gates: Gates
    turn_gates: Gates
    first_turn: np.ndarray


def _gate_pass(batch: _Batch, stats: ScrubStats) -> tuple[Changed, list[dict[str, Any]]]:
    """Scrub the texts of a batch that passed a gate, a trajectory at a time, its placeholders
    numbered over its own texts in order (task, system prompt, metadata, then each turn's
    action and observation). Returns the new text of every changed cell and one findings row
    per value replaced; counts every field read (found or not) and every replacement."""
    for names, table in ((TRAJECTORY_TEXT_FIELDS, batch.trajectories),
                         (TURN_TEXT_FIELDS, batch.turns)):
        if table.num_rows:
            stats.read(names)
    changed: Changed = {}
    findings: list[dict[str, Any]] = []
    for k in _trajectories_to_read(batch.trajectory_gates, batch.turn_gates, batch.first_turn):
        placeholders = Placeholders()
        cells = [("trajectories", name, k, gates[k]) for name, gates in
                 zip(TRAJECTORY_TEXT_FIELDS, batch.trajectory_gates, strict=True)]
        cells += [("turns", name, row, gates[row]) for row in
                  range(batch.first_turn[k], batch.first_turn[k + 1]) for name, gates in
                  zip(TURN_TEXT_FIELDS, batch.turn_gates, strict=True)]
        for table_name, name, row, kinds in cells:
            if not kinds:  # no gate passed: nothing to find (scrub_text's shortcut)
                continue
            table = batch.trajectories if table_name == "trajectories" else batch.turns
            scrubbed, replaced = _scrub_field(table[name][row].as_py(), name, kinds,
                                              placeholders)
            if not replaced:
                continue
            changed.setdefault((table_name, name), {})[row] = scrubbed
            stats.fields[name] += len(replaced)
            stats.kinds.update(kind for kind, _ in replaced)
            turn_index = batch.turns["turn_index"][row].as_py() if table_name == "turns" else None
            findings += [{"domain": batch.trajectories["domain"][k].as_py(),
                          "trajectory_id": batch.trajectories["trajectory_id"][k].as_py(),
                          "turn_index": turn_index, "field": name, "kind": kind,
                          "placeholder": placeholder} for kind, placeholder in replaced]
    return changed, findings


def _write_pass(batch: _Batch, changed: Changed, trajectory_sink: CopyingSink,
                turn_sink: CopyingSink) -> None:
    """Write the batch's trajectories and turns, each column with changed cells rebuilt with
    them in place (every other column, and the row groups, as a plain copy; a table with no
    changed cell at all as a copy of its raw file: quality/scrub_copy.py)."""
    for names, table, sink, table_name in (
            (TRAJECTORY_TEXT_FIELDS, batch.trajectories, trajectory_sink, "trajectories"),
            (TURN_TEXT_FIELDS, batch.turns, turn_sink, "turns")):
        touched = [name for name in names if (table_name, name) in changed]
        for name in touched:
            table = _replaced(table, name, changed[(table_name, name)])
        sink.write_table(table, changed=bool(touched))


def _scrub_field(text: str | None, name: str, kinds: tuple[str, ...],
                 placeholders: Placeholders) -> tuple[str | None, list[Replacement]]:
    scrubbed, replaced = scrub_text(text, placeholders, kinds)
    if name == "metadata" and replaced:
        json.loads(scrubbed)  # a placeholder never breaks the JSON; if it does, fail loudly
    return scrubbed, replaced


def _trajectories_to_read(trajectory_gates: list[list[tuple[str, ...]]],
                          turn_gates: list[list[tuple[str, ...]]], first_turn: np.ndarray
                          ) -> list[int]:
    """The trajectories of a batch with a text (of theirs or of a turn) that passed a gate."""
    any_turn = np.zeros(int(first_turn[-1]), dtype=bool)
    for gates in turn_gates:
        any_turn[[row for row, kinds in enumerate(gates) if kinds]] = True
    passed = np.r_[0, np.cumsum(any_turn)]  # turns that passed a gate, before each position
    read = set(np.flatnonzero(passed[first_turn[1:]] > passed[first_turn[:-1]]).tolist())
    for gates in trajectory_gates:
        read.update(row for row, kinds in enumerate(gates) if kinds)
    return sorted(read)


def _replaced(table: pa.Table, name: str, cells: dict[int, str]) -> pa.Table:
    """`table` with column `name`'s cells at the given rows replaced: the unchanged runs as
    slices of the old chunks (no copy; the sink joins the chunks when it writes a row group)."""
    column = table[name]
    chunks: list[pa.Array] = []
    position = 0
    for row in sorted(cells):
        chunks += column.slice(position, row - position).chunks
        chunks.append(pa.array([cells[row]], column.type))
        position = row + 1
    chunks += column.slice(position).chunks
    new = pa.chunked_array(chunks, column.type)
    return table.set_column(table.schema.get_field_index(name), table.schema.field(name), new)


Gated = tuple[pa.Table, Gates]  # a batch, its text fields' gates


def _gated_batches(path: Path, text_fields: Sequence[str], rows: int = READ_ROWS
                   ) -> Iterator[Gated]:
    """The row batches of a Parquet file (`rows` rows each), each with the kinds each row's
    text fields pass (per field, in the order of `text_fields`)."""
    for batch in pq.ParquetFile(path).iter_batches(batch_size=rows):
        yield pa.Table.from_batches([batch]), _fields_gated(batch, text_fields)


def _fields_gated(batch: pa.RecordBatch, text_fields: Sequence[str]) -> Gates:
    """Each text field's gates, the fields gated as one column (a text's gates are its own,
    and each call of `gated_kinds` compiles its gates again: one call a batch, not a field)."""
    kinds = gated_kinds(pa.chunked_array(
        [batch.column(name).cast(pa.large_string()) for name in text_fields], pa.large_string()))
    rows = batch.num_rows
    return [kinds[i * rows:(i + 1) * rows] for i in range(len(text_fields))]


class _TurnStream:
    """The turns of a partition, in order, handed out by trajectory: the raw tables are
    written in lockstep (each trajectory's n_turns rows, in trajectory order)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._batches = _gated_batches(path, TURN_TEXT_FIELDS, GATE_ROWS)
        self._empty = pq.read_schema(path).empty_table()
        self._pending: list[Gated] = []
        self._rows = 0

    def take(self, trajectory_ids: pa.ChunkedArray, n_turns: np.ndarray
             ) -> tuple[pa.Table, list[list[tuple[str, ...]]]]:
        """The next turns, which must be those of `trajectory_ids` (n_turns each), and their
        gates."""
        count = int(n_turns.sum())
        while self._rows < count:
            batch = next(self._batches, None)
            if batch is None:
                break
            self._pending.append(batch)
            self._rows += batch[0].num_rows
        table = pa.concat_tables([self._empty, *(t for t, _ in self._pending)])
        gates = [list(chain.from_iterable(g[i] for _, g in self._pending))
                 for i in range(len(TURN_TEXT_FIELDS))]
        taken = table.slice(0, count)
        expected = np.repeat(np.asarray(trajectory_ids.to_pylist(), dtype=object), n_turns)
        found = np.asarray(taken["trajectory_id"].to_pylist(), dtype=object)
        wrong = np.flatnonzero(expected[:len(found)] != found)
        if len(wrong) or len(found) < count:
            row = int(wrong[0]) if len(wrong) else len(found)
            k = int(np.searchsorted(np.cumsum(n_turns), row, side="right"))
            what = f"trajectory {found[row]}" if row < len(found) else "the end of the file"
            raise ValueError(f"{self.path}: expected the turns of trajectory "
                             f"{trajectory_ids[k].as_py()} (n_turns {n_turns[k]}) next, "
                             f"found {what}")
        rest = table.slice(count)
        self._pending = [(rest, [g[count:] for g in gates])] if rest.num_rows else []
        self._rows = rest.num_rows
        return taken, [g[:count] for g in gates]

    def check_exhausted(self, trajectories_path: Path) -> None:
        """No turn may be left once every trajectory has taken its own."""
        leftover = self._pending[0][0] if self._pending else None
        if leftover is None:
            batch = next(self._batches, None)
            leftover = batch[0] if batch is not None else None
        if leftover is not None:
            raise ValueError(f"{self.path}: turn of trajectory "
                             f"{leftover['trajectory_id'][0].as_py()} has no row in "
                             f"{trajectories_path}")


def residual_findings(path: Path, text_fields: Sequence[str]) -> Counter[str]:
    """What a second pass still finds in the text fields of a (scrubbed) table, per kind."""
    found: Counter[str] = Counter()
    for batch, gates in _gated_batches(path, text_fields, GATE_ROWS):
        for name, field_gates in zip(text_fields, gates, strict=True):
            texts = batch[name]
            for row, kinds in enumerate(field_gates):
                if kinds:
                    found.update(f.kind for f in find_sensitive(texts[row].as_py(), kinds))
    return found
