"""Tables of trajectories: a local Parquet file, or a Hugging Face `datasets` save_to_disk folder.

    trajectory_id | turn_index | action      | observation         | action_kind | ... | task
    t-001         | 0          | ls /app     | main.py\\nREADME.md | shell       | ... | Fix it
    t-001         | 1          | cat main.py | import sys ...      | shell       | ... | Fix it
  or
    messages: [{"role": "user", "content": "..."}, {"role": "assistant", "tool_calls": [...]}, ...]

Two row shapes are read, decided by the columns:
  * canonical turn rows (trajectory_id, turn_index, action, observation; optional action_kind,
    observation_format, tool_name, exit_code, is_error): consecutive rows with the same
    trajectory_id are one trajectory, turn_index must run 0, 1, 2, ... and each trajectory_id
    must appear in one run (the table sorted by trajectory). Other columns are trajectory-level,
    taken from the first row: task, outcome, system_prompt, a `metadata` JSON string, and the
    rest (domain, source, ...) into metadata. A trajectory that breaks these rules is quarantined.
    Missing action_kind / observation_format read as "other" / "text".
  * chat rows (a `messages` column): each row is one conversation, read by
    `sources.readers.chat_messages` like chat_jsonl (optional task / domain / outcome columns).
The table is streamed record batch by record batch with pyarrow (Parquet row groups, or the
memory-mapped Arrow shards listed in the folder's state.json), so only one trajectory is held in
memory. position is "row N" (0-based row of the trajectory's first row), prefixed with the split
name for a DatasetDict folder ("train row N"). When the catalog names this format for a plain
folder of Parquet shards, the shards are read in name order as one table ("part-1.parquet row N");
auto-detection leaves such folders alone and reads each Parquet file on its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from sources.readers.base import FormatError, Reader
from sources.readers.chat_messages import chat_record_items
from sources.schema import OUTCOMES, Quarantine, Trajectory, Turn

TURN_KEYS = ("trajectory_id", "turn_index", "action", "observation")
TURN_FIELDS = ("action_kind", "observation_format", "tool_name", "exit_code", "is_error")
BATCH_ROWS = 1024


def _is_dataset_folder(path: Path) -> bool:
    return path.is_dir() and (path / "state.json").is_file() and any(path.glob("*.arrow"))


def _split_folders(path: Path) -> list[tuple[str, Path]]:
    """(split name, folder) pairs: one ("", path) for a Dataset, one per split for a DatasetDict."""
    if _is_dataset_folder(path):
        return [("", path)]
    index = path / "dataset_dict.json"
    if path.is_dir() and index.is_file():
        try:
            splits = json.loads(index.read_text(encoding="utf-8")).get("splits", [])
        except (ValueError, AttributeError):
            return []
        return [(str(s), path / str(s)) for s in splits if _is_dataset_folder(path / str(s))]
    return []


def _arrow_files(folder: Path) -> list[Path]:
    """The shards in the order state.json lists them (save_to_disk order), else sorted names."""
    try:
        state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        return [folder / entry["filename"] for entry in state["_data_files"]]
    except (OSError, ValueError, KeyError, TypeError):
        return sorted(folder.glob("*.arrow"))


def _arrow_schema(file: Path) -> pa.Schema:
    with pa.memory_map(str(file)) as source:
        return pa.ipc.open_stream(source).schema


def _jsonable(value: Any) -> Any:
    """Arrow values as JSON values: timestamps, decimals and bytes become strings."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def _shape(schema: pa.Schema) -> str | None:
    names = set(schema.names)
    if all(key in names for key in TURN_KEYS):
        return "turns"
    if "messages" in names:
        return "chat"
    return None


class TableRowsReader(Reader):
    """Parquet files and `datasets` folders of canonical turn rows or chat `messages` rows."""

    name: ClassVar[str] = "table_rows"
    generic: ClassVar[bool] = True  # claims only what no specific reader recognises
    domain: ClassVar[str] = "mcp"
    description: ClassVar[str] = (
        "canonical turn rows (action / observation columns, grouped by trajectory_id) or chat "
        "`messages` rows (one turn per tool call), from Parquet or a datasets save_to_disk folder"
    )
    reads_directories: ClassVar[bool] = True

    def sniff(self, path: Path, head: str) -> bool:
        try:
            if path.is_dir():
                folders = _split_folders(path)
                files = _arrow_files(folders[0][1]) if folders else []
                return bool(files) and _shape(_arrow_schema(files[0])) is not None
            if not head.startswith("PAR1"):
                return False
            return _shape(pq.read_schema(path)) is not None
        except (OSError, pa.ArrowException):
            return False

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        if path.is_file():
            yield from self._read_table(path, self._parquet_batches(path, ""))
            return
        folders = _split_folders(path)
        if folders:
            for split, folder in folders:
                yield from self._read_table(path, self._arrow_batches(folder, split))
            return
        # A folder of Parquet shards (only when the catalog names this format for the folder):
        # read as one table, so a trajectory may continue from one shard into the next.
        shards = sorted(path.rglob("*.parquet"))
        if not shards:
            raise FormatError(path, "folder", "neither a datasets save_to_disk folder nor a "
                                              "folder of Parquet files")

        def all_shards() -> Iterator[tuple[str, pa.RecordBatch]]:
            for shard in shards:
                yield from self._parquet_batches(shard, shard.relative_to(path).as_posix())

        yield from self._read_table(path, all_shards())

    @staticmethod
    def _parquet_batches(file: Path, label: str) -> Iterator[tuple[str, pa.RecordBatch]]:
        try:
            parquet = pq.ParquetFile(file)
            for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
                yield label, batch
        except (OSError, pa.ArrowException) as error:
            raise FormatError(file, "file", f"not a readable Parquet file: {error}") from None

    @staticmethod
    def _arrow_batches(folder: Path, split: str) -> Iterator[tuple[str, pa.RecordBatch]]:
        for file in _arrow_files(folder):
            try:
                with pa.memory_map(str(file)) as source:
                    for batch in pa.ipc.open_stream(source):
                        yield split, batch
            except (OSError, pa.ArrowException) as error:
                raise FormatError(file, "file", f"unreadable Arrow shard: {error}") from None

    def _read_table(self, path: Path, batches: Iterator[tuple[str, pa.RecordBatch]]
                    ) -> Iterator[Trajectory | Quarantine]:
        """Rows of (label, batch) pairs -> trajectories; rows are numbered from 0 per label."""
        shape: str | None = None
        group: list[dict[str, Any]] = []
        group_position = ""
        seen: set[str] = set()
        label, row = None, 0
        for batch_label, batch in batches:
            if batch_label != label:
                label, row = batch_label, 0
            prefix = f"{label} " if label else ""
            if shape is None:
                shape = _shape(batch.schema)
                if shape is None:
                    raise FormatError(path, f"{prefix}row 0", "columns are neither turn rows "
                                                              "(trajectory_id, turn_index, action, "
                                                              "observation) nor chat `messages`")
            for record in batch.to_pylist():
                position = f"{prefix}row {row}"
                row += 1
                if shape == "chat":
                    record = {k: v if k == "messages" else _jsonable(v) for k, v in record.items()}
                    yield from chat_record_items(record, str(path), position)
                elif group and record.get("trajectory_id") == group[0].get("trajectory_id"):
                    group.append(record)
                else:
                    if group:
                        yield self._trajectory(path, group_position, group, seen)
                    group, group_position = [record], position
        if group:
            yield self._trajectory(path, group_position, group, seen)

    @staticmethod
    def _trajectory(path: Path, position: str, rows: list[dict[str, Any]],
                    seen: set[str]) -> Trajectory | Quarantine:
        """One run of rows with the same trajectory_id -> a Trajectory, or why it is not one."""
        trajectory_id = rows[0].get("trajectory_id")
        if not isinstance(trajectory_id, str) or not trajectory_id:
            return Quarantine(str(path), position, "trajectory_id must be a non-empty string")
        if trajectory_id in seen:
            return Quarantine(str(path), position, f"trajectory_id {trajectory_id!r} appears again "
                                                   f"after other rows: rows must be ordered by "
                                                   f"trajectory")
        seen.add(trajectory_id)
        turns: list[Turn] = []
        for offset, row in enumerate(rows):
            if row.get("turn_index") != offset:
                return Quarantine(str(path), position, f"turn_index {row.get('turn_index')!r} at "
                                                       f"row offset {offset}: expected {offset}")
            if not (isinstance(row.get("action"), str) and isinstance(row.get("observation"), str)):
                return Quarantine(str(path), position, f"turn {offset}: action and observation "
                                                       f"must be strings")
            turns.append(Turn(
                action=row["action"],
                observation=row["observation"],
                action_kind=row.get("action_kind") or "other",
                observation_format=row.get("observation_format") or "text",
                tool_name=row.get("tool_name"),
                exit_code=row.get("exit_code"),
                is_error=row.get("is_error"),
            ))
        first = rows[0]
        metadata: dict[str, Any] = {}
        if isinstance(first.get("metadata"), str) and first["metadata"]:
            try:
                parsed = json.loads(first["metadata"])
            except ValueError:
                return Quarantine(str(path), position, "metadata column is not valid JSON")
            metadata.update(parsed if isinstance(parsed, dict) else {"metadata": parsed})
        for key, value in first.items():
            if key not in (*TURN_KEYS, *TURN_FIELDS, "task", "outcome", "system_prompt",
                           "metadata") and value is not None:
                metadata[key] = _jsonable(value)
        outcome = first.get("outcome")
        task = first.get("task")
        system_prompt = first.get("system_prompt")
        return Trajectory(
            task=task if isinstance(task, str) else "",
            turns=turns,
            position=position,
            outcome=outcome if outcome in OUTCOMES else "unknown",
            system_prompt=system_prompt if isinstance(system_prompt, str) else None,
            metadata=metadata,
        )
