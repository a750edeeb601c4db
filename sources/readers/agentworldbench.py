"""AgentWorldBench JSONL (Qwen-AgentWorld): one evaluation sample per line, with its trajectory.

    {"task": "mcp", "id": 145256090131919, "turn_idx": 2, "total_turns": 5,
     "prompt": ["### Turn 1\\n**Action:**\\n```json\\n{\\"name\\": \\"list_files\\", ...}\\n```",
                "### Turn 2\\n**Action:**\\n...", ...],
     "response": ["**Environment Observation:**\\n{\\"files\\": [...]}",
                  "**Environment Observation:**\\n...", ...],
     "current_prompt": "### Turn 2\\n**Action:**\\n...",
     "system_str": "# Role and Objective\\n\\nYou are a **Tool World Model** ..."}

`prompt[i]` is the action of turn i, `response[i]` the real observation that followed it (the
benchmark's ground truth), so each pair is a turn: action = the `**Action:**` section (or the
whole prompt) without the "### Turn N" header, observation = the response without its
"**Environment Observation:**" marker; both otherwise verbatim. The sample under evaluation is
turn `turn_idx` (1-based): its action is metadata["target_action"] (with id, turn_idx,
total_turns, and target_turn_index = its 0-based index among the turns when its ground truth is
in `response`). A prompt with no response (the target when the record stops there) is never a
turn with an empty observation: it is the target, or is listed in
metadata["calls_without_observation"].

GUI records (android, web, os) put "**Task Instruction:**" and "**Current State:**" sections
before the action: the first Task Instruction is the task (other records have none: task "");
the first turn's Current State is metadata["initial_state"], and a later Current State is kept
in metadata["current_states"] only when it differs from the previous observation. Other
sections (e.g. "**Historical Context:**") go to metadata["other_sections"]. The domain is the
record's `task` ("mcp", or "<prefix>/mcp") in metadata["domain"]; `system_str` (the world-model
prompt, not the agent's) is metadata["system_str"]; the benchmark carries no success label.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sources.readers.base import FormatError, Reader, read_jsonl_items
from sources.readers.chat_messages import parse_json_container
from sources.readers.pairing import note_unanswered
from sources.schema import Quarantine, Trajectory, Turn

OBSERVATION_MARKER = "**Environment Observation:**"
_TURN_HEADER = re.compile(r"\A\s*### Turn \d+[ \t]*\n?")
KNOWN_SECTIONS = ("Task Instruction", "Historical Context", "Current State", "Action")
_SECTION = re.compile(r"^\*\*(" + "|".join(KNOWN_SECTIONS) + r"):\*\*[ \t]*\n?", re.MULTILINE)
ACTION_KIND = {"mcp": "tool_call", "search": "search", "terminal": "shell", "swe": "tool_call"}
OBSERVATION_FORMAT = {
    "search": "search_results", "terminal": "terminal_screen", "swe": "text",
    "android": "ui_elements", "web": "a11y_tree", "os": "a11y_tree",
}
_GUI_VERB = re.compile(
    r"\b(click|tap|long_press|type|input_text|scroll|swipe|navigate|goto|go_to|open_app|"
    r"press|key|hotkey)\b", re.IGNORECASE)
GUI_KIND = {"tap": "click", "long_press": "click", "input_text": "type", "swipe": "scroll",
            "goto": "navigate", "go_to": "navigate", "open_app": "open", "press": "key",
            "hotkey": "key"}


def split_prompt(text: str) -> tuple[str, dict[str, str]]:
    """(action, sections) of one turn prompt: the Action section, or the whole text without one."""
    body = _TURN_HEADER.sub("", text, count=1)
    matches = list(_SECTION.finditer(body))
    if not matches:
        return body, {}
    sections: dict[str, str] = {}
    preamble = body[: matches[0].start()].strip()
    if preamble:
        sections["Preamble"] = preamble
    for match, following in zip(matches, [*matches[1:], None], strict=True):
        end = following.start() if following else len(body)
        content = body[match.end():end]
        # Sections are separated by a blank line; the action itself keeps its text verbatim.
        sections.setdefault(match.group(1), content.rstrip("\n") if following else content)
    action = sections.pop("Action", None)
    return (action if action is not None else body), sections


def strip_observation(text: str) -> str:
    """The response without its "**Environment Observation:**" marker and the newline after it."""
    stripped = text.lstrip()
    if stripped.startswith(OBSERVATION_MARKER):
        rest = stripped[len(OBSERVATION_MARKER):]
        return rest[1:] if rest.startswith("\n") else rest.lstrip(" ")
    return text


def _domain_of(record: dict[str, Any]) -> str | None:
    task = record.get("task")
    return task.split("/")[-1] if isinstance(task, str) and task else None


def _action_kind(domain: str | None, action: str) -> str:
    if domain in ACTION_KIND:
        return ACTION_KIND[domain]
    match = _GUI_VERB.search(action)
    if not match:
        return "other"
    verb = match.group(1).lower()
    return GUI_KIND.get(verb, verb)


def _observation_format(domain: str | None, observation: str) -> str:
    if domain in OBSERVATION_FORMAT:
        return OBSERVATION_FORMAT[domain]
    is_json = parse_json_container(observation) is not None
    return "tool_result_json" if is_json else "tool_result_text"


def _text_list(source: str, position: str, record: dict[str, Any], key: str) -> list[str]:
    value = record.get(key, [])
    if isinstance(value, str):
        value = [value]  # eval.py accepts a bare string for a one-turn sample
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise FormatError(source, f"{position} $.{key}", f"{key} must be a list of strings")
    return value


class AgentWorldBenchReader(Reader):
    """AgentWorldBench `*_test.jsonl`: prompt/response pairs as turns, the target in metadata."""

    name: ClassVar[str] = "agentworldbench_jsonl"
    domain: ClassVar[str] = "mcp"
    description: ClassVar[str] = (
        "action = the **Action:** text of each `prompt` entry; observation = the matching "
        "`response` without its **Environment Observation:** marker; target turn in metadata"
    )

    def sniff(self, path: Path, head: str) -> bool:
        return (
            head.lstrip().startswith("{")
            and '"current_prompt"' in head
            and ('"system_str"' in head or '"turn_idx"' in head)
        )

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        yield from read_jsonl_items(
            path, lambda source, position, record: [self._record(source, position, record)]
        )

    def _record(self, source: str, position: str, record: Any) -> Trajectory:
        if not isinstance(record, dict):
            raise FormatError(source, position, f"record must be object, got "
                                                f"{type(record).__name__}")
        prompts = _text_list(source, position, record, "prompt")
        responses = _text_list(source, position, record, "response")
        if len(responses) > len(prompts):
            raise FormatError(source, f"{position} $.response", f"{len(responses)} responses "
                                                                 f"for {len(prompts)} prompts")
        turn_idx = record.get("turn_idx")
        if turn_idx is not None and (isinstance(turn_idx, bool) or not isinstance(turn_idx, int)
                                     or turn_idx < 1):
            raise FormatError(source, f"{position} $.turn_idx", "turn_idx must be an integer >= 1")
        current = record.get("current_prompt")
        if current is not None and not isinstance(current, str):
            raise FormatError(source, f"{position} $.current_prompt", "must be a string")
        domain = _domain_of(record)
        target = turn_idx - 1 if turn_idx is not None else None

        metadata: dict[str, Any] = {"domain": domain}
        for key in ("id", "turn_idx", "total_turns"):
            metadata[key] = record.get(key)
        task = ""
        turns: list[Turn] = []
        previous_observation: str | None = None
        current_states: dict[str, str] = {}
        other_sections: list[dict[str, Any]] = []
        pending: list[str] = []
        for index, prompt in enumerate(prompts):
            action, sections = split_prompt(prompt)
            if not task and sections.get("Task Instruction", "").strip():
                task = sections["Task Instruction"].strip()
            state = sections.get("Current State")
            if state is not None:
                if index == 0:
                    metadata["initial_state"] = state
                elif state.strip() != (previous_observation or "").strip():
                    current_states[str(index)] = state
            for name, text in sections.items():
                if name not in ("Task Instruction", "Current State"):
                    other_sections.append({"turn": index, "name": name, "text": text})
            if index >= len(responses):
                if index != target:
                    pending.append(action)
                continue
            observation = strip_observation(responses[index])
            turns.append(Turn(action=action, observation=observation,
                              action_kind=_action_kind(domain, action),
                              observation_format=_observation_format(domain, observation)))
            previous_observation = observation

        target_prompt = current if current else (
            prompts[target] if target is not None and target < len(prompts) else None)
        if target_prompt is not None:
            target_action, target_sections = split_prompt(target_prompt)
            metadata["target_action"] = target_action
            if not task and target_sections.get("Task Instruction", "").strip():
                task = target_sections["Task Instruction"].strip()
            if target is not None and target >= len(prompts) and "Current State" in target_sections:
                metadata["target_state"] = target_sections["Current State"]
        metadata["target_turn_index"] = (
            target if target is not None and target < len(turns) else None)
        if current_states:
            metadata["current_states"] = current_states
        if other_sections:
            metadata["other_sections"] = other_sections
        note_unanswered(metadata, pending)
        if "system_str" in record:
            metadata["system_str"] = record["system_str"]
        known = ("task", "id", "prompt", "response", "current_prompt", "system_str", "turn_idx",
                 "total_turns")
        metadata.update({k: v for k, v in record.items() if k not in known})
        return Trajectory(task=task, turns=turns, position=position, outcome="unknown",
                          metadata=metadata)
