"""Completed results of a long run, kept so that a rerun asks nothing twice.

A JSONL file, one line per finished item, appended and flushed as each finishes (a crash loses
at most the line being written; a torn last line is skipped and counted on reload). A line is
reused only when its fingerprint (the settings that made it: model, temperature, ...) and the
hash of its input both match, so a changed prompt or setting is asked again, never served stale.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def fingerprint(settings: Mapping[str, Any]) -> str:
    """A short stable hash of a JSON-able settings mapping."""
    return content_hash(json.dumps(settings, sort_keys=True, default=str))[:16]


def content_hash(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResultCache:
    """`get(key, input_hash)` / `put(key, input_hash, result)`; path None keeps nothing."""

    def __init__(self, path: Path | str | None, settings_fingerprint: str) -> None:
        self.path = Path(path) if path is not None else None
        self.fingerprint = settings_fingerprint
        self.torn_lines = 0
        self._lock = threading.Lock()
        self._results: dict[str, tuple[str, Any]] = {}
        self._separator = ""  # a newline first when the file ends in a torn line
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def __len__(self) -> int:
        return len(self._results)

    def get(self, key: str, input_hash: str) -> Any | None:
        entry = self._results.get(key)
        return entry[1] if entry is not None and entry[0] == input_hash else None

    def put(self, key: str, input_hash: str, result: Any) -> None:
        line = json.dumps({"key": key, "fingerprint": self.fingerprint, "input": input_hash,
                           "result": result}, ensure_ascii=False)
        with self._lock:
            self._results[key] = (input_hash, result)
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as out:
                    out.write(self._separator + line + "\n")
                self._separator = ""

    def _load(self, path: Path) -> None:
        text_end = path.read_bytes()[-1:]
        self._separator = "\n" if text_end not in (b"", b"\n") else ""
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:  # the line a crash cut short
                    self.torn_lines += 1
                    continue
                if record.get("fingerprint") == self.fingerprint:
                    self._results[record["key"]] = (record["input"], record["result"])
