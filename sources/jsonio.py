"""Streaming JSON and JSONL input with errors that name the file and the place in it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import ijson

from sources.reader import FormatError
from sources.schema import Quarantine, Trajectory

RecordConverter = Callable[[str, str, Any], Iterable[Trajectory | Quarantine]]


def load_json(path: Path) -> Any:
    """Parse a whole JSON document (for formats that are one object a file)."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(path, f"byte {error.start}", f"invalid UTF-8: {error.reason}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise FormatError(
            path, f"line {error.lineno} column {error.colno}", f"invalid JSON: {error.msg}"
        ) from None


def iter_json_array(path: Path, prefix: str = "item") -> Iterator[tuple[int, Any]]:
    """Stream the items of a top-level JSON array (or of the array at an ijson `prefix`).

    Items before a syntax error are yielded; the error then raises `FormatError` naming the byte
    offset, so a truncated file keeps everything that was complete.
    """
    index = -1
    with path.open("rb") as handle:
        try:
            for index, item in enumerate(ijson.items(handle, prefix, use_float=True)):
                yield index, item
        except (ijson.JSONError, UnicodeDecodeError) as error:
            where = f"$[{index + 1}] (byte {handle.tell()})"
            raise FormatError(path, where, f"invalid JSON: {error}") from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any | FormatError]]:
    """Yield (line number, parsed object or FormatError) for each non-blank line.

    Reads line by line in binary so one bad line (invalid UTF-8, broken JSON) costs only itself.
    """
    with path.open("rb") as handle:
        for line_number, raw_line in enumerate(handle, start=1):
            if not raw_line.strip():
                continue
            try:
                yield line_number, json.loads(raw_line.decode("utf-8"))
            except UnicodeDecodeError as error:
                yield line_number, FormatError(
                    path, f"line {line_number} byte {error.start}", f"invalid UTF-8: {error.reason}"
                )
            except json.JSONDecodeError as error:
                yield line_number, FormatError(
                    path, f"line {line_number} column {error.colno}", f"invalid JSON: {error.msg}"
                )


def read_jsonl_items(path: Path, convert: RecordConverter) -> Iterator[Trajectory | Quarantine]:
    """`convert(source_path, "line N", record)` for each JSONL record, in order.

    A line that does not parse, or a record whose conversion raises FormatError, becomes a
    Quarantine with its position, and the next line is read.
    """
    for line_number, record in iter_jsonl(path):
        if isinstance(record, FormatError):
            yield Quarantine(str(path), record.position, record.reason)
            continue
        try:
            yield from convert(str(path), f"line {line_number}", record)
        except FormatError as error:
            yield Quarantine(str(path), error.position, error.reason)


def as_text(value: Any) -> str:
    """A content field as text: strings as-is, OpenAI content-part lists joined, else JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, dict) for part in value):
        texts = [part.get("text") for part in value if part.get("type", "text") == "text"]
        if texts and all(isinstance(text, str) for text in texts):
            return "\n".join(texts)
    return json.dumps(value, ensure_ascii=False)


def expect(value: Any, kind: type | tuple[type, ...], path: Path, position: str, what: str) -> Any:
    """Return `value` if it has the expected type, else raise a FormatError naming the field."""
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise FormatError(path, position, f"{what} must be {names}, got {type(value).__name__}")
    return value
