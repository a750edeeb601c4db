"""The format registry: every reader by name, and detection of a file's format by its content."""

from __future__ import annotations

import importlib
from pathlib import Path

from sources.reader import Reader, read_head

# Detection order: the most specific formats first, so a generic reader (chat JSONL, table rows)
# only claims what no specific one recognises. "module:Class" keeps the list readable in one place.
READER_CLASSES: tuple[str, ...] = (
    "sources.tbench:TerminalBenchReader",
    "sources.sweagent:SweAgentReader",
    "sources.openhands:OpenHandsReader",
    "sources.miniswe:MiniSweReader",
    "sources.atif:AtifReader",
    "sources.harbor_traces:HarborTracesReader",
    "sources.toolathlon:ToolathlonReader",
    "sources.mcp_jsonrpc:McpJsonRpcReader",
    "sources.mcp_client_log:McpClientLogReader",
    "sources.miroflow:MiroFlowReader",
    "sources.search_r1:SearchR1Reader",
    "sources.androidworld:AndroidWorldReader",
    "sources.webarena:WebArenaRenderReader",
    "sources.osworld:OsWorldReader",
    "sources.agentworldbench:AgentWorldBenchReader",
    "sources.chat_jsonl:ChatJsonlReader",
    "sources.table_rows:TableRowsReader",
)


class UnknownFormat(ValueError):
    """No reader recognised the input; lists every reader that was tried."""

    def __init__(self, path: Path | str, tried: list[str], detail: str = "") -> None:
        self.path = str(path)
        self.tried = tried
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"{self.path}: unknown format{extra}; tried {len(tried)} readers: {', '.join(tried)}"
        )


def _load(spec: str) -> Reader:
    module_name, class_name = spec.split(":")
    return getattr(importlib.import_module(module_name), class_name)()


_READERS: dict[str, Reader] | None = None


def all_readers() -> dict[str, Reader]:
    """Every reader, keyed by name, in detection order."""
    global _READERS
    if _READERS is None:
        readers = [_load(spec) for spec in READER_CLASSES]
        _READERS = {reader.name: reader for reader in readers}
    return _READERS


def get_reader(name: str) -> Reader:
    """The reader called `name`, or UnknownFormat listing the known names."""
    readers = all_readers()
    if name not in readers:
        raise UnknownFormat(name, list(readers), detail="no reader has this name")
    return readers[name]


def detect(path: Path) -> Reader:
    """The first reader (in detection order) whose sniff() claims `path` (file or run folder)."""
    readers = all_readers()
    head = read_head(path)
    is_folder = path.is_dir()
    for reader in readers.values():
        if is_folder and not reader.reads_directories:
            continue
        if reader.sniff(path, head):
            return reader
    raise UnknownFormat(path, list(readers))


def directory_reader(path: Path) -> Reader | None:
    """A reader that takes this whole folder as one unit (a run folder), if any."""
    for reader in all_readers().values():
        if reader.reads_directories and reader.sniff(path, ""):
            return reader
    return None
