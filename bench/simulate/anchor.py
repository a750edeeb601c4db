"""A real MCP server beside the simulation, spoken to with the SDK's stdio client.

`connect(command)` starts the server (a shell-style command line), initializes it and lists its
tools; a command that cannot start, exits, or does not answer within the deadline is an
AnchorError naming the command (with the end of what it wrote to stderr). The same connection
serves `--like-server` (only its tool list is used) and `--anchor-server` (read-only calls are
answered by it).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.simulate.errors import AnchorError
from bench.simulate.tools import ToolSet, toolset_from_server
from bench.simulate.wire import response_line, result_dict

STDERR_TAIL = 600  # characters of the server's stderr quoted in an error


@dataclass
class AnchorServer:
    """A live, initialized server: its tool set, and calls to it."""

    command: str
    session: ClientSession
    toolset: ToolSet
    timeout_s: float
    calls: int = 0

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The server's own result of a tools/call, as the wire carries it (a protocol error
        comes back as an error result, as an agent would see it)."""
        self.calls += 1
        try:
            with anyio.fail_after(self.timeout_s):
                result = await self.session.call_tool(name, arguments)
        except TimeoutError:
            raise AnchorError(f"anchor server {self.command!r} did not answer {name} within "
                              f"{self.timeout_s:g} s") from None
        except Exception as error:  # an MCPError from the server, or the connection closing
            if type(error).__name__ != "MCPError":
                raise AnchorError(f"anchor server {self.command!r} failed on {name}: "
                                  f"{error}") from error
            return {"content": [{"type": "text", "text": str(error)}], "isError": True}
        return result_dict(result)

    async def answer(self, request_id: int, name: str, arguments: dict[str, Any]) -> str:
        """The server's response line to this call, in the session's layout."""
        return response_line(request_id, await self.call(name, arguments))


def _argv(command: str) -> list[str]:
    argv = shlex.split(command)
    if not argv:
        raise AnchorError("the server command is empty")
    return argv


def _tail(errlog: Any) -> str:
    errlog.flush()
    errlog.seek(0)
    text = errlog.read()[-STDERR_TAIL:].strip()
    return f"; its stderr ends: {text}" if text else ""


async def _list_all(session: ClientSession) -> list[types.Tool]:
    tools, cursor = [], None
    while True:
        page = await session.list_tools(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += page.tools
        if not (cursor := page.next_cursor):
            return tools


@contextlib.asynccontextmanager
async def connect(command: str, timeout_s: float = 30.0, cwd: str | None = None
                  ) -> AsyncIterator[AnchorServer]:
    """The running server for the duration of the block (stopped on exit)."""
    argv = _argv(command)
    # The whole environment, not the SDK's short default list: a real server may need its own
    # variables (a database URL, credentials, PYTHONPATH).
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=cwd, env=dict(os.environ))
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    read, write = await stack.enter_async_context(stdio_client(params, errlog))
                    session = await stack.enter_async_context(ClientSession(read, write))
                    with anyio.fail_after(timeout_s):
                        initialized = await session.initialize()
                        tools = await _list_all(session)
                except TimeoutError:
                    raise AnchorError(f"server {command!r} did not answer initialize and "
                                      f"tools/list within {timeout_s:g} s{_tail(errlog)}"
                                      ) from None
                except Exception as error:  # it exited, or could not start: say which command
                    raise AnchorError(f"server {command!r} did not start or exited before "
                                      "answering initialize: "
                                      f"{error or type(error).__name__}{_tail(errlog)}"
                                      ) from None
                yield AnchorServer(command, session, toolset_from_server(initialized, tools),
                                   timeout_s)
        except BaseExceptionGroup as group:  # the SDK's task groups wrap what the block raised
            raise _first_leaf(group) from None


def _first_leaf(group: BaseExceptionGroup) -> BaseException:
    """The first exception in a (nested) group: the one the caller would have seen."""
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
