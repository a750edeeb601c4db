"""terminal-bench run folders: one trial's results plus an asciinema recording of the terminal.

    fix-permissions.1-of-1/results.json      {"task_id": "fix-permissions", "instruction": "...",
                                              "is_resolved": true, "failure_mode": "unset", ...}
    fix-permissions.1-of-1/sessions/agent.cast
        {"version": 2, "width": 160, "height": 40, "timestamp": 1755153104, ...}
        [0.788967, "i", "clear\\r"]
        [0.789942, "o", "clear\\r\\n\\u001b[?2004l\\r"]

Which terminal the agent used decides how the run is read:
  * an agent that types into the recorded terminal (Terminus): the recording does not delimit
    steps, so the reader cuts it at the agent's input events: input events with no output
    between them (or with only their own echo, as when typing key by key) form one action, and
    everything the terminal printed until the next action is its observation (rendered like a
    screen, keys named as tmux names them: `terminal_screen`). The harness's own framing, a
    first `clear` and a last `C-d`, is not a turn (listed in metadata);
  * an installed agent (the harness sources /installed-agent/install-agent.sh and launches it):
    the keystrokes are the harness's, the agent's steps are in what it printed, read by
    `tbench_agents` or quarantined there with the reason;
  * a recording with nothing but the harness's keystrokes (an agent that ran its commands
    elsewhere): there is no agent step in the folder, so the run is quarantined, never stored
    as harness turns.
Task and outcome come from results.json (`is_resolved` true -> success, false -> failure, null
-> unknown). A folder whose results.json is missing (an interrupted or partly copied run) is
still a run: the recording alone gives the turns, the task is empty and the outcome unknown
(`results_missing` in metadata).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sources.readers.base import FormatError, Reader, iter_jsonl, load_json
from sources.readers.tbench_agents import HARNESS_KEYS as _HARNESS
from sources.readers.tbench_agents import INSTALL_KEYS as _INSTALL
from sources.readers.tbench_agents import installed_agent_run
from sources.readers.terminal_screen import plain_text, render_keys, render_output
from sources.schema import Quarantine, Trajectory, Turn

__all__ = ["TerminalBenchReader", "render_keys", "render_output"]

CAST = "sessions/agent.cast"
HARNESS_ONLY = (
    "the recording holds only the terminal-bench harness's own keystrokes (clear, the test "
    "runner, C-d): the agent ran its commands outside this terminal, so its actions and what "
    "they returned are not in the run folder"
)
class _Turn:
    def __init__(self) -> None:
        self.keys: list[str] = []
        self.output: list[str] = []  # output since the first key of this turn
        self.since_last_key: list[str] = []

    @property
    def ended(self) -> bool:
        """Enter or a control key was sent: the next input is a new action."""
        return any(c in "\r\n" or (c < " " and c not in "\t\x1b") for c in "".join(self.keys))


class TerminalBenchReader(Reader):
    """terminal-bench trial folder: the agent recording cut into keystroke/screen turns."""

    name: ClassVar[str] = "tbench_run"
    domain: ClassVar[str] = "terminal"
    description: ClassVar[str] = (
        "terminal-bench run folder: action = keystrokes of input events in sessions/agent.cast, "
        "observation = the rendered terminal output until the next input"
    )
    reads_directories: ClassVar[bool] = True

    def sniff(self, path: Path, head: str) -> bool:
        if not path.is_dir() or not (path / "sessions").is_dir():
            return False
        if (path / "results.json").is_file():
            return any((path / "sessions").glob("*.cast"))
        return (path / CAST).is_file()  # no results: the agent recording must be there

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        has_results = (path / "results.json").is_file()
        results = load_json(path / "results.json") if has_results else {}
        if not isinstance(results, dict):
            raise FormatError(path / "results.json", "$", "results.json must be a JSON object")
        cast = path / CAST
        if not cast.is_file():
            raise FormatError(path, CAST, "no agent recording")
        task = results.get("instruction") if has_results else ""
        if has_results and (not isinstance(task, str) or not task.strip()):
            yield Quarantine(
                str(path), "results.json $.instruction", "instruction missing or not a string"
            )
            return

        header, turns, before_first, ignored, problems = self._recording(path)
        yield from problems
        height = header.get("height") if isinstance(header.get("height"), int) else 40
        metadata = self._metadata(
            path, results, header, render_output("".join(before_first), height), ignored
        )
        if not has_results:
            metadata["results_missing"] = True
        outcome = {True: "success", False: "failure"}.get(results.get("is_resolved"), "unknown")
        actions = [render_keys("".join(turn.keys)).strip() for turn in turns]
        install = next((i for i, a in enumerate(actions) if _INSTALL.match(a)), None)
        if install is not None:
            yield installed_agent_run(
                path, [(a, "".join(t.output)) for a, t in zip(actions, turns, strict=True)],
                install, str(task), outcome, metadata, header,
            )
            return
        if all(_HARNESS.match(action) for action in actions):
            reason = HARNESS_ONLY if actions else "the recording has no keystrokes at all"
            yield Quarantine(str(path), "folder", reason)
            return
        # The harness clears the screen before the agent starts and ends the recording with C-d.
        framing = {i for i in (0, len(turns) - 1) if actions[i] == ("clear", "C-d")[i > 0]}
        if framing:
            metadata["harness_keystrokes_dropped"] = [actions[i] for i in sorted(framing)]
        kept = [turn for i, turn in enumerate(turns) if i not in framing]
        yield Trajectory(
            task=str(task),
            turns=[self._turn(turn, height) for turn in kept],
            position="folder",
            outcome=outcome,
            metadata=metadata,
        )

    def _recording(
        self, path: Path
    ) -> tuple[dict[str, Any], list[_Turn], list[str], Counter[str], list[Quarantine]]:
        """The cast's header, its keystroke turns, the output before the first key, the event
        kinds ignored, and a quarantine item per broken event line."""
        cast = path / CAST
        header: dict[str, Any] | None = None
        turns: list[_Turn] = []
        before_first: list[str] = []
        ignored: Counter[str] = Counter()
        problems: list[Quarantine] = []
        for line_number, event in iter_jsonl(cast):
            where = f"{CAST} line {line_number}"
            if header is None:
                if not isinstance(event, dict) or event.get("version") != 2:
                    raise FormatError(
                        cast, f"line {line_number}", "first line must be an asciinema v2 header"
                    )
                header = event
                continue
            if isinstance(event, FormatError):
                problems.append(Quarantine(str(path), f"{CAST} {event.position}", event.reason))
                continue
            if (
                not isinstance(event, list)
                or len(event) < 3
                or not isinstance(event[0], int | float)
                or not isinstance(event[1], str)
                or not isinstance(event[2], str)
            ):
                problems.append(Quarantine(str(path), where, "event must be [time, type, data]"))
                continue
            kind, data = event[1], event[2]
            if kind == "o":
                target = turns[-1] if turns else None
                (target.output if target else before_first).append(data)
                if target:
                    target.since_last_key.append(data)
            elif kind == "i":
                self._key(turns, data)
            else:
                ignored[kind] += 1  # "r" resize, "m" marker
        if header is None:
            raise FormatError(cast, "line 1", "empty recording")
        return header, turns, before_first, ignored, problems

    @staticmethod
    def _key(turns: list[_Turn], data: str) -> None:
        current = turns[-1] if turns else None
        if current is not None:
            echoed = "".join(current.since_last_key)
            last_key = plain_text(current.keys[-1]).strip()
            typing = not current.ended and plain_text(echoed).strip() == last_key
            if not echoed or typing:
                current.keys.append(data)
                current.since_last_key.clear()
                return
        turns.append(_Turn())
        turns[-1].keys.append(data)

    @staticmethod
    def _turn(turn: _Turn, height: int) -> Turn:
        action = render_keys("".join(turn.keys))
        return Turn(
            action=action,
            observation=render_output("".join(turn.output), height),
            action_kind="shell" if action.endswith("\n") else "key",
            observation_format="terminal_screen",
        )

    @staticmethod
    def _metadata(
        path: Path,
        results: dict[str, Any],
        header: dict[str, Any],
        initial: str,
        ignored: Counter[str],
    ) -> dict[str, Any]:
        keep = (
            "id",
            "trial_name",
            "task_id",
            "is_resolved",
            "failure_mode",
            "parser_results",
            "total_input_tokens",
            "total_output_tokens",
            "trial_started_at",
            "trial_ended_at",
            "agent_started_at",
            "agent_ended_at",
            "test_started_at",
            "test_ended_at",
        )
        metadata: dict[str, Any] = {
            key: results[key] for key in keep if results.get(key) is not None
        }
        metadata["cast"] = {
            key: header[key] for key in ("width", "height", "timestamp") if key in header
        }
        if initial:
            metadata["initial_screen"] = initial
        if ignored:
            metadata["ignored_events"] = dict(ignored)
        commands = path / "commands.txt"
        if commands.is_file():
            with commands.open("rb") as handle:
                metadata["n_harness_commands"] = sum(1 for line in handle if line.strip())
        if (path / "panes" / "post-agent.txt").is_file():
            metadata["final_pane"] = "panes/post-agent.txt"
        return metadata
