"""JSON-RPC lines in the layout of the recorded MCP transcripts the world model trained on.

An MCP turn of the corpus (sources/readers/mcp_jsonrpc.py) is the client's request line and the
server's response line, verbatim. The simulation sends the model the same layout: compact
request lines as the factory's scripted client writes them, and response lines with the
result's keys sorted, as the SDK's servers print them. A predicted response line becomes a tool
result here: a `result` is the tool's result, a JSON-RPC `error` or `isError` a tool error, and
anything else (not JSON-RPC) the model's text as the tool's text content.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

PROTOCOL_VERSION = "2025-11-25"
CLIENT_INFO = {"name": "worldtrace-simulate-mcp", "version": "1.0"}


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def request_line(request_id: int, method: str, params: dict[str, Any] | None = None) -> str:
    """A client request line (`params` omitted when None), keys in the scripted client's order."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return compact(message)


def response_line(request_id: int, result: dict[str, Any]) -> str:
    """A server response line: the result's keys sorted, as the SDK's servers write them."""
    body = json.dumps(result, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return f'{{"jsonrpc":"2.0","id":{request_id},"result":{body}}}'


def call_line(request_id: int, name: str, arguments: dict[str, Any]) -> str:
    return request_line(request_id, "tools/call", {"name": name, "arguments": arguments})


def initialize_turn(server_info: dict[str, Any], instructions: str | None) -> tuple[str, str]:
    """The session's first turn: initialize and the server's answer."""
    result: dict[str, Any] = {"capabilities": {"tools": {"listChanged": False}},
                              "protocolVersion": PROTOCOL_VERSION, "serverInfo": server_info}
    if instructions:
        result["instructions"] = instructions
    action = request_line(1, "initialize", {"protocolVersion": PROTOCOL_VERSION,
                                            "capabilities": {}, "clientInfo": CLIENT_INFO})
    return action, response_line(1, result)


def tools_list_turn(request_id: int, tools: list[dict[str, Any]]) -> tuple[str, str]:
    return request_line(request_id, "tools/list"), response_line(request_id, {"tools": tools})


def result_dict(result: types.CallToolResult) -> dict[str, Any]:
    """A tool result as the recorded transcripts hold it (aliases, no unset fields; without the
    newer protocol's `resultType`, which the 2025-11-25 sessions of the corpus never carry)."""
    wire = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    wire.pop("resultType", None)
    return wire


def text_result(text: str, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                is_error=is_error)


def tool_result(observation: str) -> types.CallToolResult:
    """The tool result a predicted response line stands for (see the module docstring)."""
    try:
        message = json.loads(observation)
    except json.JSONDecodeError:
        return text_result(observation)
    if not isinstance(message, dict):
        return text_result(observation)
    if isinstance(message.get("error"), dict):
        error = message["error"]
        return text_result(str(error.get("message", compact(error))), is_error=True)
    result = message.get("result")
    if not isinstance(result, dict):
        return text_result(observation)
    try:
        parsed = types.CallToolResult.model_validate(result)
    except ValueError:  # pydantic's ValidationError: a result that is not a tool result
        return text_result(compact(result), is_error=result.get("isError") is True)
    return parsed
