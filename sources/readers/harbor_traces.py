"""Harbor `*.traces.json`: a JSON list of chat rows, one per episode (LLM call) of a trial.

    [{"conversations": [
          {"role": "user", "content": "... Task Description:\\n...\\nCurrent terminal state: ..."},
          {"role": "assistant", "content": "{\\"analysis\\": ..., \\"commands\\": [...]}"},
          {"role": "user", "content": "New Terminal Output:\\n\\nroot@...:/app# ..."}],
      "agent": "terminus-2", "model": "openai/gpt-4o", "task": "hello-world",
      "episode": "episode-2", "run_id": "...", "trial_name": "...", "result": "1.0"}, ...]

Harbor writes one row per episode, and the row of episode k holds the whole conversation up to the
k-th assistant reply, so the rows of a trial are growing prefixes of one another. Reading each row
as a trajectory would store every trial once per step; the reader therefore merges consecutive
rows of the same trial whose conversation extends the previous one and yields the longest, at the
position of that row (the merged rows are listed in metadata). A row that does not extend the
previous one (another trial, or a context reset) starts a new trajectory.

A turn is an assistant reply parsed as a Terminus response (JSON or XML `commands[].keystrokes`
and `task_complete`, or `<tool_call>` blocks) or as OpenHands' calls written without function
calling (`<function=execute_bash><parameter=command>ls</parameter></function>`), and the next
user message as its observation; calls are rendered as in the ATIF reader (keystrokes,
`mark_task_complete({})`), so both readers give the same turns for one run. Replies the harness
could not parse ("Previous response had parsing errors") and replies without commands are
counted in metadata; the calls of the last reply (Harbor stores no observation after it) are
listed in metadata["calls_without_observation"] (sources/readers/pairing.py). The outcome comes
from `result` (reward "1.0" success, "0.0" failure).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sources.readers.atif import (
    calls_turn,
    is_parse_error,
    message_calls,
    render_calls,
    split_terminus_prompt,
)
from sources.readers.base import FormatError, Reader, as_text, iter_json_array
from sources.readers.pairing import exchanges, note_unanswered
from sources.schema import Quarantine, Trajectory, Turn

_THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL)
_TOOL_CALL_RE = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
_XML_KEYS_RE = re.compile(r"<keystrokes([^>]*)>(.*?)</keystrokes>", re.DOTALL)
_XML_DONE_RE = re.compile(r"<task_complete>\s*true\s*</task_complete>", re.IGNORECASE)
_ROW_KEYS = ("agent", "model", "model_provider", "date", "run_id", "trial_name", "result")

Call = tuple[str, Any]


def parse_terminus(content: str) -> list[Call] | None:
    """The calls a Terminus reply asks for, or None when no response format is recognised."""
    text = _THINK_RE.sub("", content)
    blocks = _TOOL_CALL_RE.findall(text)
    if blocks:
        calls: list[Call] = []
        for block in blocks:
            try:
                call = json.loads(block)
            except json.JSONDecodeError:
                return None
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                return None
            calls.append((call["name"], call.get("arguments", {})))
        return calls
    if "<function=" in text:
        # OpenHands without function calling writes `<function=name><parameter=k>v</parameter>`
        functions = message_calls(text)
        if functions:
            return functions
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        try:
            response = json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            response = None
        if isinstance(response, dict) and ("commands" in response or "task_complete" in response):
            commands = response.get("commands") or []
            calls = [
                ("bash_command", c)
                for c in commands
                if isinstance(c, dict) and isinstance(c.get("keystrokes"), str)
            ]
            if response.get("task_complete") in (True, "true"):
                calls.append(("mark_task_complete", {}))
            return calls
    keys = _XML_KEYS_RE.findall(text)
    done = bool(_XML_DONE_RE.search(text))
    if keys or done or "<commands>" in text:
        calls = [("bash_command", {"keystrokes": body}) for _, body in keys]
        return calls + ([("mark_task_complete", {})] if done else [])
    return None


class HarborTracesReader(Reader):
    """Harbor episode rows, merged per trial into one trajectory."""

    name: ClassVar[str] = "harbor_traces"
    domain: ClassVar[str] = "terminal"
    description: ClassVar[str] = (
        "Harbor traces: rows of one trial merged; action = keystrokes of a Terminus reply, "
        "observation = the next user message (terminal output)"
    )

    def sniff(self, path: Path, head: str) -> bool:
        text = head.lstrip()
        if not re.match(r"\[\s*\{", text):
            return False
        if not re.search(r'"conversations"\s*:\s*\[\s*\{\s*"(role|content)"', text):
            return False
        return any(f'"{key}"' in text for key in ("episode", "run_id", "trial_name")) or (
            path.name.endswith(".traces.json")
        )

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        group: _Group | None = None
        try:
            for index, row in iter_json_array(path):
                problem = _check(row)
                if problem:
                    yield Quarantine(source_path=str(path), position=f"$[{index}]", reason=problem)
                    continue
                if group is not None and group.extends(row):
                    group.add(index, row)
                    continue
                if group is not None:
                    yield group.trajectory()
                group = _Group(index, row)
        except FormatError:
            # Keep the complete rows read before the break, flagged: later episodes may be lost.
            if group is not None:
                trajectory = group.trajectory()
                trajectory.metadata["file_breaks_after_this_row"] = True
                yield trajectory
            raise
        if group is not None:
            yield group.trajectory()


def _check(row: Any) -> str | None:
    if not isinstance(row, dict):
        return f"row must be object, got {type(row).__name__}"
    conversation = row.get("conversations")
    if not isinstance(conversation, list):
        return f"conversations must be list, got {type(conversation).__name__}"
    for number, message in enumerate(conversation):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return f"conversations[{number}] must be an object with a string role"
    if not any(message["role"] == "user" for message in conversation):
        return "no user message holding the task"
    return None


class _Group:
    """The rows of one trial seen so far; only the longest conversation is kept."""

    def __init__(self, index: int, row: dict[str, Any]) -> None:
        self.index, self.row = index, row
        self.merged: list[int] = []
        self.episodes: list[Any] = [row.get("episode")]

    def extends(self, row: dict[str, Any]) -> bool:
        if any(row.get(key) != self.row.get(key) for key in ("run_id", "trial_name", "task")):
            return False
        old, new = self.row["conversations"], row["conversations"]
        return len(new) >= len(old) and new[: len(old)] == old

    def add(self, index: int, row: dict[str, Any]) -> None:
        self.merged.append(self.index)
        self.index, self.row = index, row
        self.episodes.append(row.get("episode"))

    def trajectory(self) -> Trajectory:
        row, conversation = self.row, self.row["conversations"]
        first = next(i for i, m in enumerate(conversation) if m["role"] == "user")
        prompt = None
        if row.get("agent") == "openhands":
            # OpenHands' rows carry its system prompt as the first user message; the task is the
            # next user message before the first reply (the in-context example, then the task).
            reply = next((i for i, m in enumerate(conversation) if m["role"] == "assistant"),
                         len(conversation))
            users = [i for i in range(first, reply) if conversation[i]["role"] == "user"]
            if len(users) > 1:
                prompt, first = as_text(conversation[first].get("content")), users[1]
        task, screen = split_terminus_prompt(as_text(conversation[first].get("content")))
        if isinstance(row.get("instruction"), str) and row["instruction"].strip():
            task = row["instruction"]
        system_prompt = prompt or next(
            (as_text(m.get("content")) for m in conversation[:first] if m["role"] == "system"), None
        )
        turns, counts = _turns(conversation, first)
        metadata: dict[str, Any] = {k: row[k] for k in _ROW_KEYS if row.get(k) is not None}
        if isinstance(row.get("task"), str):
            metadata["task_name"] = row["task"]
        metadata["episodes"] = self.episodes
        if self.merged:
            metadata["merged_prefix_rows"] = [f"$[{i}]" for i in self.merged]
        if screen is not None:
            metadata["initial_terminal_state"] = screen
        metadata.update({key: value for key, value in counts.items() if value})
        return Trajectory(
            task=task,
            turns=turns,
            position=f"$[{self.index}]",
            outcome=_outcome(row.get("result")),
            system_prompt=system_prompt,
            metadata=metadata,
        )


def _turns(conversation: list[dict[str, Any]], first: int) -> tuple[list[Turn], dict[str, Any]]:
    turns: list[Turn] = []
    counts: dict[str, Any] = {
        "format_errors": 0,
        "responses_without_commands": 0,
        "unparsed_responses": 0,
        "later_user_messages": 0,
    }
    unanswered: list[str] = []
    for step in exchanges(conversation, _is_response, start=first + 1):
        if not step.is_call:
            key = "later_user_messages" if step.message["role"] == "user" else "other_messages"
            counts[key] = counts.get(key, 0) + 1
            continue
        observation = as_text(step.reply.get("content")) if step.reply is not None else None
        calls = parse_terminus(as_text(step.message.get("content")))
        if observation is not None and is_parse_error(observation):
            counts["format_errors"] += 1  # the harness rejected the reply; no keystrokes were sent
        elif calls is None:
            counts["unparsed_responses"] += 1
        elif not calls:
            counts["responses_without_commands"] += 1
        elif observation is None:
            unanswered.append(render_calls(calls))  # e.g. the closing task_complete / finish
        else:
            turns.append(calls_turn(calls, observation, None))
    note_unanswered(counts, unanswered)
    return turns, counts


def _is_response(message: dict[str, Any]) -> bool:
    """An agent reply: the next user message is the terminal after its keystrokes."""
    return message["role"] == "assistant"


def _outcome(result: Any) -> str:
    """Harbor's `result` is the reward bucket ("1.0", "0.0") or an exception name."""
    try:
        reward = float(result)
    except (TypeError, ValueError):
        return "unknown"
    return "success" if reward == 1.0 else "failure" if reward == 0.0 else "unknown"
