"""OpenHands event streams: a flat JSON list of actions and observations.

    [{"id": 0, "source": "user", "action": "message", "args": {"content": "Please create ..."}},
     {"id": 3, "source": "agent", "action": "edit", "args": {"path": "/workspace/game.py"},
      "tool_call_metadata": {"function_name": "str_replace_editor", "tool_call_id": "toolu_01"}},
     {"id": 4, "source": "agent", "observation": "edit", "cause": 3, "content": "--- /work..."},
     {"id": 5, "source": "agent", "action": "finish", "args": {"outputs": {}, "thought": "..."}}]

A turn is an action paired with the observation whose `cause` is the action's `id`. The action text
is the command for `run`, the code for `run_ipython`, the URL for `browse`, and otherwise the tool
call as the model sent it (`str_replace_editor({...})`). The first user `message` is the task, a
`system` action the system prompt. Conversation and bookkeeping events (agent messages, `finish`,
`think`, `recall`, agent-state changes, observations without a cause) are not turns: they are
counted in metadata, the final message kept; so is the answer to an action that is not a turn
(the "null" observation of the task message). Actions no observation answers are listed in
metadata["calls_without_observation"] (sources/readers/pairing.py). An observation whose cause
matches no action at all is one quarantined record; the rest of the trajectory is kept.

Three containers hold the same events: a bare list (one trajectory a file), an object with a
`history` list (one trajectory), and evaluation `output.jsonl` (one instance a line, `history` of
events or of [action, observation] pairs, `instruction` as the task fallback, and the outcome from
`test_result.report.resolved` when the evaluation wrote it). Otherwise OpenHands has no success
label, so the outcome is "unknown".
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sources.readers.base import (
    FormatError,
    Reader,
    as_text,
    has_match,
    is_single_json_object,
    iter_json_array,
    iter_jsonl,
    load_json,
    read_head,
)
from sources.readers.pairing import note_unanswered
from sources.schema import Quarantine, Trajectory, Turn

# Actions that talk to the user or steer the controller rather than act on the environment.
_NOT_ENVIRONMENT = frozenset(
    {
        "message",
        "system",
        "think",
        "finish",
        "reject",
        "null",
        "pause",
        "resume",
        "stop",
        "change_agent_state",
        "recall",
        "condensation",
        "condensation_request",
        "start",
    }
)
_EVENT_SOURCE = re.compile(r'"source"\s*:\s*"(user|agent|environment)"')
_EVENT_KIND = re.compile(r'"(action|observation)"\s*:\s*"[a-z_]+"')
_HISTORY = re.compile(r'"history"\s*:\s*\[')
_KINDS = {
    "run": ("shell", "stdout"),
    "run_ipython": ("code", "stdout"),
    "browse": ("navigate", "page_text"),
    "browse_interactive": ("other", "page_text"),
    "edit": ("edit", "text"),
    "write": ("edit", "text"),
    "read": ("open", "text"),
}
# Bookkeeping keys in `args` that are not part of the call (the thought is not the action).
_ARGS_NOISE = frozenset(
    {
        "thought",
        "impl_source",
        "translated_ipython_code",
        "security_risk",
        "confirmation_state",
        "is_confirmed",
        "hidden",
        "blocking",
        "is_input",
    }
)


class OpenHandsReader(Reader):
    """OpenHands event list: actions paired with the observations they caused."""

    name: ClassVar[str] = "openhands_events"
    domain: ClassVar[str] = "swe"
    description: ClassVar[str] = (
        "OpenHands events: action = command / code / tool call of an action event, "
        "observation = content of the observation whose cause is that action"
    )

    def sniff(self, path: Path, head: str) -> bool:
        text = head.lstrip()
        if not text.startswith(("[", "{")):
            return False
        if text.startswith("{") and not has_match('"history"', _HISTORY, text):
            return False
        return has_match('"source"', _EVENT_SOURCE, text) and _EVENT_KIND.search(text) is not None

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        head = read_head(path).lstrip()
        if head.startswith("["):
            yield from events_trajectory(path, "$", iter_json_array(path), "$", None)
        elif is_single_json_object(head):
            document = load_json(path)
            yield from _wrapped_trajectory(path, "$", document)
        else:
            for line_number, record in iter_jsonl(path):
                if isinstance(record, FormatError):
                    yield Quarantine(str(path), record.position, record.reason)
                    continue
                yield from _wrapped_trajectory(path, f"line {line_number}", record)


def _wrapped_trajectory(
    path: Path, position: str, record: Any
) -> Iterator[Trajectory | Quarantine]:
    """One `{"history": [...], ...}` object: a wrapper file or one line of output.jsonl."""
    history = record.get("history") if isinstance(record, dict) else None
    if not isinstance(history, list):
        yield Quarantine(str(path), position, "expected an object with a `history` list")
        return
    where = "$.history" if position == "$" else f"{position} $.history"
    yield from events_trajectory(path, position, enumerate(history), where, record)


def _flatten(events: Iterator[tuple[int, Any]], where: str) -> Iterator[tuple[str, Any]]:
    """Events with their JSON path; an [action, observation] pair gives both of its events."""
    for index, event in events:
        if isinstance(event, list):
            for inner, part in enumerate(event):
                yield f"{where}[{index}][{inner}]", part
        else:
            yield f"{where}[{index}]", event


def events_trajectory(
    path: Path,
    position: str,
    events: Iterator[tuple[int, Any]],
    where: str,
    record: dict[str, Any] | None,
) -> Iterator[Trajectory | Quarantine]:
    state = _Pairing()
    for at, event in _flatten(events, where):
        problem = state.add(event)
        if problem:
            yield Quarantine(source_path=str(path), position=at, reason=problem)
    if state.task is None and record is not None and isinstance(record.get("instruction"), str):
        state.task = record["instruction"]
    if state.task is None:
        yield Quarantine(
            source_path=str(path), position=position, reason="no user message: no task"
        )
        return
    trajectory = state.trajectory(position)
    if record is not None:
        _note_record(trajectory, record)
    yield trajectory


def _note_record(trajectory: Trajectory, record: dict[str, Any]) -> None:
    """Evaluation fields around the history: instance, agent, model, errors, resolved."""
    for key in ("instance_id", "error"):
        if record.get(key) is not None:
            trajectory.metadata[key] = record[key]
    run = record.get("metadata")
    if isinstance(run, dict):
        llm = run.get("llm_config")
        model = llm.get("model") if isinstance(llm, dict) else None
        for key, value in (("agent_class", run.get("agent_class")), ("model", model)):
            if value is not None:
                trajectory.metadata[key] = value
    test_result = record.get("test_result")
    report = test_result.get("report") if isinstance(test_result, dict) else None
    resolved = report.get("resolved") if isinstance(report, dict) else None
    if isinstance(resolved, bool):
        trajectory.outcome = "success" if resolved else "failure"
        trajectory.metadata["resolved"] = resolved


class _Pairing:
    """Accumulates one event stream: actions by id, and the observation each one caused."""

    def __init__(self) -> None:
        self.task: str | None = None
        self.system_prompt: str | None = None
        self.actions: dict[str, dict[str, Any]] = {}  # id -> action event, in arrival order
        self.answers: dict[str, dict[str, Any]] = {}  # action id -> its observation
        self.not_turns: set[str] = set()  # ids of the task / system messages
        self.counts: Counter[str] = Counter()
        self.final_message: str | None = None
        self.task_completed: Any = None
        self.models: set[str] = set()
        self.usage: dict[str, int] = {}
        self._responses: set[str] = set()

    def add(self, event: Any) -> str | None:
        """Take one event; return a reason when it must be quarantined."""
        if not isinstance(event, dict):
            return f"event must be object, got {type(event).__name__}"
        self._note_model(event.get("tool_call_metadata"))
        if "action" in event:
            return self._add_action(event)
        if "observation" in event:
            return self._add_observation(event)
        return "event has neither 'action' nor 'observation'"

    def _add_action(self, event: dict[str, Any]) -> str | None:
        kind, args = event.get("action"), event.get("args") or {}
        if not isinstance(kind, str) or not isinstance(args, dict):
            return "action must be a string and args an object"
        source = event.get("source")
        if kind == "message" and source == "user" and self.task is None:
            self.task = as_text(args.get("content", event.get("message")))
            self.not_turns.add(str(event.get("id")))
            return None
        if kind == "system" and self.system_prompt is None:
            self.system_prompt = as_text(args.get("content", event.get("message")))
            self.not_turns.add(str(event.get("id")))
            return None
        if kind == "finish":
            self.final_message = as_text(
                args.get("final_thought") or args.get("thought") or event.get("message")
            )
            self.task_completed = args.get("task_completed", self.task_completed)
        if str(event.get("id")) in self.actions:
            return f"duplicate action id {event.get('id')!r}"
        self.actions[str(event.get("id"))] = event
        return None

    def _add_observation(self, event: dict[str, Any]) -> str | None:
        cause = event.get("cause")
        if cause is None:  # agent state changes and other notices nobody asked for
            self.counts[f"observation_without_cause:{event.get('observation')}"] += 1
            return None
        if str(cause) in self.not_turns:  # e.g. the "null" answer to the task message
            self.counts[f"observation_of_message:{event.get('observation')}"] += 1
            return None
        if str(cause) not in self.actions:
            kind = event.get("observation")
            return f"observation {kind!r} has cause {cause!r}, matching no action"
        cause = str(cause)
        if cause in self.answers:
            return f"second observation for action {cause!r}"
        if not isinstance(event.get("content", ""), str):
            return "observation content must be a string"
        self.answers[cause] = event
        return None

    def _note_model(self, metadata: Any) -> None:
        response = metadata.get("model_response") if isinstance(metadata, dict) else None
        if not isinstance(response, dict):
            return
        if isinstance(response.get("model"), str):
            self.models.add(response["model"])
        # Several tool calls share one model response; count its tokens once.
        key = str(response.get("id"))
        if key in self._responses or not isinstance(response.get("usage"), dict):
            return
        self._responses.add(key)
        for name in ("prompt_tokens", "completion_tokens"):
            value = response["usage"].get(name)
            if isinstance(value, int):
                self.usage[name] = self.usage.get(name, 0) + value

    def trajectory(self, position: str) -> Trajectory:
        turns: list[Turn] = []
        unanswered: list[str] = []
        for action_id, action in self.actions.items():
            kind = action["action"]
            observation = self.answers.get(action_id)
            if kind in _NOT_ENVIRONMENT or action.get("source") == "user":
                self.counts[f"non_environment_action:{kind}"] += 1
                continue
            if observation is None:
                unanswered.append(_action_text(action))
                continue
            turns.append(_turn(action, observation))
        metadata: dict[str, Any] = {"skipped_events": dict(sorted(self.counts.items()))}
        note_unanswered(metadata, unanswered)
        if self.final_message:
            metadata["final_message"] = self.final_message
        if self.task_completed is not None:
            metadata["task_completed"] = self.task_completed
        if self.models:
            metadata["models"] = sorted(self.models)
        if self.usage:
            metadata["usage"] = self.usage
        return Trajectory(
            task=self.task or "",
            turns=turns,
            position=position,
            outcome="unknown",
            system_prompt=self.system_prompt,
            metadata=metadata,
        )


def _turn(action: dict[str, Any], observation: dict[str, Any]) -> Turn:
    kind = action["action"]
    call = action.get("tool_call_metadata") or {}
    tool_name = call.get("function_name") if isinstance(call.get("function_name"), str) else None
    action_kind, observation_format = _KINDS.get(kind, ("tool_call", "text"))
    extras = observation.get("extras") or {}
    exit_code = extras.get("exit_code")
    if exit_code is None and isinstance(extras.get("metadata"), dict):
        exit_code = extras["metadata"].get("exit_code")
    return Turn(
        action=_action_text(action),
        observation=observation.get("content") or "",
        action_kind=action_kind,
        observation_format=observation_format,
        tool_name=tool_name or kind,
        exit_code=exit_code if type(exit_code) is int else None,
        is_error=observation.get("observation") == "error",
    )


def _action_text(action: dict[str, Any]) -> str:
    """The command for `run`, the code for `run_ipython`, the URL for `browse`, else the call."""
    kind = action["action"]
    args = action.get("args") or {}
    if kind == "run" and isinstance(args.get("command"), str):
        return args["command"]
    if kind == "run_ipython" and isinstance(args.get("code"), str):
        return args["code"]
    if kind == "browse" and isinstance(args.get("url"), str):
        return args["url"]
    return _rendered_call(kind, args, action.get("tool_call_metadata") or {})


def _rendered_call(kind: str, args: dict[str, Any], call: dict[str, Any]) -> str:
    """The tool call exactly as the model emitted it, else the action's own arguments."""
    response = call.get("model_response")
    if isinstance(response, dict):
        for choice in response.get("choices") or []:
            message = choice.get("message") if isinstance(choice, dict) else None
            for tool_call in (message or {}).get("tool_calls") or []:
                function = tool_call.get("function") or {}
                if tool_call.get("id") == call.get("tool_call_id") and function.get("name"):
                    return f"{function['name']}({as_text(function.get('arguments'))})"
    kept = {key: value for key, value in args.items() if key not in _ARGS_NOISE}
    return f"{kind}({json.dumps(kept, ensure_ascii=False, sort_keys=True)})"
