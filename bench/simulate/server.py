"""`simulate-mcp`: an MCP server over stdio (the SDK's low-level Server) answered by a world model.

tools/list gives the tools of the tools file or of the server it imitates; tools/call goes to the
Simulation (bench/simulate/simulation.py). What the model predicts as a failure comes back as a
tool error (isError); a call the model does not answer within the deadline, or that the anchor
fails, is a JSON-RPC error, so a client is never left waiting. Everything is checked before the
server starts answering (tools, model folder, anchor), and nothing but MCP goes to stdout.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from bench.model_folder import check_model_folder
from bench.simulate.anchor import AnchorServer, connect
from bench.simulate.errors import AnchorError
from bench.simulate.simulation import Simulation
from bench.simulate.tools import ToolSet, read_tools_file
from bench.simulate.world_model import ModelTimeout, WorldModel, WorldModelConfig


@dataclass(frozen=True)
class SimulateConfig:
    """The model, where the tools come from (a file or a server to imitate), the optional
    anchor, and which tools it answers beyond those annotated readOnlyHint."""

    model: WorldModelConfig
    tools_file: Path | None = None
    like_server: str | None = None
    anchor_server: str | None = None
    read_only: Sequence[str] = ()
    forward_writes: bool = False
    server_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if (self.tools_file is None) == (self.like_server is None):
            raise ValueError("give exactly one of a tools file and a server to imitate")


def build_server(simulation: Simulation) -> Server:
    """The MCP server whose tools/call the simulation answers."""
    toolset = simulation.toolset

    async def list_tools(ctx, params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=toolset.mcp_tools())

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            return await simulation.call(params.name, dict(params.arguments or {}))
        except ModelTimeout as error:
            raise MCPError(types.REQUEST_TIMEOUT, str(error)) from None
        except (AnchorError, RuntimeError) as error:
            raise MCPError(types.INTERNAL_ERROR, str(error)) from None

    mode = "anchored" if simulation.anchored else "free-running"
    return Server(f"{toolset.server_name}", version="simulated",
                  description=f"{toolset.server_name} simulated by the world model "
                              f"{simulation.model.name} ({mode})",
                  instructions=toolset.instructions, on_list_tools=list_tools,
                  on_call_tool=call_tool)


@contextlib.asynccontextmanager
async def _servers(config: SimulateConfig) -> AsyncIterator[tuple[ToolSet, AnchorServer | None]]:
    """The tool set and the running anchor (if any), both stopped on exit."""
    async with contextlib.AsyncExitStack() as stack:
        toolset = read_tools_file(config.tools_file) if config.tools_file else None
        if config.like_server:
            imitated = await stack.enter_async_context(
                connect(config.like_server, config.server_timeout_s))
            toolset = imitated.toolset
        anchor = None
        if config.anchor_server:
            anchor = await stack.enter_async_context(
                connect(config.anchor_server, config.server_timeout_s))
            missing = sorted(set(toolset.names) - set(anchor.toolset.names))
            if missing:
                raise AnchorError(f"anchor server {config.anchor_server!r} lacks tools the "
                                  f"simulation lists: {', '.join(missing)}")
        yield toolset, anchor


async def run(config: SimulateConfig) -> None:
    """Check everything, then serve MCP over stdio until the client closes it."""
    if not config.model.is_url:
        check_model_folder(Path(config.model.model))  # before any server starts
    async with _servers(config) as (toolset, anchor):
        read_only = frozenset()
        if anchor is not None:  # annotated or declared read-only, by either tool list
            read_only = ((toolset.read_only(config.read_only)
                          | anchor.toolset.read_only(config.read_only)) & set(toolset.names))
        with contextlib.redirect_stdout(sys.stderr):  # stdout carries MCP only
            model = WorldModel.load(config.model)
        simulation = Simulation(toolset, model, anchor, read_only, config.forward_writes)
        print(f"simulate-mcp: {len(toolset.tools)} tools of {toolset.server_name}, model "
              f"{model.name}, " + (f"anchored on {config.anchor_server!r} for "
                                   f"{', '.join(sorted(read_only)) or 'no tool'}"
                                   if anchor else "free-running"), file=sys.stderr)
        server = build_server(simulation)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
