"""Raw MCP stdio transcripts: one JSON-RPC 2.0 message a line, with its direction.

    --> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",...}}
    <-- {"result":{"protocolVersion":"2025-11-25",...,"serverInfo":{...}},"id":1,"jsonrpc":"2.0"}
    --> {"jsonrpc":"2.0","method":"notifications/initialized"}
    --> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"scale_notes",...}}
    <-- {"result":{"content":[{"type":"text","text":"[\\u0022F\\u0022,...]"}]},"id":3,...}

`--> ` is client to server, `<-- ` server to client. Each client request and the server response
with the same `id` is one turn, in request order: action = the request line's JSON text,
observation = the response line's JSON text (both verbatim), tool_name = `params.name` for
`tools/call` and the method otherwise, is_error = a JSON-RPC `error` or `result.isError: true`.

Decisions:
  * Notifications (no `id`) get no response, so they are not turns; they are kept, in order, in
    metadata["notifications"] as {line, direction, method, params?} for context.
  * Requests the server sends to the client (sampling, roots, elicitation) are the environment
    asking, not the agent acting: they go to metadata["server_requests"] with their answer line.
  * A trailing `exit code: N` line (written by the transcript tool) is the server's exit status,
    kept as metadata["exit_code"].
  * A new `initialize` request after other traffic starts a new session, i.e. a new trajectory;
    position is the line that session starts on ("line 1" for most files).
  * A line that is not a transcript line or not JSON -> Quarantine "line N"; a request never
    answered or a response to no request -> Quarantine with its line; the session is still kept.
The file is read line by line; only the current session is held in memory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from sources import exact_json
from sources.readers.base import Reader
from sources.schema import Quarantine, Trajectory, Turn

_LINE = re.compile(r"^(-->|<--) ?(.*)$", re.DOTALL)
_EXIT = re.compile(r"^exit code: (-?\d+)\s*$")
_SNIFF_FIRST = re.compile(r"^\s*(-->|<--) ?\{", re.MULTILINE)
CLIENT, SERVER = "client->server", "server->client"


@dataclass
class _Session:
    start_line: int
    slots: list[dict[str, Any]] = field(default_factory=list)  # client requests, in order
    pending: dict[tuple[str, Any], dict[str, Any]] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.slots or self.metadata or self.problems)


def _id_key(value: Any) -> Any:
    # JSON-RPC ids are strings or numbers; 1 and 1.0 are the same id, "1" is not.
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if is_number else value


def _error_flag(response: dict[str, Any]) -> bool:
    if "error" in response:
        return True
    result = response.get("result")
    return isinstance(result, dict) and result.get("isError") is True


class McpJsonRpcReader(Reader):
    """MCP stdio transcripts (`--> ` / `<-- ` JSON-RPC lines): one turn per request/response."""

    name: ClassVar[str] = "mcp_jsonrpc"
    domain: ClassVar[str] = "mcp"
    description: ClassVar[str] = (
        "action = a client JSON-RPC request line (verbatim); observation = the server response "
        "with the same id; notifications kept in metadata"
    )

    def sniff(self, path: Path, head: str) -> bool:
        if '"jsonrpc"' not in head:  # first: cheaper than splitting the head into lines
            return False
        first = next((line for line in head.splitlines() if line.strip()), "")
        return bool(_SNIFF_FIRST.match(first))

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        source = str(path)
        session: _Session | None = None
        with path.open("rb") as handle:
            for line_number, raw in enumerate(handle, start=1):
                where = f"line {line_number}"
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as error:
                    yield Quarantine(source, f"{where} byte {error.start}",
                                     f"invalid UTF-8: {error.reason}")
                    continue
                if not line.strip():
                    continue
                exit_match = _EXIT.match(line)
                if exit_match:
                    session = session or _Session(line_number)
                    session.metadata["exit_code"] = int(exit_match.group(1))
                    continue
                match = _LINE.match(line)
                if not match:
                    reason = "not a transcript line (`--> ` or `<-- ` + JSON)"
                    yield Quarantine(source, where, reason)
                    continue
                direction = CLIENT if match.group(1) == "-->" else SERVER
                text = match.group(2)
                try:
                    message = exact_json.loads(text)
                except ValueError as error:
                    yield Quarantine(source, where, f"invalid JSON: {error}")
                    continue
                session = session or _Session(line_number)
                # JSON-RPC batches (MCP 2025-03-26) carry several messages on one line.
                batch = message if isinstance(message, list) else [message]
                for item in batch:
                    item_text = text if item is message else json.dumps(item, ensure_ascii=False)
                    if (
                        direction == CLIENT
                        and isinstance(item, dict)
                        and item.get("method") == "initialize"
                        and "id" in item
                        and not session.is_empty()
                    ):
                        yield from self._finish(source, session)
                        session = _Session(line_number)
                    self._add(session, line_number, direction, item, item_text)
        if session is not None:
            yield from self._finish(source, session)

    def _add(self, session: _Session, line_number: int, direction: str, message: Any,
             text: str) -> None:
        """File one message into the session: a request, a response or a notification."""
        where = f"line {line_number}"
        if not isinstance(message, dict):
            kind = type(message).__name__
            session.problems.append((where, f"JSON-RPC message must be object, got {kind}"))
            return
        method = message.get("method")
        if "id" in message and (
            isinstance(message["id"], bool) or not isinstance(message["id"], (str, int, float))
        ):
            reason = f"JSON-RPC id must be string or number, got {message['id']!r}"
            session.problems.append((where, reason))
            return
        if isinstance(method, str) and "id" not in message:
            note: dict[str, Any] = {"line": line_number, "direction": direction, "method": method}
            if "params" in message:
                note["params"] = message["params"]
            session.metadata.setdefault("notifications", []).append(note)
            return
        if isinstance(method, str):
            key = (direction, _id_key(message["id"]))
            if key in session.pending:
                reason = f"request id {message['id']!r} reused while the first is still open"
                session.problems.append((where, reason))
                return
            slot = {"line": line_number, "method": method, "message": message, "text": text,
                    "response": None}
            session.pending[key] = slot
            if direction == CLIENT:
                session.slots.append(slot)
            else:
                session.metadata.setdefault("server_requests", []).append(
                    {"line": line_number, "method": method, "id": message["id"]})
            if method == "initialize" and isinstance(message.get("params"), dict):
                params = message["params"]
                for name in ("protocolVersion", "clientInfo"):
                    if name in params:
                        session.metadata[name] = params[name]
            return
        if "id" in message and ("result" in message or "error" in message):
            asker = SERVER if direction == CLIENT else CLIENT
            slot = session.pending.pop((asker, _id_key(message["id"])), None)
            if slot is None:
                reason = f"response to no open request (id {message['id']!r})"
                session.problems.append((where, reason))
                return
            slot["response"] = (line_number, message, text)
            if asker == SERVER:
                for entry in session.metadata.get("server_requests", []):
                    if entry["line"] == slot["line"]:
                        entry["answer_line"] = line_number
            elif slot["method"] == "initialize":
                result = message.get("result")
                if isinstance(result, dict) and "serverInfo" in result:
                    session.metadata["serverInfo"] = result["serverInfo"]
            return
        session.problems.append((where, "not a JSON-RPC request, response or notification"))

    def _finish(self, source: str, session: _Session) -> Iterator[Trajectory | Quarantine]:
        turns: list[Turn] = []
        for slot in session.slots:
            if slot["response"] is None:
                reason = f"request {slot['method']!r} has no response"
                session.problems.append((f"line {slot['line']}", reason))
                continue
            _, response, response_text = slot["response"]
            params = slot["message"].get("params")
            tool = params.get("name") if isinstance(params, dict) else None
            is_call = slot["method"] == "tools/call" and isinstance(tool, str)
            turns.append(Turn(
                action=slot["text"],
                observation=response_text,
                action_kind="tool_call" if is_call else "other",
                observation_format="json_rpc",
                tool_name=tool if is_call else slot["method"],
                is_error=_error_flag(response),
            ))
        for entry in session.metadata.get("server_requests", []):
            if "answer_line" not in entry:
                reason = f"server request {entry['method']!r} has no client response"
                session.problems.append((f"line {entry['line']}", reason))
        if turns or session.metadata:
            if session.problems:
                session.metadata["n_quarantined_lines"] = len(session.problems)
            yield Trajectory(task="", turns=turns, position=f"line {session.start_line}",
                             outcome="unknown", metadata=session.metadata)
        session.problems.sort(key=lambda problem: int(problem[0].split()[1]))
        for where, reason in session.problems:
            yield Quarantine(source, where, reason)
