"""OpenAI-chat message lists -> Turns (shared by toolathlon, chat_jsonl and table_rows).

    {"role": "system", "content": "You are ..."}
    {"role": "user", "content": "Check my inbox ..."}
    {"role": "assistant", "content": "Let me look.", "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "emails-search_emails", "arguments": "{\"query\": \"kaiming\"}"}}]}
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"type\":\"text\",\"text\":\"...\"}"}

One turn per tool call: parallel calls in one assistant message become one turn each, in the order
the assistant made them, each matched to its `role: tool` answer by `tool_call_id` (answers may
arrive in any order); an answer without a tool_call_id (legacy `function_call` / role "function",
exports that drop ids) takes the oldest open call with its `name`, or the oldest open call.
The action is `name(arguments)` with the arguments exactly as the model wrote them; the
assistant's prose around the calls is its thought, not an action. The observation is the tool
answer with its MCP content envelope taken off (readers/content_blocks.py: the text of the text
blocks); non-text blocks and annotations go to metadata `tool_result_extras` (turn_index, extras).

Messages that are not steps are kept out of the turns on purpose and noted in metadata: the first
user message is the task, system/developer messages the system prompt, the last assistant message
without tool calls is `final_response`, later user messages are `user_followups`, and the number
of other text-only assistant messages is `n_assistant_text_only` (they talk to the user, not the
environment). A tool answer that matches no call, and a call that never gets an answer, are
reported as problems (the reader quarantines them) while the rest of the trajectory is kept.

`is_error` is set only where the message says so itself (conservative):
  * an explicit boolean `is_error` / `isError` on the tool message;
  * content that is JSON with MCP's `"isError": true`, or a content block (or list of blocks, as
    Toolathlon writes them) with `"error": true`;
  * text that starts with "Error executing tool" (the MCP Python SDK's error wording).
It is False when the content is an MCP-shaped result (content block(s) or a `content` list) that
carries no such flag, and None for any other text, where the format says nothing either way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sources.readers.base import InputError, as_text, record_outcome, render_call
from sources.readers.content_blocks import unwrap_content
from sources.readers.pairing import OpenCalls, orphan_reason, unanswered_reason
from sources.schema import Quarantine, Trajectory, Turn

ERROR_PREFIXES = ("Error executing tool",)  # MCP Python SDK: f"Error executing tool {name}: {e}"

CHAT_OUTCOME_FLAGS = ("success", "pass", "resolved")  # booleans a chat record may carry


@dataclass
class ChatConversion:
    """What a message list says, split into the parts a Trajectory needs."""

    task: str
    system_prompt: str | None
    turns: list[Turn]
    metadata: dict[str, Any] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (position, reason)


class ChatFormatError(InputError):
    """The message list has the wrong shape; `position` names the message."""

    def __init__(self, position: str, reason: str) -> None:
        self.position = position
        self.reason = reason
        super().__init__(f"{position}: {reason}")


def sub_position(position: str, suffix: str) -> str:
    """'$' + '.messages[3]' -> '$.messages[3]'; 'line 4' + ... -> 'line 4 $.messages[3]'."""
    return position + suffix if position.startswith("$") else f"{position} ${suffix}"


def parse_json_container(text: str) -> dict | list | None:
    """The JSON object or array `text` holds, else None (a bare number or string does not count)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def _is_content_block(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str)


def tool_error_flag(content: Any, message: dict | None = None) -> bool | None:
    """The error flag the tool result carries itself (see module docstring), else None."""
    if message is not None:
        for key in ("is_error", "isError"):
            if isinstance(message.get(key), bool):
                return message[key]
    text = content if isinstance(content, str) else None
    value: Any = parse_json_container(text) if text is not None else content
    if isinstance(value, dict):
        if isinstance(value.get("isError"), bool):
            return value["isError"]
        if value.get("error") is True:
            return True
        if _is_content_block(value) or isinstance(value.get("content"), list):
            return False
    elif isinstance(value, list) and value and all(_is_content_block(item) for item in value):
        return any(item.get("error") is True for item in value)
    if text is not None and text.lstrip().startswith(ERROR_PREFIXES):
        return True
    return None


def _calls_of(message: dict, where: str) -> list[tuple[str | None, str, Any]]:
    """(call id, name, arguments) of each call in an assistant message."""
    calls: list[tuple[str | None, str, Any]] = []
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        if not isinstance(tool_calls, list):
            kind = type(tool_calls).__name__
            raise ChatFormatError(where, f"tool_calls must be list, got {kind}")
        for index, call in enumerate(tool_calls):
            if not isinstance(call, dict):
                raise ChatFormatError(f"{where}.tool_calls[{index}]", "tool call must be object")
            # OpenAI nests name/arguments under "function"; some exports put them on the call.
            function = call.get("function") if isinstance(call.get("function"), dict) else call
            name = function.get("name")
            if not isinstance(name, str) or not name:
                raise ChatFormatError(f"{where}.tool_calls[{index}]", "tool call has no name")
            call_id = call.get("id")
            calls.append((call_id if isinstance(call_id, str) else None, name,
                          function.get("arguments")))
    # Pre-2023 OpenAI function calling: one `function_call`, answered by a role "function" message.
    legacy = message.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        calls.append((None, legacy["name"], legacy.get("arguments")))
    return calls


def convert_messages(messages: Any, position: str, key: str = ".messages") -> ChatConversion:
    """Turn one chat message list into task, system prompt, turns and metadata. `key` is where
    the list sits under `position` ("" for a file that is the bare list).

    Raises ChatFormatError when the list or a message has the wrong type; orphan tool answers and
    unanswered calls are returned in `problems` instead, so the caller can keep the trajectory.
    """
    if not isinstance(messages, list):
        raise ChatFormatError(sub_position(position, key),
                              f"messages must be list, got {type(messages).__name__}")
    system_parts: list[str] = []
    task: str | None = None
    followups: list[str] = []
    text_only: list[tuple[int, str]] = []  # (message index, text)
    # Calls in call order; each is filled by its answer, whatever order answers come in.
    calls: OpenCalls[tuple[Any, str]] = OpenCalls()  # (arguments, where) of each call
    problems: list[tuple[str, str]] = []
    for index, message in enumerate(messages):
        where = sub_position(position, f"{key}[{index}]")
        if not isinstance(message, dict):
            raise ChatFormatError(where, f"message must be object, got {type(message).__name__}")
        role = message.get("role")
        if not isinstance(role, str):
            raise ChatFormatError(where, "message has no role")
        content = message.get("content")
        if role in ("system", "developer"):
            system_parts.append(as_text(content))
        elif role == "user":
            if task is None:
                task = as_text(content)
            else:
                followups.append(as_text(content))
        elif role == "assistant":
            made = _calls_of(message, where)
            if not made:
                text_only.append((index, as_text(content)))
            for call_id, name, arguments in made:
                if call_id is not None and calls.is_open(call_id):
                    raise ChatFormatError(where, f"tool call id {call_id!r} is already open")
                calls.open(call_id, (arguments, where), name)
        elif role in ("tool", "function"):
            # By tool_call_id; without one (legacy function messages, exports that drop ids) the
            # oldest open call with the message's `name`, else the oldest open call.
            name = message.get("name")
            slot = calls.answer((content, message), message.get("tool_call_id"),
                                name if isinstance(name, str) else None, by_id_only=False)
            if slot is None:
                detail = f"tool_call_id {message.get('tool_call_id')!r}"
                problems.append((where, orphan_reason(detail)))
        else:
            raise ChatFormatError(where, f"unknown role {role!r}")

    turns: list[Turn] = []
    content_extras: list[dict[str, Any]] = []
    for slot in calls.slots:
        arguments, call_where = slot.call
        if not slot.answered:
            problems.append((call_where, unanswered_reason(slot.name or "")))
            continue
        content, message = slot.answer
        unwrapped = unwrap_content(as_text(content))
        observation = unwrapped.text
        if unwrapped.extras:
            content_extras.append({"turn_index": len(turns), "extras": unwrapped.extras})
        is_json = parse_json_container(observation) is not None
        turns.append(Turn(
            action=render_call(slot.name or "", arguments),
            observation=observation,
            action_kind="tool_call",
            observation_format="tool_result_json" if is_json else "tool_result_text",
            tool_name=slot.name,
            is_error=tool_error_flag(content, message),
        ))

    metadata: dict[str, Any] = {}
    if content_extras:
        metadata["tool_result_extras"] = content_extras
    if text_only and text_only[-1][0] == len(messages) - 1:
        metadata["final_response"] = text_only.pop()[1]
    if text_only:
        metadata["n_assistant_text_only"] = len(text_only)
    if followups:
        metadata["user_followups"] = followups
    system_prompt = "\n\n".join(system_parts) if system_parts else None
    return ChatConversion(task or "", system_prompt, turns, metadata, problems)


def chat_record_items(
    record: Any, source_path: str, position: str
) -> Iterator[Trajectory | Quarantine]:
    """One `{"messages": [...], task?, domain?, outcome?, ...}` record -> Trajectory + problems.

    The record's own `task` (a string) wins over the first user message, which is then kept in
    metadata when it differs; `domain` and every other scalar field go to metadata.
    """
    if not isinstance(record, dict):
        yield Quarantine(source_path, position,
                         f"record must be object, got {type(record).__name__}")
        return
    try:
        chat = convert_messages(record.get("messages"), position)
    except ChatFormatError as error:
        yield Quarantine(source_path, error.position, error.reason)
        return
    metadata: dict[str, Any] = {}
    task = chat.task
    if isinstance(record.get("task"), str) and record["task"]:
        task = record["task"]
        if chat.task and chat.task != task:
            metadata["first_user_message"] = chat.task
    for key, value in record.items():
        # None is how a table row says "no such field" for this record.
        if value is None or key in ("messages", "outcome") or (
            key == "task" and isinstance(value, str)
        ):
            continue
        metadata[key] = value
    metadata.update(chat.metadata)
    if chat.problems:
        metadata["n_quarantined_messages"] = len(chat.problems)
    yield Trajectory(task=task, turns=chat.turns, position=position,
                     outcome=record_outcome(record, CHAT_OUTCOME_FLAGS),
                     system_prompt=chat.system_prompt, metadata=metadata)
    for where, reason in chat.problems:
        yield Quarantine(source_path, where, reason)
