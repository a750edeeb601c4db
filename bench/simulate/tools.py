"""The tools a simulated server lists, and the session opening the world model reads first.

Three places to take them from:
- a tools file: a JSON tool list (`[...]`, `{"tools": [...]}` or a tools/list response), optionally
  with `serverInfo` and `instructions` beside the tools;
- a recorded MCP transcript (`--> ` / `<-- ` JSON-RPC lines): its tools/list answer, and its
  turns before the first tools/call, verbatim (the opening the model saw in training);
- a live server (`--like-server CMD`): what it answers to initialize and tools/list.

Every tool is checked against the MCP Tool schema; a file that is not a tool list is an error
naming the file and the place. Which tools only read state: the tools' own `readOnlyHint`
annotations, a declared list, and the declarations of the trace factory's servers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from bench.simulate import wire
from bench.simulate.errors import ToolsFileError
from sources.factory import mcp_servers, scale_mcp
from sources.readers.mcp_jsonrpc import McpJsonRpcReader
from sources.schema import Quarantine

Turn = tuple[str, str]  # (request line, response line)

# Read-only tools of the servers whose sessions the default data holds, by serverInfo name.
FACTORY_READ_ONLY: dict[str, frozenset[str]] = {
    name: frozenset(mcp_servers.READ_ONLY_TOOLS.get(name, ()))
    | frozenset(scale_mcp.READ_ONLY_TOOLS.get(name, ()))
    for name in {*mcp_servers.READ_ONLY_TOOLS, *scale_mcp.READ_ONLY_TOOLS}
}


@dataclass(frozen=True)
class ToolSet:
    """The tools as listed (wire JSON), the server's name, and the session's opening turns."""

    tools: tuple[dict[str, Any], ...]
    server_name: str
    opening: tuple[Turn, ...]
    instructions: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(tool["name"] for tool in self.tools)

    def mcp_tools(self) -> list[types.Tool]:
        """The tools to list to a client. Without outputSchema: a client checks structured
        content against it, and a prediction cannot promise to match it."""
        return [types.Tool.model_validate({k: v for k, v in tool.items() if k != "outputSchema"})
                for tool in self.tools]

    def read_only(self, declared: Iterable[str] = ()) -> frozenset[str]:
        """Tools answered by the anchor: annotated readOnlyHint, declared, or declared read-only
        by the trace factory for a server of this name."""
        annotated = {tool["name"] for tool in self.tools
                     if (tool.get("annotations") or {}).get("readOnlyHint") is True}
        known = FACTORY_READ_ONLY.get(self.server_name, frozenset())
        return frozenset(annotated | set(declared) | (known & set(self.names)))


def checked_tools(tools: Any, where: str) -> tuple[dict[str, Any], ...]:
    """Each tool validated against the MCP Tool schema (ToolsFileError naming the place)."""
    if not isinstance(tools, list) or not tools:
        raise ToolsFileError(f"{where}: expected a non-empty list of tools, got "
                             f"{type(tools).__name__ if tools != [] else 'an empty list'}")
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        try:
            name = types.Tool.model_validate(tool).name
        except ValidationError as error:
            first = error.errors()[0]
            place = ".".join(str(p) for p in first["loc"])
            raise ToolsFileError(f"{where}[{index}]: not an MCP tool ({place}: "
                                 f"{first['msg']})") from None
        if name in seen:
            raise ToolsFileError(f"{where}[{index}]: tool {name!r} is listed twice")
        seen.add(name)
    return tuple(tools)


def _json_tools(document: Any, path: Path) -> ToolSet:
    info: dict[str, Any] = {"name": path.stem, "version": "simulated"}
    instructions = None
    where = f"{path}: $"
    if isinstance(document, dict):
        holder = document.get("result") if isinstance(document.get("result"), dict) else document
        if "tools" not in holder:
            raise ToolsFileError(f"{path}: $: a JSON object without a 'tools' list (expected "
                                 "[...], {\"tools\": [...]} or a tools/list response)")
        where = f"{path}: $" + (".result" if holder is not document else "") + ".tools"
        info = document.get("serverInfo") or info
        instructions = document.get("instructions")
        document = holder["tools"]
    tools = checked_tools(document, where)
    opening = (wire.initialize_turn(info, instructions), wire.tools_list_turn(2, list(tools)))
    return ToolSet(tools, str(info.get("name", path.stem)), opening, instructions)


def _method(action: str) -> str | None:
    try:
        message = json.loads(action)
    except json.JSONDecodeError:
        return None
    return message.get("method") if isinstance(message, dict) else None


def toolset_from_turns(turns: Sequence[Turn], where: str) -> ToolSet:
    """The tool set of a recorded session: its tools/list answer, the server's name from its
    initialize answer, and its turns before the first tools/call as the opening."""
    first_call = next((i for i, (action, _) in enumerate(turns)
                       if _method(action) == "tools/call"), len(turns))
    opening = tuple(turns[:first_call])
    tools, name, instructions = None, "unknown", None
    for index, (action, observation) in enumerate(opening):
        method = _method(action)
        if method not in ("initialize", "tools/list"):
            continue
        try:
            result = json.loads(observation).get("result") or {}
        except (json.JSONDecodeError, AttributeError):
            raise ToolsFileError(f"{where}: turn {index + 1}: the {method} answer is not a "
                                 "JSON-RPC response") from None
        if method == "initialize":
            name = str((result.get("serverInfo") or {}).get("name", name))
            instructions = result.get("instructions")
        else:
            tools = checked_tools(result.get("tools"), f"{where}: turn {index + 1}: result.tools")
    if tools is None:
        raise ToolsFileError(f"{where}: the session lists no tools (no tools/list answer "
                             "before its first tools/call)")
    return ToolSet(tools, name, opening, instructions)


def read_tools_file(path: Path) -> ToolSet:
    """The tool set in a tools file or a recorded transcript (ToolsFileError when neither)."""
    path = Path(path)
    if not path.is_file():
        raise ToolsFileError(f"{path}: no such tools file")
    text = path.read_text(encoding="utf-8", errors="replace")
    if text.lstrip().startswith(("-->", "<--")):
        for item in McpJsonRpcReader().read(path):
            if isinstance(item, Quarantine):
                continue  # an unanswered request: the session's other turns still count
            return toolset_from_turns([(t.action, t.observation) for t in item.turns],
                                      f"{path}: {item.position}")
        raise ToolsFileError(f"{path}: a transcript with no readable session")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ToolsFileError(f"{path}: line {error.lineno}: not JSON and not an MCP transcript "
                             f"({error.msg})") from None
    return _json_tools(document, path)


def toolset_from_server(initialize: types.InitializeResult, tools: Sequence[types.Tool]
                        ) -> ToolSet:
    """The tool set a live server announced (its initialize result and its tools)."""
    listed = tuple(tool.model_dump(by_alias=True, exclude_none=True, mode="json")
                   for tool in tools)
    info = initialize.server_info.model_dump(by_alias=True, exclude_none=True, mode="json")
    opening = (wire.initialize_turn(info, initialize.instructions),
               wire.tools_list_turn(2, list(listed)))
    return ToolSet(listed, initialize.server_info.name, opening, initialize.instructions)
