"""The world model as an MCP environment (`worldtrace simulate-mcp`): a real MCP server whose
tool calls are answered by a world model, free-running or anchored to a real server's state,
and its fidelity on recorded sessions.

- wire.py        JSON-RPC lines in the recorded transcript layout; a prediction -> a tool result
- tools.py       the tool list: from a tools file, a recorded transcript or a live server
- world_model.py the model (local folder or OpenAI-compatible URL) with a reply deadline
- anchor.py      the real server beside the simulation (the SDK's stdio client)
- simulation.py  one simulated session: who answers each call, the history the model reads
- server.py      the MCP server (the SDK's low-level Server over stdio)
- replay.py      recorded sessions replayed free and anchored, judged by the bench judges
- fidelity.py    fidelity by depth with bootstrap intervals, and its plot
"""
