"""OSWorld `traj.jsonl`: one JSON object per executed action, one trajectory per file.

Written by OSWorld's lib_run_single into results/<action_space>/<observation_type>/<model>/
<app domain>/<example id>/traj.jsonl::

    {"step_num": 1, "action_timestamp": "20250828@161440",
     "action": "pyautogui.typewrite(\\"set Bing as default search engine\\"); pyautogui.press(...)",
     "response": "type:set Bing as default search engine", "reward": 0, "done": false, "info": {},
     "screenshot_file": "step_1_20250828@161440.png"}

Action: the `action` field, pyautogui code (action_kind "code"), the special strings DONE / FAIL
("submit") and WAIT ("other"), or a computer_13 JSON action. Observation: the accessibility tree
when the record carries one ("a11y_tree"); otherwise what the environment returned in text
("text"): the screenshot file name, plus `done`, `info` and `reward` when they say something.
`response` is the AGENT's model output (agent.predict), not the environment's, so it goes to
metadata["responses"], never into the observation. Outcome: OSWorld scores an episode in
`result.txt` beside traj.jsonl (written after evaluation); when it is there it decides the
outcome. The per-step `reward` is a placeholder 0 in DesktopEnv.step, so it only counts when the
last record's reward is 1 (success); otherwise "unknown". The instruction is not in this file:
the task is a record's `instruction` if one carries it, else "". A record with only an `Error`
(lib_run_single's exception record) goes to metadata["errors"].

When the agent's `messages.json` lies beside traj.jsonl (a computer-use agent whose records
carry only a screenshot file name), the turns come from it instead (`osworld_messages`): one per
tool call, its executed lines as the action, the text the agent got back as the observation,
the task from the system prompt; traj.jsonl's records must agree with the calls, and its closing
DONE / FAIL is the last turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sources.readers.base import FormatError, Reader, iter_jsonl
from sources.readers.osworld_messages import conversation_turns, read_conversation
from sources.schema import Quarantine, Trajectory, Turn

MESSAGES = "messages.json"  # the agent's conversation, when its harness wrote one beside
A11Y_KEYS = ("a11y_tree", "accessibility_tree", "linearized_accessibility_tree")
SPECIAL_ACTIONS = {"DONE": "submit", "FAIL": "submit", "WAIT": "other"}
# computer_13 action types -> shared action kinds
COMPUTER_13_KINDS = {
    "CLICK": "click", "DOUBLE_CLICK": "click", "RIGHT_CLICK": "click", "MOUSE_DOWN": "click",
    "MOUSE_UP": "click", "MOVE_TO": "other", "DRAG_TO": "other", "SCROLL": "scroll",
    "TYPING": "type", "PRESS": "key", "KEY_DOWN": "key", "KEY_UP": "key", "HOTKEY": "key",
    "WAIT": "other", "DONE": "submit", "FAIL": "submit",
}
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)
_FIRST_LINE_KEYS = ('"step_num"', '"action"')


def render_action(action: Any) -> tuple[str, str]:
    """(action text, action kind) for pyautogui code, DONE/FAIL/WAIT, or a computer_13 dict."""
    if isinstance(action, str):
        return action, SPECIAL_ACTIONS.get(action.strip(), "code")
    kind = COMPUTER_13_KINDS.get(str(action.get("action_type", "")).upper(), "other")
    return json.dumps(action, ensure_ascii=False), kind


def render_observation(record: dict[str, Any]) -> tuple[str, str]:
    """(observation, format): the a11y tree if recorded, else the environment's textual return."""
    for key in A11Y_KEYS:
        tree = record.get(key)
        if isinstance(tree, str) and tree.strip():
            return tree, "a11y_tree"
    lines = []
    if record.get("screenshot_file") is not None:
        lines.append(f"screenshot: {record['screenshot_file']}")
    if record.get("done") is True:
        lines.append("done: true")
    if record.get("info"):
        lines.append(f"info: {json.dumps(record['info'], ensure_ascii=False, sort_keys=True)}")
    reward = record.get("reward")
    if reward not in (None, 0):
        lines.append(f"reward: {reward}")
    return "\n".join(lines), "text"


def _closing_turn(messages: Path, line_no: int, record: dict[str, Any]) -> Turn:
    """A traj.jsonl record after the last tool call of messages.json: only the agent's closing
    DONE / FAIL has none; its observation is what the record says, without the screenshot name."""
    action, kind = render_action(record["action"])
    if kind != "submit":
        raise FormatError(messages, "$", f"traj.jsonl line {line_no} ({action[:80]!r}) has no "
                          "tool call in messages.json")
    observation, _ = render_observation({**record, "screenshot_file": None})
    return Turn(action=action, observation=observation, action_kind=kind,
                observation_format="text")


def _result_score(folder: Path) -> float | None:
    """The evaluator's score from result.txt beside traj.jsonl, when present and numeric."""
    result = folder / "result.txt"
    if not result.is_file():
        return None
    try:
        return float(result.read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError, ValueError):
        return None


class OsWorldReader(Reader):
    """OSWorld traj.jsonl -> (pyautogui action, a11y tree or environment text)."""

    name = "osworld_traj"
    domain = "os"
    description = "pyautogui code / DONE / FAIL -> a11y tree if recorded, else screenshot + info"
    # An OSWorld result folder (traj.jsonl, result.txt, screenshots) is read as one unit, so
    # its screenshots and score file are not mistaken for unreadable inputs.
    reads_directories = True

    def sniff(self, path: Path, head: str) -> bool:
        if path.is_dir():
            return (path / "traj.jsonl").is_file()
        first = head.lstrip().split("\n", 1)[0]
        if not first.startswith("{"):
            return False
        if all(key in first for key in _FIRST_LINE_KEYS):
            return "screenshot_file" in first or "action_timestamp" in first or "reward" in first
        # name as tie-breaker: an OSWorld file may open with an {"Error": ...} record
        return path.name == "traj.jsonl" and '"Error"' in first

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        if path.is_dir():
            path = path / "traj.jsonl"
        turns: list[Turn] = []
        responses: list[Any] = []
        timestamps: list[Any] = []
        errors: list[dict[str, Any]] = []
        bad_lines: list[int] = []
        records: list[tuple[int, dict[str, Any]]] = []
        task = ""
        last: dict[str, Any] | None = None
        for line_no, record in iter_jsonl(path):
            position = f"line {line_no}"
            reason = None
            if isinstance(record, FormatError):
                reason = record.reason
            elif not isinstance(record, dict):
                reason = f"record must be an object, got {type(record).__name__}"
            elif "action" not in record and "Error" in record:
                errors.append({"line": line_no, "error": record["Error"]})
                continue
            elif not isinstance(record.get("action"), str | dict):
                reason = f"action must be str or dict, got {type(record.get('action')).__name__}"
            if reason is not None:
                bad_lines.append(line_no)
                yield Quarantine(source_path=str(path), position=position, reason=reason)
                continue
            if isinstance(record.get("instruction"), str) and not task:
                task = record["instruction"]
            action, kind = render_action(record["action"])
            observation, observation_format = render_observation(record)
            turns.append(Turn(action=action, observation=observation, action_kind=kind,
                              observation_format=observation_format))
            records.append((line_no, record))
            responses.append(record.get("response"))
            timestamps.append(record.get("action_timestamp"))
            last = record
        if not turns and not errors:
            if bad_lines:
                return  # every line was quarantined: nothing left to make a trajectory of
            raise FormatError(path, "line 1", "no trajectory records")
        metadata = self._metadata(path, responses, timestamps, errors, bad_lines, last)
        system_prompt = None
        messages = path.parent / MESSAGES
        if messages.is_file():
            conversation = read_conversation(messages)
            turns, rest = conversation_turns(messages, conversation, records)
            turns += [_closing_turn(messages, line_no, record) for line_no, record in rest]
            task, system_prompt = conversation.task or task, conversation.system_prompt
            metadata["observations_from"] = MESSAGES
            metadata["assistant_messages"] = conversation.n_assistant_messages
            if conversation.initial_observation:
                metadata["initial_observation"] = conversation.initial_observation
        yield Trajectory(task=task, turns=turns, position="$", system_prompt=system_prompt,
                         outcome=self._outcome(path, last), metadata=metadata)

    @staticmethod
    def _outcome(path: Path, last: dict[str, Any] | None) -> str:
        score = _result_score(path.parent)
        if score is not None:
            if score >= 1:
                return "success"
            return "failure" if score <= 0 else "unknown"
        if last is not None and last.get("reward") == 1:
            return "success"
        return "unknown"  # per-step reward is a placeholder 0 in OSWorld: not a failure label

    @staticmethod
    def _metadata(
        path: Path, responses: list[Any], timestamps: list[Any], errors: list[dict[str, Any]],
        bad_lines: list[int], last: dict[str, Any] | None,
    ) -> dict[str, Any]:
        metadata: dict[str, Any] = {"result_folder": path.parent.name}
        folder = path.parent
        if _UUID.match(folder.name):
            # results/<action_space>/<observation_type>/<model>/<app domain>/<example id>/
            metadata["example_id"] = folder.name
            names = ["app_domain", "model", "observation_type", "action_space"]
            for key, ancestor in zip(names, folder.parents, strict=False):
                metadata[key] = ancestor.name
        if any(response not in (None, "") for response in responses):
            metadata["responses"] = responses
        if any(stamp is not None for stamp in timestamps):
            metadata["action_timestamps"] = timestamps
        score = _result_score(folder)
        if score is not None:
            metadata["score"] = score
        if last is not None:
            metadata["last_step"] = last.get("step_num")
            metadata["done"] = last.get("done")
        if errors:
            metadata["errors"] = errors
        if bad_lines:
            metadata["quarantined_lines"] = bad_lines
        return metadata
