"""MCP collector: real MCP servers over stdio, a scripted client, raw JSON-RPC transcripts.

Each trajectory starts a fresh server process (`mcp_servers`: notes, shop database, calendar)
with its own seeded state folder, and speaks newline-delimited JSON-RPC over the process's
stdin/stdout: initialize, notifications/initialized, tools/list, then tools/call, including bad
arguments, unknown tools and missing records, whose errors are the server's own. Every line that
crosses the pipe is logged as it went (`--> ` client to server, `<-- ` server to client), and
the server's exit status closes the transcript, like the learn-mcp transcript tool's output.

Starting Python and importing the SDK costs ~1.5 s a process, so on POSIX the server processes
are forked from a small "zygote" process that has imported `mcp_servers` once (it gets each
server's pipe ends over a Unix socket); each server is still a separate process serving its own
stdio pipes and reporting its exit status. Elsewhere `python -m` is spawned per server.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from sources.factory.collect_util import (
    fresh_dir,
    run_indexed,
    trajectory_rng,
    workers_for,
    write_text,
)
from sources.factory.mcp_scenarios import SCENARIOS, seed_state
from sources.factory.mcp_servers import SERVER_KINDS

PROTOCOL_VERSION = "2025-11-25"


class _Zygote:
    """One preloaded `mcp_servers.zygote` process per collector process, forking servers."""

    _lock = threading.Lock()
    _instance: _Zygote | None = None

    def __init__(self) -> None:
        self.control, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"from sources.factory.mcp_servers import zygote; zygote({child.fileno()})",
            ],
            pass_fds=[child.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=root,
            env=env,
        )
        child.close()

    @classmethod
    def get(cls) -> _Zygote:
        with cls._lock:
            if cls._instance is None or cls._instance.process.poll() is not None:
                cls._instance = cls()
            return cls._instance

    @classmethod
    def shutdown(cls) -> None:
        """Close the control socket: the zygote exits (running servers are unaffected)."""
        with cls._lock:
            if cls._instance is not None:
                cls._instance.control.close()
                cls._instance.process.wait(10)
                cls._instance = None

    def spawn(self, kind: str, data: Path, fds: list[int]) -> None:
        with self._lock:
            socket.send_fds(
                self.control, [json.dumps({"kind": kind, "data": str(data)}).encode()], fds
            )


class ServerProcess:
    """A running MCP server with its stdio pipes: forked by the zygote, or spawned."""

    def __init__(self, kind: str, data: Path) -> None:
        self._popen: subprocess.Popen[bytes] | None = None
        if not hasattr(socket, "send_fds") or not hasattr(os, "fork"):
            self._popen = subprocess.Popen(
                [sys.executable, "-m", "sources.factory.mcp_servers", kind, "--data", str(data)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=Path(__file__).resolve().parents[2],
            )
            self.write_fd = self._popen.stdin.fileno()  # type: ignore[union-attr]
            self.read_fd = self._popen.stdout.fileno()  # type: ignore[union-attr]
            return
        child_in, self.write_fd = os.pipe()
        self.read_fd, child_out = os.pipe()
        self._status_fd, child_status = os.pipe()
        try:
            _Zygote.get().spawn(kind, data, [child_in, child_out, child_status])
        finally:
            for fd in (child_in, child_out, child_status):
                os.close(fd)

    def close_stdin(self) -> None:
        if self._popen is not None:
            self._popen.stdin.close()  # type: ignore[union-attr]
        else:
            os.close(self.write_fd)

    def wait(self, timeout: float = 10.0) -> int:
        """The server's exit status once it has ended (after stdin closed)."""
        if self._popen is not None:
            try:
                code = self._popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self._popen.kill()
                code = self._popen.wait()
            self._popen.stdout.close()  # type: ignore[union-attr]
            return code
        status, deadline = b"", time.monotonic() + timeout
        while b"exit " not in status:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._status_fd], [], [], left)[0]:
                break
            if not (chunk := os.read(self._status_fd, 64)):
                break  # the server is gone without reporting (killed)
            status += chunk
        os.close(self._status_fd)
        os.close(self.read_fd)
        fields = dict(line.split(" ", 1) for line in status.decode().splitlines() if " " in line)
        if "exit" not in fields and "pid" in fields:  # still running after `timeout`: end it
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(fields["pid"]), signal.SIGKILL)
        return int(fields.get("exit", -9))


class McpClient:
    """Newline-delimited JSON-RPC over a server's stdio, every line logged as it was sent/read."""

    def __init__(self, server: ServerProcess, timeout: float = 20.0) -> None:
        self.server = server
        self.timeout = timeout
        self.lines: list[str] = []
        self._next_id = 1
        self._buffer = b""

    def _send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        self.lines.append(f"--> {line}")
        data = (line + "\n").encode()
        while data:
            data = data[os.write(self.server.write_fd, data) :]

    def _read_line(self) -> str:
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.server.read_fd], [], [], left)[0]:
                raise TimeoutError("MCP server did not answer in time")
            chunk = os.read(self.server.read_fd, 65536)
            if not chunk:
                raise RuntimeError("MCP server closed its stdout")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\n", 1)
        line = raw.decode("utf-8").rstrip("\r")
        self.lines.append(f"<-- {line}")
        return line

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and read lines until its response (server notifications are logged)."""
        request_id, self._next_id = self._next_id, self._next_id + 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        while True:
            reply = json.loads(self._read_line())
            if reply.get("id") == request_id and ("result" in reply or "error" in reply):
                return reply

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[Any, bool]:
        """tools/call: (decoded result or error text, is_error)."""
        reply = self.request("tools/call", {"name": tool, "arguments": arguments})
        if "error" in reply:
            return reply["error"].get("message", ""), True
        result = reply["result"]
        if "structuredContent" in result and not result.get("isError"):
            content = result["structuredContent"]
            return content.get("result", content), False
        text = "".join(part.get("text", "") for part in result.get("content", []))
        if result.get("isError"):
            return text, True
        try:
            return json.loads(text), False
        except json.JSONDecodeError:
            return text, False


def collect_one(index: int, seed: int, out_dir: Path, work_dir: Path) -> int:
    """One session against a fresh server; writes the transcript, returns the number of requests."""
    rng = trajectory_rng(seed, "mcp", index)
    kinds = SERVER_KINDS
    kind = kinds[index % len(kinds)]
    data = fresh_dir(work_dir / f"mcp-{index:05d}")
    seed_state(kind, data, rng)
    server = ServerProcess(kind, data)
    client = McpClient(server)
    try:
        client.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "worldtrace-scripted-client", "version": "1.0"},
            },
        )
        client.notify("notifications/initialized")
        client.request("tools/list")
        SCENARIOS[kind](client, rng)
    finally:
        server.close_stdin()
        code = server.wait()
    client.lines.append(f"exit code: {code}")
    write_text(out_dir / f"mcp-collected-{index:05d}-{kind}.txt", "\n".join(client.lines) + "\n")
    return sum(line.startswith("--> ") and '"id":' in line for line in client.lines)


def collect(out_dir: Path, n: int, seed: int, work_dir: Path) -> list[int]:
    """Collect `n` MCP transcripts into `out_dir`; returns requests per transcript."""
    try:
        return run_indexed(
            lambda i: collect_one(i, seed, out_dir, work_dir), range(n), workers_for(n)
        )
    finally:
        _Zygote.shutdown()
