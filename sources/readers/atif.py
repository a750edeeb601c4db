"""ATIF (Agent Trajectory Interchange Format, Harbor): one JSON object per run.

    {"schema_version": "ATIF-v1.5", "session_id": "...", "agent": {"name": "terminus-2", ...},
     "steps": [{"step_id": 1, "source": "user", "message": "... Task Description:\\n..."},
               {"step_id": 3, "source": "agent", "message": "Analysis: ...",
                "tool_calls": [{"tool_call_id": "call_1_1", "function_name": "bash_command",
                                "arguments": {"keystrokes": "printf 'Hello' > hello.txt\\n"}}],
                "observation": {"results": [{"content": "New Terminal Output: ..."}]}}]}

A turn is one tool call with the observation result that names it (`source_call_id`); results
without ids are matched in order when they are as many as the calls, otherwise the step's calls
and results form one turn (Terminus sends a step's keystrokes in one go and reports one screen).
Calls no result answers are listed in metadata["calls_without_observation"], results that name
no call of their step are quarantined (sources/readers/pairing.py names both).
A shell call (`bash_command` keystrokes, `execute_bash` command) is rendered as the text sent to
the terminal, any other call as `name({json args})`. Agents without function calling put the call
in the step's message instead (Terminus JSON `{"commands": [{"keystrokes": ...}]}` or XML
`<keystrokes>`, OpenHands `<function=name><parameter=k>v</parameter>`): it is parsed from there.
An agent step with an observation but no call anywhere ran nothing (e.g. the harness's reply to
an unparseable response) and is counted in metadata, not made a turn.

Only `agent` steps make turns, so the other sources never cost the file: the first `system` step
before the task is the system prompt, later ones (context summarisation hand-offs) and any
source value the reader does not know go to metadata. Steps copied from an earlier trajectory
(`is_copied_context`, continuations) are counted, not turned again. ATIF carries no outcome
label, so the outcome is "unknown".
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
    is_single_json_object,
    render_call,
)
from sources.readers.pairing import OpenCalls, note_unanswered, orphan_reason
from sources.schema import Quarantine, Trajectory, Turn

# Terminus prompts: "<instructions>Task Description:\n<task>\n\n\nCurrent terminal state:\n<screen>"
_SCHEMA_VERSION = re.compile(r'"schema_version"\s*:\s*"ATIF')
_TERMINUS_PROMPT = re.compile(
    r"Task Description:\n(.*?)\n+Current terminal state:\n(.*)\Z", re.DOTALL
)
_SUBMIT_TOOLS = frozenset({"mark_task_complete", "task_complete", "submit", "finish"})
_SHELL_TOOLS = {"bash_command": "keystrokes", "execute_bash": "command", "bash": "command"}
_XML_KEYSTROKES = re.compile(r"<keystrokes[^>]*>(.*?)</keystrokes>", re.DOTALL)
_XML_FUNCTION = re.compile(r"<function=([\w.-]+)>(.*?)</function>", re.DOTALL)
_XML_PARAMETER = re.compile(r"<parameter=([\w.-]+)>\n?(.*?)\n?</parameter>", re.DOTALL)
_PARSE_ERROR = "Previous response had parsing errors"
_SCREEN_PREFIXES = ("New Terminal Output", "Current terminal state", "Current Terminal Screen")


def is_parse_error(text: str) -> bool:
    """Terminus's reply to a response it could not parse (no keystrokes were sent)."""
    return text.lstrip().startswith(_PARSE_ERROR)


def split_terminus_prompt(message: str) -> tuple[str, str | None]:
    """(task, initial screen) from a Terminus first prompt; (message, None) for other prompts."""
    match = _TERMINUS_PROMPT.search(message)
    if not match or not match.group(1).strip():
        return message, None
    return match.group(1), match.group(2).rstrip("\n")


def render_terminal_call(name: str, arguments: Any) -> str:
    """The text a shell call sent to the terminal, `name(arguments)` (render_call) for any other
    call."""
    key = _SHELL_TOOLS.get(name)
    text = arguments.get(key) if key and isinstance(arguments, dict) else None
    if isinstance(text, str):
        return text
    return render_call(name, arguments)


def message_calls(message: str) -> list[tuple[str, Any]]:
    """Calls written in an agent message by agents without function calling; [] when none."""
    functions = _XML_FUNCTION.findall(message)
    if functions:
        return [(name, dict(_XML_PARAMETER.findall(body))) for name, body in functions]
    keystrokes = _XML_KEYSTROKES.findall(message)
    if keystrokes:
        return [("bash_command", {"keystrokes": text}) for text in keystrokes]
    try:
        reply = json.loads(message)
    except ValueError:
        return []
    commands = reply.get("commands") if isinstance(reply, dict) else None
    if not isinstance(commands, list):
        return []
    calls: list[tuple[str, Any]] = [
        ("bash_command", {"keystrokes": command["keystrokes"]})
        for command in commands
        if isinstance(command, dict) and isinstance(command.get("keystrokes"), str)
    ]
    if not calls and reply.get("task_complete") is True:
        calls.append(("mark_task_complete", {}))
    return calls


def render_calls(calls: list[tuple[str, Any]]) -> str:
    """Several calls sent at once, in order; a newline separates parts that lack one."""
    text = ""
    for name, arguments in calls:
        part = render_terminal_call(name, arguments)
        if text and not text.endswith("\n"):
            text += "\n"
        text += part
    return text


def calls_kind(names: list[str]) -> str:
    if names and all(name in _SUBMIT_TOOLS for name in names):
        return "submit"
    if any(name in _SHELL_TOOLS for name in names):
        return "shell"
    return "tool_call"


def observation_format(text: str) -> str:
    return "terminal_screen" if text.lstrip().startswith(_SCREEN_PREFIXES) else "tool_result_text"


def calls_turn(calls: list[tuple[str, Any]], observation: str, is_error: bool | None) -> Turn:
    names = [name for name, _ in calls]
    distinct = sorted(set(names))
    return Turn(
        action=render_calls(calls),
        observation=observation,
        action_kind=calls_kind(names),
        observation_format=observation_format(observation),
        tool_name=distinct[0] if len(distinct) == 1 else ",".join(distinct),
        is_error=is_error,
    )


class AtifReader(JsonDocumentReader):
    """ATIF trajectory: tool calls matched to observation results."""

    name: ClassVar[str] = "atif"
    domain: ClassVar[str] = "terminal"
    description: ClassVar[str] = (
        "ATIF: action = a step's tool call (keystrokes for bash_command, else name(args)), "
        "observation = the observation result for that call"
    )

    def sniff(self, path: Path, head: str) -> bool:
        if not is_single_json_object(head):
            return False
        text = head.lstrip()
        if '"schema_version"' not in text:  # both tests below need it: one scan of the head
            return False
        if _SCHEMA_VERSION.search(text):
            return True
        return all(f'"{key}"' in text for key in ("session_id", "steps"))

    def convert(self, path: Path, document: dict[str, Any]) -> Iterator[Trajectory | Quarantine]:
        quarantined: list[Quarantine] = []
        trajectory = self._trajectory(path, document, quarantined)
        yield from quarantined
        yield trajectory

    def _trajectory(
        self, path: Path, document: dict[str, Any], quarantined: list[Quarantine]
    ) -> Trajectory:
        steps = expect(document.get("steps"), list, path, "$.steps", "steps")
        task: str | None = None
        system_prompt: str | None = None
        turns: list[Turn] = []
        metadata: dict[str, Any] = {}
        skipped: list[dict[str, Any]] = []
        unanswered: list[str] = []  # calls no result answered
        later_user_messages = 0
        copied_steps = 0
        system_steps: list[dict[str, Any]] = []
        unknown_sources: dict[str, int] = {}
        for index, step in enumerate(steps):
            where = f"$.steps[{index}]"
            expect(step, dict, path, where, "step")
            source = step.get("source")
            if source == "system" and system_prompt is None and task is None:
                system_prompt = as_text(step.get("message"))
            elif source == "system":
                # A later system step (context summarisation, hand-off) is not the prompt.
                note = {"step_id": step.get("step_id"), "message": as_text(step.get("message"))}
                if step.get("observation") is not None:
                    note["observation"] = step["observation"]
                system_steps.append(note)
            elif source == "user" and task is None:
                task, screen = split_terminus_prompt(as_text(step.get("message")))
                if screen is not None:
                    metadata["initial_terminal_state"] = screen
            elif source == "user":
                later_user_messages += 1
            elif source == "agent" and step.get("is_copied_context") is True:
                copied_steps += 1  # already a turn of the trajectory this one continues
            elif source == "agent":
                turns.extend(self._step_turns(path, where, step, skipped, unanswered,
                                              quarantined))
            else:
                # Not needed by the canonical schema: kept in metadata, never costs the file.
                unknown_sources[str(source)] = unknown_sources.get(str(source), 0) + 1
        if task is None:
            raise FormatError(path, "$.steps", "no user step holding the task")

        if skipped:
            metadata["steps_not_turns"] = skipped
        note_unanswered(metadata, unanswered)
        if later_user_messages:
            metadata["later_user_messages"] = later_user_messages
        if copied_steps:
            metadata["copied_context_steps"] = copied_steps
        if system_steps:
            metadata["system_steps"] = system_steps
        if unknown_sources:
            metadata["steps_of_unknown_source"] = unknown_sources
        agent = document.get("agent")
        if isinstance(agent, dict):
            metadata["agent"] = {k: v for k, v in agent.items() if k != "tool_definitions"}
        for key in (
            "schema_version",
            "session_id",
            "notes",
            "final_metrics",
            "continued_trajectory_ref",
        ):
            if document.get(key) is not None:
                metadata[key] = document[key]
        return Trajectory(
            task=task,
            turns=turns,
            position="$",
            outcome="unknown",
            system_prompt=system_prompt,
            metadata=metadata,
        )

    def _step_turns(
        self,
        path: Path,
        where: str,
        step: dict[str, Any],
        skipped: list[dict[str, Any]],
        unanswered: list[str],
        quarantined: list[Quarantine],
    ) -> list[Turn]:
        calls = expect(
            step.get("tool_calls") or [], list, path, f"{where}.tool_calls", "tool_calls"
        )
        observation = expect(
            step.get("observation") or {}, dict, path, f"{where}.observation", "observation"
        )
        results = expect(
            observation.get("results") or [], list, path, f"{where}.observation.results", "results"
        )
        step_id = step.get("step_id")
        parsed: list[tuple[str, str, Any]] = []
        for number, call in enumerate(calls):
            at = f"{where}.tool_calls[{number}]"
            expect(call, dict, path, at, "tool call")
            name = expect(
                call.get("function_name"), str, path, f"{at}.function_name", "function_name"
            )
            parsed.append((str(call.get("tool_call_id")), name, call.get("arguments", {})))
        unparsed = any(
            is_parse_error(as_text(r.get("content"))) for r in results if isinstance(r, dict)
        )
        if not parsed and results and not unparsed and isinstance(step.get("message"), str):
            written = message_calls(step["message"])
            parsed = [(f"message call {n}", name, args) for n, (name, args) in enumerate(written)]
        if not parsed:
            # Nothing was executed: a plain reply, or the harness answering an unparseable one.
            reason = "observation without tool calls" if results else "message without tool calls"
            if unparsed:
                reason = "response could not be parsed; nothing ran"
            skipped.append({"step_id": step_id, "reason": reason})
            return []
        for number, result in enumerate(results):
            expect(result, dict, path, f"{where}.observation.results[{number}]", "result")

        open_calls: OpenCalls[tuple[str, Any]] = OpenCalls()  # (name, arguments) of each call
        for call_id, name, args in parsed:
            open_calls.open(call_id, (name, args), name)
        loose: list[dict[str, Any]] = []
        for number, result in enumerate(results):
            source_id = result.get("source_call_id")
            if source_id is None:
                loose.append(result)
            elif open_calls.answer(result, source_id) is None:
                quarantined.append(
                    Quarantine(
                        source_path=str(path),
                        position=f"{where}.observation.results[{number}]",
                        reason=orphan_reason(f"source_call_id {source_id!r} in this step"),
                    )
                )
        waiting = [slot.call for slot in open_calls.waiting()]
        turns = [
            calls_turn([slot.call], as_text(slot.answer.get("content")), _error(slot.answer))
            for slot in open_calls.answered()
        ]
        if not waiting and loose:
            skipped.append({"step_id": step_id, "reason": orphan_reason("result without id")})
        elif waiting and not loose:
            unanswered.extend(render_calls([call]) for call in waiting)
        elif len(loose) == len(waiting):
            turns += [
                calls_turn([call], as_text(result.get("content")), _error(result))
                for call, result in zip(waiting, loose, strict=True)
            ]
        elif waiting:
            # One screen for several keystroke batches (Terminus): the calls form one turn.
            text = "\n".join(as_text(result.get("content")) for result in loose)
            turns.append(calls_turn(waiting, text, None))
        extra = step.get("extra")
        exit_code = extra.get("exit_code") if isinstance(extra, dict) else None
        if len(turns) == 1 and isinstance(exit_code, int) and not isinstance(exit_code, bool):
            # ATIF has no standard exit-code field; a step's `extra.exit_code` (as our terminal
            # collector writes it) is used when the step ran exactly one command.
            turns[0].exit_code = exit_code
        return turns


def _error(result: dict[str, Any]) -> bool | None:
    value = result.get("is_error")
    return value if isinstance(value, bool) else None
