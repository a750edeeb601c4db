"""The native-format readers (one module per format) and their registry.

Readers are registered once, in `READERS`, by name; packages installed beside worldtrace add
theirs through the entry-point group `worldtrace.readers` (see sources/registry.py). Detection
tries the specific formats first, then third-party ones, and the generic readers (chat JSONL,
table rows: `Reader.generic`) last, so they only claim what no specific reader recognises.
"""

from __future__ import annotations

from pathlib import Path

from sources.readers.base import Reader, read_head
from sources.registry import Registry, UnknownName

ENTRY_POINT_GROUP = "worldtrace.readers"

# Detection order among the built-in readers: the most specific formats first.
READERS: Registry[Reader] = Registry("reader", {
    "tbench_run": "sources.readers.tbench:TerminalBenchReader",
    "sweagent_traj": "sources.readers.sweagent:SweAgentReader",
    "openhands_events": "sources.readers.openhands:OpenHandsReader",
    "openhands_filestore": "sources.readers.openhands_filestore:OpenHandsFileStoreReader",
    "miniswe_messages": "sources.readers.miniswe:MiniSweReader",
    "atif": "sources.readers.atif:AtifReader",
    "harbor_traces": "sources.readers.harbor_traces:HarborTracesReader",
    "toolathlon_chat": "sources.readers.toolathlon:ToolathlonReader",
    "mcp_jsonrpc": "sources.readers.mcp_jsonrpc:McpJsonRpcReader",
    "mcp_client_log": "sources.readers.mcp_client_log:McpClientLogReader",
    "miroflow": "sources.readers.miroflow:MiroFlowReader",
    "search_r1": "sources.readers.search_r1:SearchR1Reader",
    "androidworld": "sources.readers.androidworld:AndroidWorldReader",
    "webarena_render": "sources.readers.webarena:WebArenaRenderReader",
    "osworld_traj": "sources.readers.osworld:OsWorldReader",
    "agentworldbench_jsonl": "sources.readers.agentworldbench:AgentWorldBenchReader",
    "chat_jsonl": "sources.readers.chat_jsonl:ChatJsonlReader",
    "table_rows": "sources.readers.table_rows:TableRowsReader",
}, entry_point_group=ENTRY_POINT_GROUP, build=lambda cls: cls())


class UnknownFormat(ValueError):
    """No reader recognised the input; lists every reader that was tried."""

    def __init__(self, path: Path | str, tried: list[str], detail: str = "") -> None:
        self.path = str(path)
        self.tried = tried
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"{self.path}: unknown format{extra}; tried {len(tried)} readers: {', '.join(tried)}"
        )


# The detection order of the last registry asked (a test may swap READERS for its own). A
# registry's readers never change once its entry points are added, and building the order
# (loading, checking and sorting 18 readers) cost a third of detection, once an input.
_detection_order: tuple[Registry[Reader], dict[str, Reader]] | None = None


def all_readers() -> dict[str, Reader]:
    """Every reader, keyed by name, in detection order."""
    global _detection_order
    registry = READERS
    if _detection_order is None or _detection_order[0] is not registry:
        readers = registry.all()
        for name, reader in readers.items():
            if not isinstance(reader, Reader) or reader.name != name:
                raise TypeError(f"reader {name!r} ({registry.targets()[name]}) must be a "
                                f"Reader subclass whose `name` is {name!r}")
        _detection_order = registry, dict(sorted(readers.items(), key=lambda item: item[1].generic))
    return dict(_detection_order[1])


def get_reader(name: str) -> Reader:
    """The reader called `name`, or UnknownFormat listing the known names."""
    try:
        return READERS.get(name)
    except UnknownName as error:
        raise UnknownFormat(name, error.known, detail="no reader has this name") from None


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
