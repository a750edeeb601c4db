"""One simulated MCP session: who answers each tools/call, and the history the model reads.

The history starts with the session's opening (initialize, tools/list) and grows by one turn a
call: the request line and the response line the client was given. Free-running, the world model
answers every call from that history. Anchored, the calls to read-only tools are answered by the
anchor (the real server, or in a replay the recording) and that answer enters the history as
observed state; every other call is predicted by the model from it. Writes are not sent to the
anchor unless `forward_writes`: a simulation never changes a real system by default.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import mcp_types as types

from bench.parsing import format_prediction, parse_prediction
from bench.prompts import system_prompt
from bench.sample import BenchSample
from bench.simulate import wire
from bench.simulate.tools import ToolSet, Turn
from bench.simulate.world_model import WorldModel

DOMAIN = "mcp"
MODEL, ANCHOR = "model", "anchor"


class Anchor(Protocol):
    """What answers the anchored calls: the response line to one request."""

    async def answer(self, request_id: int, name: str, arguments: dict[str, Any]) -> str: ...


@dataclass(frozen=True)
class Step:
    """One answered call: its depth (1 = the session's first tools/call), the lines the history
    took, the raw text behind the answer (the model's, or the anchor's in the model's format),
    who answered, and how long it took."""

    depth: int
    tool: str
    action: str
    observation: str
    raw: str
    answered_by: str
    seconds: float


def request_id(action: str) -> int | None:
    """The integer id of a request line (None when it has none)."""
    try:
        value = json.loads(action).get("id")
    except (json.JSONDecodeError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _last_id(turns: Iterable[Turn]) -> int:
    return max((request_id(action) or 0 for action, _ in turns), default=0)


@dataclass
class Simulation:
    """A session against the world model (and an anchor, when given)."""

    toolset: ToolSet
    model: WorldModel
    anchor: Anchor | None = None
    read_only: frozenset[str] = frozenset()
    forward_writes: bool = False
    session_id: str = "simulate-mcp"
    history: list[Turn] = field(init=False)
    steps: list[Step] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.history = list(self.toolset.opening)
        self._next_id = _last_id(self.history) + 1
        self._system = system_prompt(DOMAIN)

    @property
    def anchored(self) -> bool:
        return self.anchor is not None

    def sample(self, action: str) -> BenchSample:
        """The bench sample the model is asked: the session so far, then this request."""
        turn = len(self.history) + 1
        return BenchSample(domain=DOMAIN, id=f"{self.session_id}-{turn}", history=self.history,
                           current_action=action, reference="", system_prompt=self._system,
                           turn_idx=turn, total_turns=turn, trajectory_id=self.session_id,
                           source="simulate-mcp")

    async def call(self, name: str, arguments: dict[str, Any], action: str | None = None
                   ) -> types.CallToolResult:
        """Answer one tools/call and add it to the history (`action`: the request line as
        recorded, in a replay; else it is written here). ModelTimeout (or the anchor's error)
        when no answer comes: then the call leaves no turn behind."""
        number = request_id(action) if action else None
        number = number if number is not None else self._next_id
        self._next_id = max(self._next_id, number + 1)
        action = action or wire.call_line(number, name, arguments)
        start = time.perf_counter()
        if self.anchor is not None and name in self.read_only:
            observation = await self.anchor.answer(number, name, arguments)
            raw, answered_by = format_prediction(observation), ANCHOR
        else:
            if self.anchor is not None and self.forward_writes:
                await self.anchor.answer(number, name, arguments)  # the real state follows
            raw = await self.model.predict(self.sample(action))
            observation, answered_by = parse_prediction(raw).judged_text, MODEL
        self.history.append((action, observation))
        self.steps.append(Step(len(self.steps) + 1, name, action, observation, raw, answered_by,
                               time.perf_counter() - start))
        return wire.tool_result(observation)
