"""The reader base: what every native-format reader shares.

A reader turns one file (or one run folder) into a stream of `Trajectory` and `Quarantine`
items. It must stream: hold at most one trajectory in memory, never the whole file when the
file holds many trajectories. A record it cannot parse becomes a `Quarantine` with its position,
and the reader goes on with the next record; a file it cannot parse at all raises `FormatError`
(an `InputError`), which the ingest layer turns into one quarantine row for the file. Any other
exception is a bug in the reader: the run fails, naming the reader and the file.

Here too: opening and decoding JSON / JSONL with errors that name the file and the place in it,
the one-document-a-file read() (`JsonDocumentReader`), and how a tool call is written as an
action (`render_call`).
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import ijson

from sources import exact_json
from sources.schema import OUTCOMES, Quarantine, Trajectory

SNIFF_BYTES = 65536  # enough to see the keys of any format we read, small enough to be free


class InputError(ValueError):
    """The input is broken (cannot be decoded or parsed, or has a shape the format forbids).

    The ingest layer quarantines the file, or the record, with the reason. Any other exception
    that leaves a reader is a bug in the reader and fails the run (sources.ingest.ReaderBug).
    """


class FormatError(InputError):
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
    generic: ClassVar[bool] = False  # True: detection tries it after every specific reader

    @abstractmethod
    def sniff(self, path: Path, head: str) -> bool:
        """True when this file (or folder) is in this reader's format.

        `head` is the first SNIFF_BYTES of the file decoded leniently ("" for a folder). Decide by
        content, with the file name only as a tie-breaker.
        """

    @abstractmethod
    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        """Yield the trajectories in `path`, and a `Quarantine` for each record that fails."""


class JsonDocumentReader(Reader):
    """A format of one JSON document a file (one trajectory): the document is decoded whole,
    its top-level type checked (a wrong one makes the whole file a FormatError), and a
    FormatError raised while converting it becomes a Quarantine at the place it names."""

    document_types: ClassVar[tuple[type, ...]] = (dict,)
    document_error: ClassVar[str] = "expected a JSON object"

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        document = self.load(path)
        if not isinstance(document, self.document_types):
            raise FormatError(path, "$", f"{self.document_error}, got {type(document).__name__}")
        try:
            yield from self.convert(path, document)
        except FormatError as error:
            yield Quarantine(source_path=str(path), position=error.position, reason=error.reason)

    def load(self, path: Path) -> Any:
        """The decoded document (a reader with a faster decoding of its own overrides this)."""
        return load_json(path)

    @abstractmethod
    def convert(self, path: Path, document: Any) -> Iterator[Trajectory | Quarantine]:
        """The trajectory of one decoded document (and Quarantine items for the parts that
        fail); raise FormatError for a document that cannot become a trajectory at all."""


# "}", a line break, "{", with any whitespace around the break: a second top-level object (a
# JSONL stream, blank lines or indented records too), which one JSON document never holds (its
# strings have no raw line break, and "}" before "{" needs a comma). [^\S\n]* (whitespace but
# "\n") finds the same matches as \s* without backtracking over a run of blanks.
JSONL_BOUNDARY = re.compile(r"\}[^\S\n]*\n\s*\{")


def has_match(literal: str, pattern: re.Pattern[str], text: str) -> bool:
    """`pattern.search(text)`, where every match of `pattern` contains `literal`: the regex scan
    of a 64 KB sniff head is skipped when the literal (found many times faster) is absent."""
    return literal in text and pattern.search(text) is not None


def is_single_json_object(head: str) -> bool:
    """True when `head` opens one JSON object, not a JSONL stream of objects.

    Detection asks this of one file's head in most readers' sniff, one after the other, and
    the answer costs a scan of up to 64 KB: the answer for the last head asked about (the same
    object, so the same text) is kept."""
    global _last_single_object
    last_head, last_answer = _last_single_object
    if head is last_head:
        return last_answer
    text = head.lstrip()
    answer = text.startswith("{") and not has_match("\n", JSONL_BOUNDARY, text)
    _last_single_object = (head, answer)
    return answer


_last_single_object: tuple[str | None, bool] = (None, False)


def read_head(path: Path, size: int = SNIFF_BYTES) -> str:
    """First bytes of a file as text, undecodable bytes replaced (sniffing only, never content)."""
    if path.is_dir():
        return ""
    with path.open("rb") as handle:
        return handle.read(size).decode("utf-8", errors="replace")


RecordConverter = Callable[[str, str, Any], Iterable[Trajectory | Quarantine]]


def load_json(path: Path, data: bytes | None = None) -> Any:
    """Parse a whole JSON document (for formats that are one object a file): the file's bytes,
    or `data` when the caller has read them already."""
    try:
        return exact_json.loads(path.read_bytes() if data is None else data)
    except UnicodeDecodeError as error:
        raise FormatError(path, f"byte {error.start}", f"invalid UTF-8: {error.reason}") from None
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
                yield line_number, exact_json.loads(raw_line)
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


def render_call(name: str, arguments: Any) -> str:
    """A tool call as an action: `name(arguments)`, with the argument string as the model wrote
    it, JSON for a parsed object, nothing for no arguments."""
    if arguments is None:
        args = ""
    elif isinstance(arguments, str):
        args = arguments
    else:
        args = json.dumps(arguments, ensure_ascii=False)
    return f"{name}({args})"


def outcome_label(value: Any, scores: bool = True) -> str:
    """A format's own label as an outcome: an outcome name, a boolean, or (with `scores`) a
    number 1 or 0 (a reward, a success rate); anything else is "unknown"."""
    if isinstance(value, str) and value in OUTCOMES:
        return value
    if isinstance(value, bool):
        return "success" if value else "failure"
    if scores and isinstance(value, int | float) and value in (0, 1):
        return "success" if value == 1 else "failure"
    return "unknown"


def record_outcome(record: dict[str, Any], flags: Sequence[str],
                   scores: Sequence[str] = ()) -> str:
    """A record's own label: its `outcome` when that is an outcome name, else the first boolean
    among `flags`, else the first 1 or 0 among `scores`; "unknown" when there is none."""
    if isinstance(record.get("outcome"), str) and record["outcome"] in OUTCOMES:
        return record["outcome"]
    for key in flags:
        if isinstance(record.get(key), bool):
            return outcome_label(record[key])
    for key in scores:
        value = record.get(key)
        if not isinstance(value, bool) and outcome_label(value) != "unknown":
            return outcome_label(value)
    return "unknown"
