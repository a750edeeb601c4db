"""Scale generator, MCP domain: raw MCP stdio transcripts (`--> ` / `<-- ` JSON-RPC lines).

Each session opens like a real client: `initialize`, the `notifications/initialized`
notification, `tools/list`, then `tools/call`s, some with bad arguments (`isError: true`) or an
unknown tool (a JSON-RPC error); the file ends with the transcript tool's `exit code: 0` line.
The reader (readers/mcp_jsonrpc.py) makes every request/response pair a turn (so initialize and
tools/list are turns 0 and 1, planted as boilerplate: the same server answers them verbatim in
every session) with the request JSON as the action and the response JSON as the observation.
MCP transcripts carry no task, so the task is "". An "empty" turn here is a call whose result
has no content (the JSON-RPC envelope is still there).
"""

from __future__ import annotations

import json
import random
from typing import Any

from sources.factory import scale_text as tx
from sources.factory.scale_core import GenTask, GenTurn

DOMAIN = "mcp"
SUFFIX = ".stdio-transcript.txt"
MEAN_TURNS = 23.0
WEIGHTS = {"informative": 0.56, "echo": 0.12, "unchanged": 0.06, "boilerplate": 0.10,
           "error": 0.11, "empty": 0.05}
PREFIX: tuple[str, ...] = ("boilerplate", "boilerplate")  # initialize, tools/list
LAST: str | None = None
PROTOCOL = "2025-06-18"


def _schema(props: dict[str, str], required: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": v, "title": k.replace("_", " ").title()}
                                             for k, v in props.items()},
            "required": list(required)}


# server -> tools: (name, description, argument types, required, kind)
SERVERS: dict[str, list[tuple[str, str, dict[str, str], tuple[str, ...], str]]] = {
    "notes-store": [
        ("search_notes", "Full-text search over the notes; returns matching notes.",
         {"query": "string", "limit": "integer"}, ("query",), "list"),
        ("read_note", "Read one note by id.", {"note_id": "integer"}, ("note_id",), "get"),
        ("create_note", "Create a note with a title and a body.",
         {"title": "string", "body": "string"}, ("title", "body"), "create"),
        ("delete_note", "Delete a note by id.", {"note_id": "integer"}, ("note_id",), "ack"),
        ("tag_note", "Add a tag to a note.", {"note_id": "integer", "tag": "string"},
         ("note_id", "tag"), "ack"),
    ],
    "sqlite-db": [
        ("list_tables", "List the tables of the database.", {}, (), "list"),
        ("describe_table", "Columns and types of a table.", {"table": "string"}, ("table",),
         "get"),
        ("read_query", "Run a SELECT query and return the rows as JSON.", {"query": "string"},
         ("query",), "list"),
        ("write_query", "Run an INSERT, UPDATE or DELETE query.", {"query": "string"},
         ("query",), "ack"),
        ("append_insight", "Record a business insight in the memo.", {"insight": "string"},
         ("insight",), "create"),
    ],
    "calendar": [
        ("list_events", "Events between two dates.", {"start": "string", "end": "string"},
         ("start", "end"), "list"),
        ("get_event", "One event by id.", {"event_id": "string"}, ("event_id",), "get"),
        ("create_event", "Create an event.", {"title": "string", "start": "string",
                                              "attendees": "array"}, ("title", "start"), "create"),
        ("cancel_event", "Cancel an event by id.", {"event_id": "string"}, ("event_id",), "ack"),
    ],
    "filesystem": [
        ("list_directory", "List a directory.", {"path": "string"}, ("path",), "list"),
        ("read_file", "Read a text file.", {"path": "string"}, ("path",), "get"),
        ("write_file", "Write a text file.", {"path": "string", "content": "string"},
         ("path", "content"), "create"),
        ("move_file", "Move or rename a file.", {"source": "string", "destination": "string"},
         ("source", "destination"), "ack"),
    ],
}
SERVER_NAMES = tuple(SERVERS)
# The tools that only read state (kinds list and get), by server name (see mcp_servers).
READ_ONLY_TOOLS: dict[str, tuple[str, ...]] = {
    server: tuple(name for name, _, _, _, kind in tools if kind in ("list", "get"))
    for server, tools in SERVERS.items()
}
CLIENTS = (("claude-code", "1.0.71"), ("mcp-inspector", "0.16.2"), ("cursor", "1.4.2"),
           ("worldtrace-client", "0.1.0"))
ACKS = ("Tool executed successfully.", "OK", '{"status": "ok"}', "Done.")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _text_result(text: str, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def make_task(rng: random.Random) -> GenTask:
    server = rng.choice(SERVER_NAMES)
    client = rng.choice(CLIENTS)
    return GenTask("", {"server": server, "client": client})


def _args(rng: random.Random, props: dict[str, str]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for key, kind in props.items():
        if kind == "integer":
            args[key] = tx.ri(rng, 1, 5000)
        elif kind == "array":
            args[key] = [f"{tx.person(rng).split()[0].lower()}@example.com"
                         for _ in range(tx.ri(rng, 1, 3))]
        elif key in ("start", "end"):
            args[key] = f"{tx.date(rng)}T{tx.clock(rng)}:00"
        elif key in ("path", "source", "destination"):
            args[key] = f"/workspace/{tx.relpath(rng)}"
        elif key == "query":
            args[key] = (f"SELECT {', '.join(rng.sample(tx.WORDS, 3))} FROM "
                         f"{rng.choice(tx.WORDS)} WHERE {rng.choice(tx.WORDS)} > "
                         f"{tx.ri(rng, 1, 500)} LIMIT {tx.ri(rng, 5, 50)}")
        elif key in ("body", "content", "insight"):
            args[key] = tx.paragraph(rng, tx.ri(rng, 1, 3))
        else:
            args[key] = tx.words(rng, tx.ri(rng, 1, 4))
    return args


def _informative(rng: random.Random, tool: str, args: dict[str, Any]) -> str:
    n = tx.ri(rng, 2, 12)
    if tool in ("search_notes", "read_note"):
        notes = [{"id": tx.ri(rng, 1, 9999), "title": tx.sentence(rng, 2, 6),
                  "body": tx.paragraph(rng, tx.ri(rng, 1, 3)), "updated": tx.date(rng)}
                 for _ in range(n if tool == "search_notes" else 1)]
        return json.dumps(notes if tool == "search_notes" else notes[0], ensure_ascii=False)
    if tool in ("list_tables", "describe_table", "read_query"):
        if tool == "list_tables":
            return json.dumps(rng.sample(tx.WORDS, n))
        if tool == "describe_table":
            return json.dumps([{"name": tx.ident(rng), "type": rng.choice(
                ("INTEGER", "TEXT", "REAL", "DATE"))} for _ in range(n)])
        cols = rng.sample(tx.WORDS, 3)
        return json.dumps([{cols[0]: tx.ri(rng, 1, 10 ** 5), cols[1]: rng.choice(tx.CITIES),
                            cols[2]: round(rng.random() * 1000, 2)} for _ in range(n)])
    if tool in ("list_events", "get_event"):
        events = [{"id": tx.hexid(rng, 10), "title": tx.sentence(rng, 2, 5),
                   "start": f"{tx.date(rng)}T{tx.clock(rng)}:00",
                   "location": rng.choice(tx.CITIES), "attendees": [tx.person(rng)
                                                                    for _ in range(2)]}
                  for _ in range(n if tool == "list_events" else 1)]
        return json.dumps(events if tool == "list_events" else events[0], ensure_ascii=False)
    if tool == "list_directory":
        return "\n".join(f"[{'DIR' if rng.random() < 0.2 else 'FILE'}] {tx.filename(rng)}"
                         for _ in range(n * 2))
    return "\n".join(tx.code_window(rng, tx.ri(rng, 8, 60)))


def _echo(tool: str, args: dict[str, Any]) -> str:
    fields = ", ".join(f"{k}={v}" for k, v in args.items())
    return f"Created {tool.split('_', 1)[-1]} with {fields}"


def _error(rng: random.Random, tool: str, props: dict[str, str],
           required: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(bad arguments, JSON-RPC response body without id) as a FastMCP server answers them."""
    roll = rng.random()
    if roll < 0.6 and required:
        args = _args(rng, props)
        missing = rng.choice(required)
        args.pop(missing)
        text = (f"Error executing tool {tool}: 1 validation error for {tool}Arguments\n{missing}\n"
                f"  Field required [type=missing, input_value={args!r}, input_type=dict]\n"
                f"    For further information visit https://errors.pydantic.dev/2.11/v/missing")
        return args, {"result": _text_result(text, True)}
    if roll < 0.8:
        args = _args(rng, props)
        what = f"{rng.choice(tx.WORDS)} {tx.ri(rng, 1, 9999)}"
        text = f"Error executing tool {tool}: {what} not found"
        return args, {"result": _text_result(text, True)}
    return _args(rng, props), {"error": {"code": -32602, "message": f"Unknown tool: {tool}"}}


def make_turn(rng: random.Random, category: str, task: GenTask, prev: GenTurn | None,
              index: int) -> GenTurn:
    server = task.ctx["server"]
    rid = index + 1
    if index == 0:
        name, version = task.ctx["client"]
        request = {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": name, "version": version}}}
        response = {"result": {"protocolVersion": PROTOCOL, "capabilities": {
            "tools": {"listChanged": False}}, "serverInfo": {"name": server, "version": "1.12.4"}},
            "id": rid, "jsonrpc": "2.0"}
        return GenTurn(_dumps(request), _dumps(response), category, {"notify": True})
    if index == 1:
        tools = [{"name": t, "description": d, "inputSchema": _schema(p, r)}
                 for t, d, p, r, _ in SERVERS[server]]
        request = {"jsonrpc": "2.0", "id": rid, "method": "tools/list"}
        response = {"result": {"tools": tools}, "id": rid, "jsonrpc": "2.0"}
        return GenTurn(_dumps(request), _dumps(response), category)
    tools = SERVERS[server]
    if category == "unchanged" and prev is not None and "call" in prev.native:
        tool, args, body = prev.native["call"]  # the same call again: same answer, new id
    else:
        kinds = {"echo": ("create",), "boilerplate": ("ack",), "informative": ("list", "get")}
        wanted = kinds.get(category)
        choices = [t for t in tools if wanted is None or t[4] in wanted] or tools
        tool, _, props, required, _ = rng.choice(choices)
        if category == "error":
            args, body = _error(rng, tool, props, required)
        else:
            args = _args(rng, props)
            if category == "echo":
                body = {"result": _text_result(_echo(tool, args))}
            elif category == "boilerplate":
                body = {"result": _text_result(rng.choice(ACKS))}
            elif category == "empty":
                body = {"result": {"content": []}}
            else:
                body = {"result": _text_result(_informative(rng, tool, args))}
                category = "informative"
    request = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
               "params": {"name": tool, "arguments": args}}
    response = dict(body, id=rid, jsonrpc="2.0")
    return GenTurn(_dumps(request), _dumps(response), category, {"call": (tool, args, body)})


def render(rng: random.Random, task: GenTask, turns: list[GenTurn]) -> bytes:
    lines = []
    for turn in turns:
        lines.append(f"--> {turn.action}")
        lines.append(f"<-- {turn.observation}")
        if turn.native.get("notify"):
            lines.append('--> {"jsonrpc":"2.0","method":"notifications/initialized"}')
    lines.append("exit code: 0")
    return ("\n".join(lines) + "\n").encode("utf-8")
