"""MCP client session logs written by an MCP SDK client interceptor (a wrapped `ClientSession`).

Two layouts, both JSON Lines. One record per message (the interceptor's log file):

    {"type": "request", "timestamp": "...", "count": 3, "method": "call_tool",
     "args": ["read_file", {"path": "/tmp/a.txt"}], "kwargs": {}}
    {"type": "response", "timestamp": "...", "count": 3, "method": "call_tool",
     "result": {"_type": "CallToolResult", "content": [{"_type": "TextContent", "type": "text",
                "text": "hello"}], "isError": false}, "error": null}

or one session object per line (or one per file), each holding its request / response pairs:

    {"session_id": "17c2...", "server_info": {"url": "...", "transport": "http"},
     "calls": [{"request": {"method": "call_tool", "args": [...], "kwargs": {}},
                "response": {"success": true, "result": {...}, "error": null},
                "duration_ms": 203.5}], "started_at": "...", "ended_at": "..."}

A turn is one SDK call and its response. `call_tool` is rendered `tool(json arguments)` with the
tool's name as tool_name (arguments from `args[1]` or `kwargs["arguments"]`); any other method
(`initialize`, `list_tools`, `read_resource`, ...) as `method(json args)`, tool_name = method.
The observation is the text of the result's content blocks (`content_blocks.py`; other
blocks and annotations go to metadata["content_extras"]), else the result as JSON without the
interceptor's `_type` class tags; an `error` (the exception text) is
the observation of a failed call, with is_error. In the per-message layout a response answers
the oldest open request of its method (calls are awaited one at a time) and an `initialize`
request after other calls starts a new session (the log file is appended to across runs). A
response with no open request, or a request never answered, is one quarantined record. Sessions
carry no task and no outcome: task "" and outcome "unknown".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from sources import exact_json
from sources.readers.base import (
    FormatError,
    Reader,
    as_text,
    is_single_json_object,
    iter_jsonl,
    load_json,
)
from sources.readers.content_blocks import unwrap_content
from sources.schema import Quarantine, Trajectory, Turn

_MESSAGE_TYPES = ("request", "response")


def first_record(head: str) -> dict[str, Any] | None:
    """The first JSON line of `head` as an object, or None."""
    text = head.lstrip()
    end = text.find("\n")
    line = text if end < 0 else text[:end]  # the first line, without copying a long one
    # Only a line that opens and closes like an object can decode to one: not parsing a long
    # first line (a one-line JSON document cut at the sniff window) saves most of detection.
    if not line.startswith("{") or not line.rstrip(" \t\r").endswith("}"):
        return None
    try:
        record = exact_json.loads(line)  # json.loads's value, at msgspec's speed
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def is_message_record(record: dict[str, Any]) -> bool:
    return (
        record.get("type") in _MESSAGE_TYPES
        and isinstance(record.get("method"), str)
        and any(key in record for key in ("args", "kwargs", "result", "error"))
    )


def is_session_record(record: dict[str, Any]) -> bool:
    calls = record.get("calls")
    return (
        isinstance(calls, list)
        and "session_id" in record
        and all(isinstance(call, dict) and "request" in call for call in calls[:1])
    )


def strip_type_tags(value: Any) -> Any:
    """The result without the interceptor's `_type` class names (not part of the protocol)."""
    if isinstance(value, dict):
        return {k: strip_type_tags(v) for k, v in value.items() if k != "_type"}
    if isinstance(value, list):
        return [strip_type_tags(item) for item in value]
    return value


def call_turn(
    method: str, args: Any, kwargs: Any, result: Any, error: Any
) -> tuple[Turn, list[dict[str, Any]] | None]:
    """One SDK call and its answer as a canonical turn, and what its content held besides text."""
    args = args if isinstance(args, list) else []
    kwargs = kwargs if isinstance(kwargs, dict) else {}
    tool = args[0] if args and isinstance(args[0], str) else kwargs.get("name")
    if method == "call_tool" and isinstance(tool, str):
        arguments = args[1] if len(args) > 1 else kwargs.get("arguments", {})
        action = f"{tool}({json.dumps(arguments, ensure_ascii=False, sort_keys=True)})"
        kind, tool_name = "tool_call", tool
    else:
        sent = args + ([kwargs] if kwargs else [])
        shown = ", ".join(json.dumps(value, ensure_ascii=False, sort_keys=True) for value in sent)
        action, kind, tool_name = f"{method}({shown})", "other", method
    if error is not None:
        turn = Turn(action, as_text(error), kind, "tool_result_text", tool_name, is_error=True)
        return turn, None
    result = strip_type_tags(result)
    content = result.get("content") if isinstance(result, dict) else None
    dumped = json.dumps(content, ensure_ascii=False)
    unwrapped = unwrap_content(dumped) if isinstance(content, list) else None
    if unwrapped is not None and unwrapped.text != dumped:  # content blocks with text in them
        observation, observation_format = unwrapped.text, "tool_result_text"
    else:
        observation = json.dumps(result, ensure_ascii=False, sort_keys=True)
        observation_format = "tool_result_json"
    flag = result.get("isError") if isinstance(result, dict) else None
    is_error = flag if isinstance(flag, bool) else False
    turn = Turn(action, observation, kind, observation_format, tool_name, is_error=is_error)
    return turn, unwrapped.extras if unwrapped is not None else None


def add_call(
    turns: list[Turn], metadata: dict[str, Any], request: dict[str, Any], result: Any, error: Any
) -> None:
    """Append one call's turn; non-text content and the server's identity go to metadata."""
    method = request["method"]
    turn, extras = call_turn(method, request.get("args"), request.get("kwargs"), result, error)
    if extras:
        metadata.setdefault("content_extras", []).append(
            {"turn_index": len(turns), "extras": extras}
        )
    turns.append(turn)
    if method == "initialize" and isinstance(result, dict):
        for key in ("protocolVersion", "serverInfo"):
            if result.get(key) is not None:
                metadata[key] = strip_type_tags(result[key])


@dataclass
class _Session:
    """One client session of the per-message layout, being filled line by line."""

    start_line: int
    turns: list[Turn] = field(default_factory=list)
    open_requests: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def answer(self, record: dict[str, Any]) -> bool:
        """Pair a response with the oldest open request of its method; False when there is none."""
        for index, (_, request) in enumerate(self.open_requests):
            if request["method"] == record["method"]:
                del self.open_requests[index]
                add_call(
                    self.turns, self.metadata, request, record.get("result"), record.get("error")
                )
                return True
        return False


class McpClientLogReader(Reader):
    """MCP SDK client interceptor logs: request / response records or session objects."""

    name: ClassVar[str] = "mcp_client_log"
    domain: ClassVar[str] = "mcp"
    description: ClassVar[str] = (
        "MCP client session log: action = an SDK call (`tool(arguments)` for call_tool), "
        "observation = its result's text content (else the result JSON) or its error"
    )

    def sniff(self, path: Path, head: str) -> bool:
        record = first_record(head)
        if record is None and is_single_json_object(head):
            return '"calls"' in head and '"session_id"' in head and '"request"' in head
        return record is not None and (is_message_record(record) or is_session_record(record))

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        with path.open("rb") as handle:
            head = handle.read(65536).decode("utf-8", errors="replace")
        if first_record(head) is None and is_single_json_object(head):
            yield from self._session_object(path, "$", load_json(path))
            return
        session: _Session | None = None
        for line_number, record in iter_jsonl(path):
            where = f"line {line_number}"
            if isinstance(record, FormatError):
                yield Quarantine(str(path), record.position, record.reason)
            elif isinstance(record, dict) and is_session_record(record):
                yield from self._session_object(path, where, record)
            elif isinstance(record, dict) and is_message_record(record):
                if record["type"] == "request" and record["method"] == "initialize" and session:
                    if session.turns or session.open_requests:
                        yield from self._finish(path, session)
                        session = None
                session = session or _Session(line_number)
                yield from self._message(path, where, line_number, session, record)
            else:
                yield Quarantine(str(path), where, "not an MCP client log request or response")
        if session is not None:
            yield from self._finish(path, session)

    @staticmethod
    def _message(
        path: Path, where: str, line_number: int, session: _Session, record: dict[str, Any]
    ) -> Iterator[Quarantine]:
        if record["type"] == "request":
            session.open_requests.append((line_number, record))
        elif not session.answer(record):
            yield Quarantine(str(path), where, f"{record['method']} response to no open request")

    @staticmethod
    def _finish(path: Path, session: _Session) -> Iterator[Trajectory | Quarantine]:
        for line_number, request in session.open_requests:
            reason = f"{request['method']} request has no response"
            yield Quarantine(str(path), f"line {line_number}", reason)
        yield Trajectory(
            task="",
            turns=session.turns,
            position=f"line {session.start_line}",
            metadata=session.metadata,
        )

    @staticmethod
    def _session_object(
        path: Path, position: str, record: Any
    ) -> Iterator[Trajectory | Quarantine]:
        if not isinstance(record, dict) or not isinstance(record.get("calls"), list):
            yield Quarantine(str(path), position, "session object needs a `calls` list")
            return
        turns: list[Turn] = []
        metadata: dict[str, Any] = {
            key: record[key]
            for key in ("session_id", "server_info", "started_at", "ended_at", "metadata")
            if record.get(key)
        }
        for index, call in enumerate(record["calls"]):
            request = call.get("request") if isinstance(call, dict) else None
            response = call.get("response") if isinstance(call, dict) else None
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                yield Quarantine(str(path), f"{position} $.calls[{index}]", "call has no request")
                continue
            if not isinstance(response, dict):
                reason = f"{request['method']} request has no response"
                yield Quarantine(str(path), f"{position} $.calls[{index}]", reason)
                continue
            add_call(turns, metadata, request, response.get("result"), response.get("error"))
        yield Trajectory(task="", turns=turns, position=position, metadata=metadata)
