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
counted in metadata, the final message kept. An observation whose cause matches no action is
quarantined. OpenHands has no success label, so the outcome is "unknown".
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sources.jsonio import as_text, iter_json_array
from sources.reader import Reader
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
        if not text.startswith("["):
            return False
        return bool(
            re.search(r'"source"\s*:\s*"(user|agent|environment)"', text)
            and re.search(r'"(action|observation)"\s*:\s*"[a-z_]+"', text)
        )

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        state = _Pairing()
        for index, event in iter_json_array(path):
            problem = state.add(index, event)
            if problem:
                yield Quarantine(source_path=str(path), position=f"$[{index}]", reason=problem)
        if state.task is None:
            yield Quarantine(source_path=str(path), position="$", reason="no user message: no task")
            return
        yield state.trajectory()


class _Pairing:
    """Accumulates one event stream: actions by id, and the observation each one caused."""

    def __init__(self) -> None:
        self.task: str | None = None
        self.system_prompt: str | None = None
        self.actions: dict[Any, dict[str, Any]] = {}  # id -> action event, in arrival order
        self.answers: dict[Any, dict[str, Any]] = {}  # action id -> its observation
        self.counts: Counter[str] = Counter()
        self.final_message: str | None = None
        self.task_completed: Any = None
        self.models: set[str] = set()
        self.usage: dict[str, int] = {}
        self._responses: set[str] = set()

    def add(self, index: int, event: Any) -> str | None:
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
            return None
        if kind == "system" and self.system_prompt is None:
            self.system_prompt = as_text(args.get("content", event.get("message")))
            return None
        if kind == "finish":
            self.final_message = as_text(
                args.get("final_thought") or args.get("thought") or event.get("message")
            )
            self.task_completed = args.get("task_completed", self.task_completed)
        if event.get("id") in self.actions:
            return f"duplicate action id {event.get('id')!r}"
        self.actions[event.get("id")] = event
        return None

    def _add_observation(self, event: dict[str, Any]) -> str | None:
        cause = event.get("cause")
        if cause is None:  # agent state changes and other notices nobody asked for
            self.counts[f"observation_without_cause:{event.get('observation')}"] += 1
            return None
        if cause not in self.actions:
            return (
                f"observation {event.get('observation')!r} has cause {cause!r}, matching no action"
            )
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

    def trajectory(self) -> Trajectory:
        turns: list[Turn] = []
        for action_id, action in self.actions.items():
            kind = action["action"]
            observation = self.answers.get(action_id)
            if kind in _NOT_ENVIRONMENT or action.get("source") == "user":
                self.counts[f"non_environment_action:{kind}"] += 1
                continue
            if observation is None:
                self.counts[f"action_without_observation:{kind}"] += 1
                continue
            turns.append(_turn(action, observation))
        metadata: dict[str, Any] = {"skipped_events": dict(sorted(self.counts.items()))}
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
            position="$",
            outcome="unknown",
            system_prompt=self.system_prompt,
            metadata=metadata,
        )


def _turn(action: dict[str, Any], observation: dict[str, Any]) -> Turn:
    kind = action["action"]
    args = action.get("args") or {}
    call = action.get("tool_call_metadata") or {}
    tool_name = call.get("function_name") if isinstance(call.get("function_name"), str) else None
    action_kind, observation_format = _KINDS.get(kind, ("tool_call", "text"))
    if kind == "run" and isinstance(args.get("command"), str):
        text = args["command"]
    elif kind == "run_ipython" and isinstance(args.get("code"), str):
        text = args["code"]
    elif kind == "browse" and isinstance(args.get("url"), str):
        text = args["url"]
    else:
        text = _rendered_call(kind, args, call)
    extras = observation.get("extras") or {}
    exit_code = extras.get("exit_code")
    if exit_code is None and isinstance(extras.get("metadata"), dict):
        exit_code = extras["metadata"].get("exit_code")
    return Turn(
        action=text,
        observation=observation.get("content") or "",
        action_kind=action_kind,
        observation_format=observation_format,
        tool_name=tool_name or kind,
        exit_code=exit_code if type(exit_code) is int else None,
        is_error=observation.get("observation") == "error",
    )


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
