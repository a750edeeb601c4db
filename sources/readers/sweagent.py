"""SWE-agent `.traj` files: one JSON object per run.

    {"environment": "main",
     "trajectory": [{"action": "find_file missing_colon.py", "observation": "Found 1 matches ...",
                     "thought": "...", "response": "...", "execution_time": 0.28, "state": {...}}],
     "history": [{"role": "system", "content": "SETTING: ...", "message_type": "system_prompt"},
                 {"role": "user", "content": "...ISSUE:\\n<issue>\\n\\nINSTRUCTIONS: ..."}],
     "info": {"exit_status": "submitted", "submission": "diff --git ...", "model_stats": {...}}}

A turn is one `trajectory[]` step: `action` (the command line sent to the shell) and `observation`
(its output). Demonstration files carry only `history`; there an assistant message with an
`action` is paired with the next user/tool message. The task is the problem statement cut out of
the first (non-demonstration) user message; the system message becomes the system prompt.
SWE-agent records no success label (`exit_status` says how the run stopped, not whether the fix
is right), so the outcome stays "unknown" unless `info` carries a boolean `resolved`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sources.readers.base import (
    FormatError,
    JsonDocumentReader,
    as_text,
    expect,
    has_match,
    is_single_json_object,
)
from sources.readers.pairing import exchanges, note_unanswered
from sources.schema import Quarantine, Trajectory, Turn

# The templates SWE-agent wraps the problem statement in (v0.x "ISSUE:", v1 <pr_description>).
_TRAJECTORY_KEY = re.compile(r'"trajectory"\s*:\s*\[')
_HISTORY_KEY = re.compile(r'"history"\s*:\s*\[')
_AGENT_KEY = re.compile(r'"agent"\s*:')
_TASK_PATTERNS = (
    re.compile(r"\nISSUE:\n(.*?)\n+INSTRUCTIONS:\n", re.DOTALL),
    re.compile(r"<pr_description>\n?(.*?)\n?</pr_description>", re.DOTALL),
    re.compile(r"<issue>\n?(.*?)\n?</issue>", re.DOTALL),
)
_INSTRUCTIONS = "\n\nINSTRUCTIONS:\n"

_EDIT_COMMANDS = frozenset(
    {"edit", "create", "insert", "append", "replace", "edit_file", "write_file", "str_replace"}
)
_EDITOR_EDITS = frozenset({"create", "str_replace", "insert", "undo_edit"})
_SUBMIT_COMMANDS = frozenset({"submit"})


def action_kind(action: str) -> str:
    """Classify a SWE-agent command line: file edits, submit, the rest runs in the shell."""
    words = action.split()
    if not words:
        return "other"
    if words[0] in _SUBMIT_COMMANDS:
        return "submit"
    if words[0] in _EDIT_COMMANDS:
        return "edit"
    if words[0] == "str_replace_editor" and len(words) > 1 and words[1] in _EDITOR_EDITS:
        return "edit"
    if words[0].startswith("exit_"):  # exit_cost, exit_forfeit: autosubmission markers
        return "other"
    return "shell"


def extract_task(message: str) -> tuple[str, bool]:
    """The problem statement inside the instance template, verbatim; (text, was_extracted)."""
    for pattern in _TASK_PATTERNS:
        match = pattern.search(message)
        if match and match.group(1).strip():
            return match.group(1), True
    if _INSTRUCTIONS in message:  # CTF and other templates: the challenge text comes first
        return message.split(_INSTRUCTIONS, 1)[0].rstrip(), True
    return message, False


class SweAgentReader(JsonDocumentReader):
    """SWE-agent `.traj`: trajectory steps (or history messages) as shell turns."""

    name: ClassVar[str] = "sweagent_traj"
    domain: ClassVar[str] = "swe"
    description: ClassVar[str] = (
        "SWE-agent .traj: action = trajectory[].action (command line), "
        "observation = trajectory[].observation; history-only demos pair assistant and next message"
    )

    def sniff(self, path: Path, head: str) -> bool:
        if not is_single_json_object(head):
            return False
        text = head.lstrip()
        if has_match('"trajectory"', _TRAJECTORY_KEY, text) and '"observation"' in text:
            return '"action"' in text
        if has_match('"history"', _HISTORY_KEY, text) and '"role"' in text:
            # SWE-agent tags history messages with the agent name and a message type.
            # ("agent" as a key: OpenHands events carry it as a value, "source": "agent").
            return has_match('"agent"', _AGENT_KEY, text) or '"message_type"' in text
        return False

    def convert(self, path: Path, document: dict[str, Any]) -> Iterator[Trajectory | Quarantine]:
        yield self._trajectory(path, document)

    def _trajectory(self, path: Path, document: dict[str, Any]) -> Trajectory:
        history = expect(document.get("history", []), list, path, "$.history", "history")
        steps = expect(document.get("trajectory", []), list, path, "$.trajectory", "trajectory")
        info = expect(document.get("info") or {}, dict, path, "$.info", "info")

        system_prompt, task, extracted = None, None, False
        for index, message in enumerate(history):
            where = f"$.history[{index}]"
            expect(message, dict, path, where, "history message")
            if message.get("is_demo"):  # in-context demonstrations, not this run's task
                continue
            role = message.get("role")
            if role == "system" and system_prompt is None:
                system_prompt = as_text(message.get("content"))
            elif role == "user" and task is None:
                task, extracted = extract_task(as_text(message.get("content")))
        if task is None:
            raise FormatError(path, "$.history", "no user message holding the task")

        metadata: dict[str, Any] = {"task_extracted_from_template": extracted}
        if steps:
            turns = [self._step_turn(path, index, step) for index, step in enumerate(steps)]
            times = [s.get("execution_time") for s in steps if isinstance(s, dict)]
            times = [t for t in times if isinstance(t, int | float)]
            if times:
                metadata["execution_time_s"] = round(sum(times), 6)
        else:
            turns, unanswered = self._history_turns(path, history)
            note_unanswered(metadata, unanswered)
        metadata.update(self._run_metadata(document, info, history))

        outcome = "unknown"
        if isinstance(info.get("resolved"), bool):
            outcome = "success" if info["resolved"] else "failure"
        return Trajectory(
            task=task,
            turns=turns,
            position="$",
            outcome=outcome,
            system_prompt=system_prompt,
            metadata=metadata,
        )

    def _step_turn(self, path: Path, index: int, step: Any) -> Turn:
        where = f"$.trajectory[{index}]"
        expect(step, dict, path, where, "trajectory step")
        action = expect(step.get("action"), str, path, f"{where}.action", "action")
        observation = step.get("observation")
        observation = "" if observation is None else observation  # e.g. a submit with no output
        expect(observation, str, path, f"{where}.observation", "observation")
        return _turn(action, observation)

    def _history_turns(self, path: Path, history: list[Any]) -> tuple[list[Turn], list[str]]:
        """Demonstration files: an assistant action answered by the next user/tool message."""
        turns: list[Turn] = []
        unanswered: list[str] = []
        for step in exchanges(history, _is_action, reply_roles=("user", "tool")):
            if not step.is_call:
                continue
            where = f"$.history[{step.index}].action"
            action = expect(step.message["action"], str, path, where, "action")
            if step.reply is None:
                unanswered.append(action)  # e.g. the run ended on this action
            else:
                turns.append(_turn(action, as_text(step.reply.get("content"))))
        return turns, unanswered

    @staticmethod
    def _run_metadata(
        document: dict[str, Any], info: dict[str, Any], history: list[Any]
    ) -> dict[str, Any]:
        metadata: dict[str, Any] = {}
        for key in ("exit_status", "submission", "model_stats", "swe_agent_version"):
            if info.get(key) not in (None, ""):
                metadata[key] = info[key]
        if isinstance(document.get("environment"), str):
            metadata["environment"] = document["environment"]
        agents = sorted({m["agent"] for m in history if isinstance(m.get("agent"), str)})
        if agents:
            metadata["agents"] = agents
        if any(isinstance(m.get("tool_calls"), list) for m in history):
            metadata["function_calling"] = True
        config = document.get("replay_config")
        if isinstance(config, str):
            try:
                config = json.loads(config)
            except json.JSONDecodeError:
                config = None
        if isinstance(config, dict):
            model = (config.get("agent") or {}).get("model") or {}
            problem = config.get("problem_statement") or {}
            repo = (config.get("env") or {}).get("repo") or {}
            for key, value in (
                ("model", model.get("name") if isinstance(model, dict) else None),
                ("instance_id", problem.get("id") if isinstance(problem, dict) else None),
                ("issue_url", problem.get("github_url") if isinstance(problem, dict) else None),
                ("repo_url", repo.get("github_url") if isinstance(repo, dict) else None),
            ):
                if isinstance(value, str):
                    metadata[key] = value
        return metadata


def _is_action(message: Any) -> bool:
    """An assistant message of the run (not of a demonstration) that holds an action."""
    return (isinstance(message, dict) and message.get("role") == "assistant"
            and not message.get("is_demo") and "action" in message)


def _turn(action: str, observation: str) -> Turn:
    words = action.split()
    return Turn(
        action=action,
        observation=observation,
        action_kind=action_kind(action),
        observation_format="stdout",
        tool_name=words[0] if words else None,
    )
