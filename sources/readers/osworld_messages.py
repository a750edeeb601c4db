"""OSWorld `messages.json`: the computer-use agent's conversation, beside its `traj.jsonl`.

Written by a Claude computer-use agent on OSWorld (the Sec-Eval fork) next to traj.jsonl, with
the screenshots taken out; Anthropic-style messages whose content is a list of blocks:

    [{"role": "system", "content": [{"type": "text", "text": "... You are asked to complete
                                      the following task: Please give me a summary ..."}]},
     {"role": "user", "content": [{"type": "text", "text": "Here is the next screenshot. ..."}]},
     {"role": "assistant", "content": [{"type": "text", "text": "I see the desktop ..."}]},
     {"role": "user", "content": [{"type": "text", "text": "Executed a translation of your
          issued tool call: ['import pyautogui; pyautogui.moveTo(48, 40)', '...click()']"}]},
     {"role": "user", "content": [{"type": "text", "text": "The command completed with exit
          code 0.\\nThe output is:\\n..."}]}, ...]

traj.jsonl has one record per executed line (so one tool call is several records) and only a
screenshot file name as the observation; the text the environment gave back is here. A turn is
one tool call: the action is its executed lines (as traj.jsonl lists them, which must agree),
the observation is every user block from its "Executed a translation" acknowledgement up to the
next call or the agent's next message, in order (images, removed from this file, are shown as
`[image]`). A `BASH` call is a shell action with the exit code the text reports. The task is
the one the system prompt states; the assistant's text is its reasoning, kept out of the turns.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sources.readers.base import FormatError, load_json
from sources.schema import Turn

EXECUTED = "Executed a translation of your issued tool call: "
_TASK = re.compile(r"You are asked to complete the following task:\s*(.+?)\s*$", re.DOTALL)
_EXIT = re.compile(r"The command completed with exit code (-?\d+)\.")
_SUCCEEDED = "The command completed successfully"
SPECIAL_KINDS = {"DONE": "submit", "FAIL": "submit", "WAIT": "other"}


@dataclass
class ToolCall:
    """One executed tool call and what the agent was told after it."""

    lines: list[str]
    position: str
    observation: list[str] = field(default_factory=list)


@dataclass
class Conversation:
    """What messages.json says, split into the parts a trajectory needs."""

    system_prompt: str | None
    task: str
    initial_observation: str
    calls: list[ToolCall]
    n_assistant_messages: int


def read_conversation(path: Path) -> Conversation:
    """The tool calls of messages.json with the text that followed each."""
    messages = load_json(path)
    if not isinstance(messages, list):
        raise FormatError(path, "$", f"expected a list of messages, got {type(messages).__name__}")
    system: list[str] = []
    before_first_call: list[str] = []
    calls: list[ToolCall] = []
    n_assistant = 0
    collecting = False  # the blocks after a call are its observation until the agent speaks
    for index, message in enumerate(messages):
        where = f"$[{index}]"
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise FormatError(path, where, "message must be an object with a role")
        role = message["role"]
        blocks = _blocks(path, where, message.get("content"))
        if role == "system":
            system += [text for text in blocks if text != "[image]"]
        elif role == "assistant":
            n_assistant += 1
            collecting = False
        elif role == "user":
            for number, text in enumerate(blocks):
                if text.startswith(EXECUTED):
                    lines = _executed_lines(path, f"{where}.content[{number}]", text)
                    calls.append(ToolCall(lines, where, [text]))
                    collecting = True
                elif collecting:
                    calls[-1].observation.append(text)
                elif not calls:
                    before_first_call.append(text)
        else:
            raise FormatError(path, f"{where}.role", f"unknown role {role!r}")
    system_prompt = "\n\n".join(system) if system else None
    match = _TASK.search(system_prompt or "")
    return Conversation(system_prompt, match.group(1) if match else "",
                        "\n".join(before_first_call), calls, n_assistant)


def conversation_turns(
    path: Path, conversation: Conversation, records: list[tuple[int, dict[str, Any]]]
) -> tuple[list[Turn], list[tuple[int, dict[str, Any]]]]:
    """One turn per tool call, checked line by line against traj.jsonl's records; returns the
    records left after the last call (the closing DONE / FAIL)."""
    next_record = 0
    turns: list[Turn] = []
    for call in conversation.calls:
        taken = records[next_record : next_record + len(call.lines)]
        actions = [record.get("action") for _, record in taken]
        if actions != call.lines:
            line = f"traj.jsonl line {taken[0][0]}" if taken else "the end of traj.jsonl"
            raise FormatError(path, call.position, f"tool call {call.lines!r} does not match "
                              f"the actions at {line}")
        next_record += len(call.lines)
        observation = "\n".join(text for text in call.observation if text)
        turns.append(_turn(call.lines, observation))
    return turns, records[next_record:]


def _turn(lines: list[str], observation: str) -> Turn:
    action = "\n".join(lines)
    if len(lines) == 1 and lines[0] in SPECIAL_KINDS:
        kind = SPECIAL_KINDS[lines[0]]
    else:
        kind = "shell" if all(line.startswith("BASH ") for line in lines) else "code"
    exit_code = None
    if kind == "shell":
        match = _EXIT.search(observation)
        exit_code = int(match.group(1)) if match else 0 if _SUCCEEDED in observation else None
    return Turn(action=action, observation=observation, action_kind=kind,
                observation_format="text", exit_code=exit_code)


def _executed_lines(path: Path, where: str, text: str) -> list[str]:
    try:
        lines = ast.literal_eval(text[len(EXECUTED):].strip())
    except (ValueError, SyntaxError):
        raise FormatError(path, where, "the executed tool call is not a list literal") from None
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        raise FormatError(path, where, "the executed tool call must be a list of strings")
    return lines


def _blocks(path: Path, where: str, content: Any) -> list[str]:
    """A message's content as texts, one per block; an image block is `[image]`."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise FormatError(path, f"{where}.content", "content must be a string or a list")
    texts = []
    for block in content:
        if not isinstance(block, dict):
            raise FormatError(path, f"{where}.content", "content block must be an object")
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "image":
            texts.append("[image]")
        else:
            texts.append(json.dumps(block, ensure_ascii=False, sort_keys=True))
    return texts
