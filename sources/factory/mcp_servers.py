"""Three real MCP servers built with the `mcp` SDK (MCPServer): notes, an SQLite shop, a calendar.

Run one over stdio: `python -m sources.factory.mcp_servers notes --data DIR`. State lives in
DIR (a JSON file or an SQLite database), so a server starts from whatever the collector seeded
there. The calendar's clock is fixed (FIXED_DATE) so transcripts repeat. Expected failures raise
`ToolError`, whose message the SDK returns as a tool result with `isError: true`; argument
validation errors come from the SDK itself (pydantic).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import socket
import sqlite3
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from sources.factory.collect_util import FIXED_DATE

SERVER_KINDS = ("notes", "shopdb", "calendar")
# The tools that only read state, by the name each server reports (serverInfo.name): declared
# here rather than as readOnlyHint annotations, which would change every recorded tools/list.
# `worldtrace simulate-mcp` answers these from the real server in anchored mode.
READ_ONLY_TOOLS: dict[str, tuple[str, ...]] = {
    "notes": ("get_note", "list_notes", "search_notes"),
    "shop-db": ("list_tables", "describe_table", "read_query"),
    "calendar": ("today", "list_events", "find_free_slot"),
}
WORK_START, WORK_END = 9 * 60, 17 * 60


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _save(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")


def notes_server(data: Path) -> MCPServer:
    """A notes store: titled notes with tags, kept in notes.json."""
    app = MCPServer("notes", version="1.2.0", instructions="A personal notes store.")
    store = data / "notes.json"

    @app.tool()
    def add_note(title: str, body: str, tags: list[str] | None = None) -> dict[str, Any]:
        """Create a note. Titles are unique."""
        notes = _load(store)
        if title in notes:
            raise ToolError(f"a note titled {title!r} already exists")
        notes[title] = {"body": body, "tags": sorted(set(tags or []))}
        _save(store, notes)
        return {"title": title, "tags": notes[title]["tags"], "notes_total": len(notes)}

    @app.tool()
    def get_note(title: str) -> dict[str, Any]:
        """Return one note by its exact title."""
        notes = _load(store)
        if title not in notes:
            raise ToolError(f"no note titled {title!r}")
        return {"title": title, **notes[title]}

    @app.tool()
    def list_notes(tag: str | None = None) -> list[dict[str, Any]]:
        """List notes (title and tags), optionally only those with a tag."""
        notes = _load(store)
        return [
            {"title": t, "tags": n["tags"]}
            for t, n in sorted(notes.items())
            if tag is None or tag in n["tags"]
        ]

    @app.tool()
    def search_notes(query: str) -> list[str]:
        """Titles of notes whose title or body contains the query (case-insensitive)."""
        q = query.lower()
        return [
            t for t, n in sorted(_load(store).items()) if q in t.lower() or q in n["body"].lower()
        ]

    @app.tool()
    def append_to_note(title: str, text: str) -> dict[str, Any]:
        """Append a line to a note's body."""
        notes = _load(store)
        if title not in notes:
            raise ToolError(f"no note titled {title!r}")
        notes[title]["body"] += "\n" + text
        _save(store, notes)
        return {"title": title, "lines": notes[title]["body"].count("\n") + 1}

    @app.tool()
    def delete_note(title: str) -> str:
        """Delete a note."""
        notes = _load(store)
        if notes.pop(title, None) is None:
            raise ToolError(f"no note titled {title!r}")
        _save(store, notes)
        return f"deleted {title!r}; {len(notes)} notes left"

    return app


def shopdb_server(data: Path) -> MCPServer:
    """An SQLite database of products and orders (shop.db)."""
    app = MCPServer("shop-db", version="0.9.1", instructions="Read and change the shop database.")
    db_path = data / "shop.db"

    def connect() -> sqlite3.Connection:
        return sqlite3.connect(db_path)

    @app.tool()
    def list_tables() -> list[str]:
        """Names of the tables."""
        with connect() as db:
            rows = db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
            return [name for (name,) in rows]

    @app.tool()
    def describe_table(table: str) -> list[dict[str, Any]]:
        """Columns of a table: name, type, primary key."""
        with connect() as db:
            rows = db.execute(
                "SELECT name, type, pk FROM pragma_table_info(?)", (table,)
            ).fetchall()
        if not rows:
            raise ToolError(f"no such table: {table}")
        return [{"column": name, "type": kind, "primary_key": bool(pk)} for name, kind, pk in rows]

    @app.tool()
    def read_query(sql: str) -> list[dict[str, Any]]:
        """Run a SELECT and return its rows."""
        if not sql.lstrip().lower().startswith(("select", "with")):
            raise ToolError("read_query only runs SELECT statements; use write_query")
        try:
            with connect() as db:
                cursor = db.execute(sql)
                names = [c[0] for c in cursor.description or []]
                return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        except sqlite3.Error as error:
            raise ToolError(f"SQLite error: {error}") from None

    @app.tool()
    def write_query(sql: str) -> dict[str, int]:
        """Run an INSERT, UPDATE or DELETE; returns the number of rows changed."""
        if sql.lstrip().lower().startswith(("select", "with")):
            raise ToolError("write_query does not run SELECT statements; use read_query")
        try:
            with connect() as db:
                return {"rows_affected": db.execute(sql).rowcount}
        except sqlite3.Error as error:
            raise ToolError(f"SQLite error: {error}") from None

    return app


def _minutes(text: str) -> int:
    try:
        hours, minutes = text.split(":")
        value = int(hours) * 60 + int(minutes)
    except ValueError:
        raise ToolError(f"time must be HH:MM, got {text!r}") from None
    if not 0 <= value < 24 * 60:
        raise ToolError(f"time out of range: {text!r}")
    return value


def _day(text: str) -> str:
    try:
        return dt.date.fromisoformat(text).isoformat()
    except ValueError as error:
        raise ToolError(str(error)) from None


def calendar_server(data: Path) -> MCPServer:
    """A calendar with a fixed clock (today is FIXED_DATE), events in calendar.json."""
    app = MCPServer("calendar", version="2.0.3", instructions="A calendar; dates are YYYY-MM-DD.")
    store = data / "calendar.json"

    def events() -> list[dict[str, Any]]:
        return _load(store).get("events", [])

    def busy(day: str) -> list[tuple[int, int]]:
        return sorted(
            (_minutes(e["start"]), _minutes(e["start"]) + e["minutes"])
            for e in events()
            if e["date"] == day
        )

    @app.tool()
    def today() -> dict[str, str]:
        """Today's date and weekday."""
        day = dt.date.fromisoformat(FIXED_DATE)
        return {"date": day.isoformat(), "weekday": day.strftime("%A")}

    @app.tool()
    def list_events(date: str) -> list[dict[str, Any]]:
        """Events on a day, by start time."""
        day = _day(date)
        return sorted((e for e in events() if e["date"] == day), key=lambda e: e["start"])

    @app.tool()
    def create_event(title: str, date: str, start: str, duration_minutes: int) -> dict[str, Any]:
        """Add an event; refuses overlaps and events outside 09:00-17:00."""
        day, begin = _day(date), _minutes(start)
        if duration_minutes <= 0:
            raise ToolError("duration_minutes must be positive")
        end = begin + duration_minutes
        if begin < WORK_START or end > WORK_END:
            raise ToolError("events must fit between 09:00 and 17:00")
        for other_start, other_end in busy(day):
            if begin < other_end and other_start < end:
                raise ToolError(
                    f"overlaps an event from {other_start // 60:02d}:{other_start % 60:02d}"
                    f" to {other_end // 60:02d}:{other_end % 60:02d}"
                )
        state = _load(store)
        state["next_id"] = state.get("next_id", 1)
        event = {
            "id": state["next_id"],
            "title": title,
            "date": day,
            "start": start,
            "minutes": duration_minutes,
        }
        state["next_id"] += 1
        state.setdefault("events", []).append(event)
        _save(store, state)
        return event

    @app.tool()
    def delete_event(event_id: int) -> str:
        """Remove an event by id."""
        state = _load(store)
        kept = [e for e in state.get("events", []) if e["id"] != event_id]
        if len(kept) == len(state.get("events", [])):
            raise ToolError(f"no event with id {event_id}")
        state["events"] = kept
        _save(store, state)
        return f"deleted event {event_id}"

    @app.tool()
    def find_free_slot(date: str, duration_minutes: int) -> dict[str, str]:
        """The first free slot of that length between 09:00 and 17:00."""
        day, cursor = _day(date), WORK_START
        for other_start, other_end in busy(day) + [(WORK_END, WORK_END)]:
            if other_start - cursor >= duration_minutes:
                return {"date": day, "start": f"{cursor // 60:02d}:{cursor % 60:02d}"}
            cursor = max(cursor, other_end)
        raise ToolError(f"no free slot of {duration_minutes} minutes on {day}")

    return app


BUILDERS = {"notes": notes_server, "shopdb": shopdb_server, "calendar": calendar_server}


def build(kind: str, data: Path) -> MCPServer:
    """The server of that kind, keeping its state in `data`."""
    return BUILDERS[kind](data)


def zygote(control_fd: int) -> None:
    """Fork one server process per request arriving on a SEQPACKET socket, until it closes.

    A request is a JSON `{"kind", "data"}` with three descriptors: the server's stdin and stdout
    pipe ends and a status pipe on which the server writes "pid N" when it starts and "exit N"
    when it ends. The SDK is imported once here, so each server starts in milliseconds instead
    of a second and a half.
    """
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    control = socket.socket(fileno=control_fd)
    while True:
        message, fds, _, _ = socket.recv_fds(control, 4096, 3)
        if not message:
            return
        request = json.loads(message)
        if os.fork() == 0:
            control.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            code = 1
            try:
                os.write(fds[2], f"pid {os.getpid()}\n".encode())
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(fds[0], 0)
                os.dup2(fds[1], 1)
                os.dup2(null, 2)
                for fd in (fds[0], fds[1], null):
                    os.close(fd)
                build(request["kind"], Path(request["data"])).run()
                code = 0
            finally:
                os.write(fds[2], f"exit {code}\n".encode())
                os._exit(code)
        for fd in fds:
            os.close(fd)


def main(argv: list[str] | None = None) -> None:
    """Serve one MCP server over stdio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("kind", choices=SERVER_KINDS)
    parser.add_argument(
        "--data", type=Path, required=True, help="folder holding the server's state"
    )
    args = parser.parse_args(argv)
    build(args.kind, args.data).run()


if __name__ == "__main__":
    main(sys.argv[1:])
