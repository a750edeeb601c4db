"""Recorded MCP sessions replayed against the simulation, free-running and anchored, and judged.

A session is replayed call by call with its own requests (the recorded lines, verbatim): the
simulation answers each tools/call as `simulate-mcp` would, and that answer is judged against
the real one by the bench's rubric and the MCP rule verifier, with the real history as the
judge's context, and, when one is given, by the bench's LLM judge too (its own score column; a
call it could not grade keeps its row, with the judge's reason). Free-running, the model
answers every call from its own earlier answers. Anchored, the read-only calls are answered by
the real server's recorded answer at that point (the recording is the real server; its state
there includes the session's real writes, as a live anchor with --forward-writes would have it)
and the writes are predicted. Other requests after the opening (a second tools/list, a ping)
enter both histories as recorded.

Sessions come from a data directory (the bench pool of its MCP trajectories: never the train
pool) or from transcript files; a session without a tools/list before its first call cannot be
simulated (no tools to list) and is counted as skipped with its reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import duckdb

from bench.diagnostics import llm_judge_rows
from bench.evaluate import judge_outputs
from bench.judges.llm_judge import LLMJudge
from bench.prompts import system_prompt
from bench.sample import BenchSample
from bench.simulate.errors import SessionsError, ToolsFileError
from bench.simulate.simulation import DOMAIN, Simulation
from bench.simulate.tools import ToolSet, Turn, toolset_from_turns
from bench.simulate.world_model import ModelTimeout, WorldModel
from quality.tables import SCRUBBED_TURNS, TRAJECTORY_SPLIT
from sources.readers.mcp_jsonrpc import McpJsonRpcReader
from sources.schema import Quarantine
from sources.storage import load_sql

FREE, ANCHORED = "free", "anchored"
MODES = (FREE, ANCHORED)


@dataclass(frozen=True)
class ReplayConfig:
    """How much to replay (0: everything) and which tools count as read-only beyond the
    recorded annotations and the trace factory's declarations."""

    sessions: int = 0
    calls: int = 0
    read_only: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecordedSession:
    """A real session: its turns, where it came from, and its tool set."""

    session_id: str
    source: str
    turns: tuple[Turn, ...]
    toolset: ToolSet


@dataclass
class SessionSet:
    """The sessions to replay, and those that could not be (id -> why)."""

    sessions: list[RecordedSession] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.sessions)


def _request(action: str) -> dict[str, Any]:
    try:
        message = json.loads(action)
    except json.JSONDecodeError:
        return {}
    return message if isinstance(message, dict) else {}


def _add(found: SessionSet, session_id: str, source: str, turns: Sequence[Turn]) -> None:
    try:
        toolset = toolset_from_turns(turns, session_id)
    except ToolsFileError as error:
        found.skipped[session_id] = str(error)
        return
    if len(toolset.opening) == len(turns):
        found.skipped[session_id] = f"{session_id}: no tools/call to replay"
        return
    found.sessions.append(RecordedSession(session_id, source, tuple(turns), toolset))


def _from_data_dir(data_dir: Path) -> SessionSet:
    turns_path = SCRUBBED_TURNS.domain_glob(data_dir, DOMAIN)
    split_path = TRAJECTORY_SPLIT.path(data_dir, DOMAIN)
    for path, there in ((turns_path, SCRUBBED_TURNS.has(data_dir, DOMAIN)),
                        (split_path, split_path.exists())):
        if not there:
            raise SessionsError(f"{path} is missing: --replay DIR reads the bench pool of the "
                                "data directory's MCP trajectories")
    found = SessionSet()
    current: tuple[str, str] | None = None
    turns: list[Turn] = []
    with duckdb.connect() as con:
        cursor = con.execute(load_sql(__file__, "replay_sessions.sql"),
                             {"turns": str(turns_path), "split": str(split_path)})
        while (row := cursor.fetchone()) is not None:
            if current is not None and row[0] != current[0]:
                _add(found, *current, turns)
                turns = []
            current = (row[0], row[1])
            turns.append((row[2], row[3]))
    if current is not None:
        _add(found, *current, turns)
    return found


def _from_transcripts(path: Path) -> SessionSet:
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    reader, found = McpJsonRpcReader(), SessionSet()
    for file in files:
        head = file.open("rb").read(4096).decode("utf-8", errors="replace")
        if not reader.sniff(file, head):
            found.skipped[str(file)] = f"{file}: not an MCP JSON-RPC transcript"
            continue
        for item in reader.read(file):
            if not isinstance(item, Quarantine):
                _add(found, f"{file.name}:{item.position}", "transcripts",
                     [(t.action, t.observation) for t in item.turns])
    return found


def _spread(sessions: list[RecordedSession], limit: int) -> list[RecordedSession]:
    """At most `limit` sessions, taken in turn from each source (in id order), so a bounded
    replay still covers every source."""
    by_source: dict[str, list[RecordedSession]] = {}
    for session in sorted(sessions, key=lambda s: s.session_id):
        by_source.setdefault(session.source, []).append(session)
    picked: list[RecordedSession] = []
    queues = [list(group) for _, group in sorted(by_source.items())]
    while len(picked) < limit and any(queues):
        for queue in queues:
            if queue and len(picked) < limit:
                picked.append(queue.pop(0))
    return sorted(picked, key=lambda s: s.session_id)


def read_sessions(path: Path, config: ReplayConfig = ReplayConfig()) -> SessionSet:
    """The sessions under `path`: a data directory, a transcript file or a folder of them."""
    path = Path(path)
    if not path.exists():
        raise SessionsError(f"{path}: no such data directory or transcript file")
    is_data_dir = path.is_dir() and SCRUBBED_TURNS.dir(path).is_dir()
    found = _from_data_dir(path) if is_data_dir else _from_transcripts(path)
    if not found.sessions:
        reasons = "; ".join(list(found.skipped.values())[:3])
        raise SessionsError(f"{path}: no MCP session to replay" + (f" ({reasons})"
                                                                   if reasons else ""))
    if config.sessions:
        found.sessions = _spread(found.sessions, config.sessions)
    return found


class RecordedAnchor:
    """Answers an anchored call with the real server's recorded answer to it."""

    def __init__(self) -> None:
        self.observation = ""

    async def answer(self, request_id: int, name: str, arguments: dict[str, Any]) -> str:
        return self.observation


def _judge_sample(session: RecordedSession, index: int, mode: str, depth: int) -> BenchSample:
    """The real turn as the judge sees it: the real history before it, the real answer."""
    action, observation = session.turns[index]
    return BenchSample(domain=DOMAIN, id=f"{session.session_id}#{depth}/{mode}",
                       history=session.turns[:index], current_action=action,
                       reference=observation, system_prompt=system_prompt(DOMAIN),
                       turn_idx=index + 1, total_turns=len(session.turns),
                       trajectory_id=session.session_id, source=session.source)


@dataclass(frozen=True)
class _Answered:
    """One replayed call, before it is judged."""

    sample: BenchSample
    tool: str
    kind: str
    raw: str
    answered_by: str
    seconds: float
    failure: str
    prediction: str


def _judged_rows(session: RecordedSession, mode: str, model_name: str,
                 answered: list[_Answered], llm_judge: LLMJudge | None
                 ) -> list[dict[str, Any]]:
    """The rubric's (and the LLM judge's) verdicts on one session's calls, one row each; the
    LLM judge is asked about the whole session at once (its endpoint's concurrency)."""
    samples, raws = [a.sample for a in answered], [a.raw for a in answered]
    failures = {a.sample.id: a.failure for a in answered if a.failure}
    rubric = judge_outputs(samples, raws, model_name, failures)
    llm = llm_judge_rows(llm_judge, samples, raws, model_name, failures)[0] \
        if llm_judge is not None and answered else [None] * len(answered)
    rows = []
    for depth, (call, judged, second) in enumerate(zip(answered, rubric, llm, strict=True),
                                                   start=1):
        rows.append({
            "model": model_name, "session": session.session_id, "source": session.source,
            "mode": mode, "depth": depth, "tool": call.tool, "kind": call.kind,
            "answered_by": call.answered_by, "score": judged["score"],
            "rule_score": judged["rule_score"], "failed": judged["failed"],
            "failure_reason": judged["failure_reason"],
            "llm_judge": llm_judge.name if llm_judge is not None else "",
            "llm_score": None if second is None or second["failed"] else round(second["score"],
                                                                               4),
            "llm_failure_reason": second["failure_reason"] if second is not None else "",
            "seconds": round(call.seconds, 3), "prediction": call.prediction,
        })
    return rows


async def replay_session(session: RecordedSession, model: WorldModel, mode: str,
                         config: ReplayConfig, llm_judge: LLMJudge | None = None
                         ) -> list[dict[str, Any]]:
    """Replay one session in one mode: a judged row per tools/call (up to config.calls)."""
    anchor = RecordedAnchor() if mode == ANCHORED else None
    read_only = session.toolset.read_only(config.read_only)
    simulation = Simulation(session.toolset, model, anchor, read_only,
                            session_id=session.session_id)
    answered: list[_Answered] = []
    depth = 0
    for index in range(len(session.toolset.opening), len(session.turns)):
        action, observation = session.turns[index]
        request = _request(action)
        if request.get("method") != "tools/call":
            simulation.history.append((action, observation))
            continue
        depth += 1
        if config.calls and depth > config.calls:
            break
        params = request.get("params") or {}
        name, arguments = str(params.get("name", "")), dict(params.get("arguments") or {})
        if anchor is not None:
            anchor.observation = observation
        failure = ""
        try:
            await simulation.call(name, arguments, action=action)
            step = simulation.steps[-1]
            raw, answered_by, seconds = step.raw, step.answered_by, step.seconds
        except (ModelTimeout, RuntimeError) as error:
            raw, answered_by, seconds, failure = "", "model", 0.0, str(error)
        answered.append(_Answered(
            _judge_sample(session, index, mode, depth), name,
            "read" if name in read_only else "write", raw,
            answered_by if not failure else "none", seconds, failure,
            simulation.history[-1][1] if not failure else ""))
    return _judged_rows(session, mode, model.name, answered, llm_judge)


def replay_all(sessions: SessionSet, model: WorldModel, config: ReplayConfig,
               on_session: Callable[[int, RecordedSession, list[dict[str, Any]]], None]
               | None = None, llm_judge: LLMJudge | None = None) -> list[dict[str, Any]]:
    """Every session in both modes; rows in (session, mode, depth) order. `on_session` gets
    the rows so far after each session (a long replay can keep what finished)."""
    rows: list[dict[str, Any]] = []
    for number, session in enumerate(sessions.sessions, start=1):
        for mode in MODES:
            rows += anyio.run(replay_session, session, model, mode, config, llm_judge)
        if on_session is not None:
            on_session(number, session, rows)
    return rows

