"""mini-swe-agent trajectories: a chat log whose assistant messages hold one fenced bash block.

    {"info": {"exit_status": "Submitted", "submission": "diff --git ...", "model_stats": {...}},
     "messages": [{"role": "system", "content": "You are a helpful assistant ..."},
                  {"role": "user", "content": "Please solve this issue: ..."},
                  {"role": "assistant", "content": "...\\n```mswea_bash_command\\nls -la\\n```"},
                  {"role": "user", "content": "<returncode>0</returncode>\\n<output>\\n..."}],
     "trajectory_format": "mini-swe-agent-1.1"}

The bare list of messages (older runs and test data) is read the same way. A turn is the one
bash block of an assistant message (the action) and the next user message (the observation, with
`exit_code` from `<returncode>`); v2 tool-call runs pair `tool_calls[]` with `role: tool` answers.
An assistant message without exactly one block is not executed by mini-swe-agent (it gets a
format-error reply), so it is counted in metadata, not made a turn. The task is the first user
message (the issue cut out of the instance template when recognisable); mini-swe-agent has no
success label, so the outcome is "unknown" and `exit_status` goes to metadata.
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
from sources.readers.pairing import OpenCalls, exchanges, note_unanswered
from sources.schema import Quarantine, Trajectory, Turn

_FORMAT_KEY = re.compile(r'"trajectory_format"\s*:\s*"mini-swe-agent')
_ACTION_RE = re.compile(r"```(?:mswea_bash_command|bash)\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE_RE = re.compile(r"^\s*<returncode>\s*(-?\d+)\s*</returncode>")
# The run ends when a command's output starts with one of these (v1 and pre-1.0 spellings).
_SUBMIT_MARKERS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
_TASK_PATTERNS = (
    re.compile(
        r"<pr_description>\s*(?:Consider the following PR description:\s*)?(.*?)\s*"
        r"</pr_description>",
        re.DOTALL,
    ),
    re.compile(r"^Please solve this issue: (.*?)\n\nYou can execute bash commands", re.DOTALL),
)


def extract_task(message: str) -> tuple[str, bool]:
    """The task inside mini-swe-agent's instance templates, verbatim; (text, was_extracted)."""
    for pattern in _TASK_PATTERNS:
        match = pattern.search(message)
        if match and match.group(1).strip():
            return match.group(1), True
    return message, False


class MiniSweReader(JsonDocumentReader):
    """mini-swe-agent `.traj.json` (wrapper object or bare message list)."""

    name: ClassVar[str] = "miniswe_messages"
    document_types: ClassVar[tuple[type, ...]] = (list, dict)  # bare messages, or with info
    document_error: ClassVar[str] = "expected a list or object"
    domain: ClassVar[str] = "swe"
    description: ClassVar[str] = (
        "mini-swe-agent messages: action = the fenced bash block of an assistant message, "
        "observation = the next user message (<returncode>/<output>)"
    )

    def sniff(self, path: Path, head: str) -> bool:
        text = head.lstrip()
        if is_single_json_object(head):
            return bool(
                has_match('"trajectory_format"', _FORMAT_KEY, text)
                or ('"mini_version"' in text and '"messages"' in text)
            )
        if re.match(r'\[\s*\{\s*"role"\s*:', text):
            return "```mswea_bash_command" in text or "<returncode>" in text
        return False

    def convert(self, path: Path, document: Any) -> Iterator[Trajectory | Quarantine]:
        yield self._trajectory(path, document)

    def _trajectory(self, path: Path, document: Any) -> Trajectory:
        metadata: dict[str, Any] = {}
        if isinstance(document, list):
            messages, prefix = document, "$"
        else:
            prefix = "$.messages"
            messages = expect(document.get("messages"), list, path, prefix, "messages")
            info = expect(document.get("info") or {}, dict, path, "$.info", "info")
            metadata.update(_info_metadata(info))
            if isinstance(document.get("trajectory_format"), str):
                metadata["trajectory_format"] = document["trajectory_format"]

        for index, message in enumerate(messages):
            where = f"{prefix}[{index}]"
            expect(message, dict, path, where, "message")
            expect(message.get("role"), str, path, f"{where}.role", "role")

        system_prompt = next(
            (as_text(m.get("content")) for m in messages if m["role"] == "system"), None
        )
        first_user = next((i for i, m in enumerate(messages) if m["role"] == "user"), None)
        if first_user is None:
            raise FormatError(path, prefix, "no user message holding the task")
        task, extracted = extract_task(as_text(messages[first_user].get("content")))
        metadata["task_extracted_from_template"] = extracted

        turns, counts = pair_messages(path, prefix, messages, first_user)
        metadata.update({key: value for key, value in counts.items() if value})
        return Trajectory(
            task=task,
            turns=turns,
            position="$",
            outcome="unknown",
            system_prompt=system_prompt,
            metadata=metadata,
        )


def pair_messages(
    path: Path, prefix: str, messages: list[dict[str, Any]], first_user: int
) -> tuple[list[Turn], dict[str, Any]]:
    """Walk the log after the task message: actions, their answers, and what is left over."""
    turns: list[Turn] = []
    counts: dict[str, Any] = {"format_errors": 0, "unpaired_messages": 0}
    tool_calls: OpenCalls[str] = OpenCalls()  # v2 tool-call runs: the command of each call
    unanswered: list[str] = []  # text actions the log ends on
    for step in exchanges(messages, _is_text_action, start=first_user + 1):
        message, where = step.message, f"{prefix}[{step.index}]"
        role, content = message["role"], as_text(message.get("content"))
        if step.is_call:
            actions = _ACTION_RE.findall(content)
            if len(actions) != 1:
                counts["format_errors"] += 1  # not executed; the reply (if any) is the complaint
            elif step.reply is None:
                unanswered.append(actions[0])
            else:
                turns.append(_turn(actions[0], as_text(step.reply.get("content")), step.reply))
        elif role == "assistant":
            for call in message["tool_calls"]:
                call_id, command = _tool_call(path, where, call)
                tool_calls.open(call_id, command)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            slot = tool_calls.answer(message, call_id)
            if slot is None:
                raise FormatError(path, where, f"tool message answers unknown call {call_id!r}")
            turns.append(_turn(slot.call, content, message))
        elif role == "exit":  # v2 records how the run ended as a last pseudo-message
            extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
            counts["exit"] = {k: v for k, v in extra.items() if k in ("exit_status", "submission")}
        else:
            counts["unpaired_messages"] += 1
    note_unanswered(counts, [slot.call for slot in tool_calls.waiting()] + unanswered)
    return turns, counts


def _is_text_action(message: dict[str, Any]) -> bool:
    """An assistant message without tool calls: its fenced block is the action."""
    tool_calls = message.get("tool_calls")
    return message["role"] == "assistant" and not (isinstance(tool_calls, list) and tool_calls)


def _tool_call(path: Path, where: str, call: Any) -> tuple[str, str]:
    expect(call, dict, path, f"{where}.tool_calls", "tool call")
    function = expect(call.get("function"), dict, path, f"{where}.tool_calls", "function")
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            pass
    if isinstance(arguments, dict) and isinstance(arguments.get("command"), str):
        command = arguments["command"]
    else:
        command = f"{function.get('name')}({as_text(arguments)})"
    return str(call.get("id")), command


def _turn(action: str, observation: str, reply: dict[str, Any]) -> Turn:
    exit_code = None
    extra = reply.get("extra")
    if isinstance(extra, dict) and type(extra.get("returncode")) is int:
        exit_code = extra["returncode"]
    match = _RETURNCODE_RE.match(observation)
    if exit_code is None and match:
        exit_code = int(match.group(1))
    submit = any(marker in action for marker in _SUBMIT_MARKERS)
    words = action.split()
    return Turn(
        action=action,
        observation=observation,
        action_kind="submit" if submit else "shell",
        observation_format="stdout",
        tool_name=words[0] if words else None,
        exit_code=exit_code,
    )


def _info_metadata(info: dict[str, Any]) -> dict[str, Any]:
    metadata = {
        k: info[k]
        for k in ("exit_status", "submission", "model_stats", "mini_version")
        if info.get(k) not in (None, "")
    }
    config = info.get("config")
    model = config.get("model") if isinstance(config, dict) else None
    if isinstance(model, dict) and isinstance(model.get("model_name"), str):
        metadata["model"] = model["model_name"]
    return metadata
