"""AndroidWorld episodes: one JSON object a file, UI element lists as observations.

Two layouts are read. The full episode record (android_world_agents `results/*.json`)::

    {"task_name": "ContactsAddContact", "goal": "Create a new contact for ...", "success": true,
     "actions": ["Reason: ...\\nAction: {\\"action_type\\": \\"open_app\\", ...}", ...],
     "step_records": [{"step_num": 1, "state": {"ui_elements": [{"text": null,
        "content_description": null, "class_name": "android.widget.ScrollView", ...}]},
        "action": "Reason: ...\\nAction: {...}", "agent_data": {"summary": "...", ...}}, ...],
     "final_state": {"ui_elements": [...]}}

and the plainer demo (`{"goal", "observations": [{"ui_elements": [...]}], "actions": [{...}]}`)
where `observations[0]` is the screen before the first action and `observations[i + 1]` the
screen after action i.

Pairing: `step_records[i].state` is the screen the agent saw BEFORE action i, so turn i =
(action i, screen of step i + 1); the last action's screen is `final_state` (or the step's
`agent_data.after_element_list`). The very first screen goes to metadata["initial_observation"].
A closing `status` action (the agent declaring the goal complete/infeasible) does not touch the
device: it becomes metadata["final_action"], not a turn. The action is the JSON action the agent
sent (re-serialised in its own key order); the "Reason:" text is the agent's thought and goes to
metadata["reasons"]. Observations are rendered by `sources.readers.ui_render` ("ui_elements").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from sources.readers.androidworld_decode import typed_episode
from sources.readers.base import (
    FormatError,
    JsonDocumentReader,
    expect,
    load_json,
    outcome_label,
)
from sources.readers.ui_render import ElementLines, render_ui_elements
from sources.schema import Quarantine, Trajectory, Turn

# AndroidWorld JSONAction action types -> shared action kinds.
ACTION_KINDS: dict[str, str] = {
    "click": "click",
    "double_tap": "click",
    "long_press": "click",
    "input_text": "type",
    "keyboard_enter": "key",
    "navigate_home": "navigate",
    "navigate_back": "navigate",
    "scroll": "scroll",
    "swipe": "scroll",
    "open_app": "open",
    "status": "submit",
    "answer": "message",
    "wait": "other",
}
TERMINAL_ACTIONS = frozenset({"status"})  # ends the episode without acting on the device

_GOAL_KEY = re.compile(r'"goal"\s*:')
_DECODER = json.JSONDecoder()
_ENCODER = json.JSONEncoder(ensure_ascii=False)  # json.dumps(.., ensure_ascii=False), built once


def parse_action(raw: Any) -> tuple[str, str, str | None, str | None]:
    """(action text, kind, action_type, reason) from a JSON action or "Reason/Action" text."""
    if isinstance(raw, dict):
        action_type = raw.get("action_type")
        kind = ACTION_KINDS.get(action_type, "other") if isinstance(action_type, str) else "other"
        return _ENCODER.encode(raw), kind, action_type, None
    text = raw.strip()
    reason = None
    marker = text.rfind("Action:")
    if marker >= 0:
        reason = text[:marker].strip()
        reason = reason.removeprefix("Reason:").strip() or None
        text = text[marker + len("Action:"):].strip()
    brace = text.find("{")
    if brace >= 0:
        try:
            obj, _ = _DECODER.raw_decode(text, brace)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            action, kind, action_type, _ = parse_action(obj)
            return action, kind, action_type, reason
    # Not a JSON action (the agent's output did not parse): keep what it sent, verbatim.
    return text, "other", None, reason


_ELEMENT_LINES = ElementLines()  # this process's lines by element bytes (output-neutral)


def _elements(value: Any, path: Path, position: str) -> list[Any]:
    """A `{"ui_elements": [...]}` state's element list, or FormatError naming the place."""
    state = expect(value, dict, path, position, "state")
    return expect(state.get("ui_elements"), list, path, f"{position}.ui_elements", "ui_elements")


def _render(elements: list[Any], path: Path, position: str) -> str:
    try:
        if elements and type(elements[0]) is msgspec.Raw:  # a typed_episode screen
            return _ELEMENT_LINES.screen(elements)
        return render_ui_elements(elements)
    except TypeError as error:
        raise FormatError(path, position, str(error)) from None


class AndroidWorldReader(JsonDocumentReader):
    """AndroidWorld episode JSON (step_records or demo observations) -> UI turns."""

    name = "androidworld"
    domain = "android"
    description = "JSON action (click/input_text/...) -> UI element list after it, rendered as text"

    document_error: ClassVar[str] = "episode must be a JSON object"  # one episode a file

    def sniff(self, path: Path, head: str) -> bool:
        # A JSON object with a "goal" key and AndroidWorld vocabulary; "action_type" may only
        # appear escaped inside the prompts within the first 64 KB of a full episode record.
        if not head.lstrip().startswith("{") or not _GOAL_KEY.search(head):
            return False
        return any(m in head for m in ('"ui_elements"', '"step_records"', "action_type"))

    def load(self, path: Path) -> Any:
        data = path.read_bytes()
        document = typed_episode(data)
        return load_json(path, data) if document is None else document

    def convert(self, path: Path, document: dict[str, Any]) -> Iterator[Trajectory | Quarantine]:
        yield self._episode(path, document)

    def _episode(self, path: Path, doc: dict[str, Any]) -> Trajectory:
        goal = expect(doc.get("goal"), str, path, "$.goal", "goal")
        metadata: dict[str, Any] = {
            key: value
            for key, value in doc.items()
            if key != "goal" and (value is None or isinstance(value, str | int | float | bool))
        }
        timings = doc.get("step_timings")
        if isinstance(timings, list) and all(isinstance(t, int | float) for t in timings):
            metadata["step_timings"] = timings
        if "step_records" in doc:
            metadata["layout"] = "step_records"
            actions, screens, summaries = self._step_records(path, doc)
            if summaries:
                metadata["summaries"] = summaries
        elif "observations" in doc:
            metadata["layout"] = "observations"
            actions, screens = self._observations(path, doc)
        else:
            raise FormatError(path, "$", "neither step_records nor observations")

        if screens and screens[0] is not None:
            metadata["initial_observation"] = _render(screens[0][0], path, screens[0][1])
        turns: list[Turn] = []
        reasons: list[str | None] = []
        for index, raw in enumerate(actions):
            action, kind, action_type, reason = parse_action(raw)
            reasons.append(reason)
            after = screens[index + 1] if index + 1 < len(screens) else None
            last = index == len(actions) - 1
            if last and action_type in TERMINAL_ACTIONS:
                metadata["final_action"] = action
                continue
            if after is None:
                # The run ended without recording a screen after this action.
                metadata["unobserved_final_action"] = action
                continue
            observation = _render(after[0], path, after[1])
            turns.append(Turn(action=action, observation=observation, action_kind=kind,
                              observation_format="ui_elements"))
        if any(reasons):
            metadata["reasons"] = reasons
        success = doc.get("success", doc.get("is_successful"))
        return Trajectory(task=goal, turns=turns, position="$", outcome=outcome_label(success),
                          metadata=metadata)

    @staticmethod
    def _step_records(
        path: Path, doc: dict[str, Any]
    ) -> tuple[list[Any], list[tuple[list[Any], str] | None], list[str]]:
        """Actions, the screens around them (n + 1, last may be None), and per-step summaries."""
        records = expect(doc["step_records"], list, path, "$.step_records", "step_records")
        actions: list[Any] = []
        screens: list[tuple[list[Any], str] | None] = []
        summaries: list[str] = []
        for index, record in enumerate(records):
            position = f"$.step_records[{index}]"
            expect(record, dict, path, position, "step record")
            where = f"{position}.state"
            screens.append((_elements(record.get("state"), path, where), f"{where}.ui_elements"))
            raw = expect(record.get("action"), (str, dict), path, f"{position}.action", "action")
            actions.append(raw)
            agent_data = record.get("agent_data")
            if isinstance(agent_data, dict) and isinstance(agent_data.get("summary"), str):
                summaries.append(agent_data["summary"])
        # The screen after the last action: final_state, else what the agent recorded after it.
        final = doc.get("final_state")
        after: tuple[list[Any], str] | None = None
        if isinstance(final, dict):
            after = (_elements(final, path, "$.final_state"), "$.final_state.ui_elements")
        elif records:
            agent_data = records[-1].get("agent_data")
            tail = agent_data.get("after_element_list") if isinstance(agent_data, dict) else None
            if isinstance(tail, list) and tail:
                where = f"$.step_records[{len(records) - 1}].agent_data.after_element_list"
                after = (tail, where)
        if not records and isinstance(doc.get("initial_state"), dict):
            where = "$.initial_state"
            screens.append((_elements(doc["initial_state"], path, where), f"{where}.ui_elements"))
        else:
            screens.append(after)
        return actions, screens, summaries

    @staticmethod
    def _observations(
        path: Path, doc: dict[str, Any]
    ) -> tuple[list[Any], list[tuple[list[Any], str] | None]]:
        """Demo layout: observations[0] precedes action 0, observations[i + 1] follows action i."""
        observations = expect(doc["observations"], list, path, "$.observations", "observations")
        raw_actions = expect(doc.get("actions"), list, path, "$.actions", "actions")
        if len(observations) not in (len(raw_actions), len(raw_actions) + 1):
            raise FormatError(
                path, "$.observations",
                f"{len(observations)} observations for {len(raw_actions)} actions",
            )
        actions = []
        for index, raw in enumerate(raw_actions):
            actions.append(expect(raw, (str, dict), path, f"$.actions[{index}]", "action"))
        screens: list[tuple[list[Any], str] | None] = []
        for index, observation in enumerate(observations):
            where = f"$.observations[{index}]"
            screens.append((_elements(observation, path, where), f"{where}.ui_elements"))
        while len(screens) < len(actions) + 1:
            screens.append(None)
        return actions, screens
