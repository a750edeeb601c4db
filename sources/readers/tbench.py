"""terminal-bench run folders: one trial's results plus an asciinema recording of the terminal.

    fix-permissions.1-of-1/results.json      {"task_id": "fix-permissions", "instruction": "...",
                                              "is_resolved": true, "failure_mode": "unset", ...}
    fix-permissions.1-of-1/sessions/agent.cast
        {"version": 2, "width": 160, "height": 40, "timestamp": 1755153104, ...}
        [0.788967, "i", "clear\\r"]
        [0.789942, "o", "clear\\r\\n\\u001b[?2004l\\r"]

The recording does not delimit steps, so the reader cuts it at the agent's input events: input
events with no output between them (or with only their own echo, as when typing key by key) form
one action, and everything the terminal printed until the next action is its observation. Output
is rendered like a screen: ANSI CSI/OSC sequences and bracketed-paste markers are removed,
carriage returns and backspaces overwrite, erase-line / clear-screen sequences erase. In actions,
Enter becomes a newline and other keys take tmux names (C-c, Escape, Up). Task and outcome come
from results.json (`is_resolved` true -> success, false -> failure, null -> unknown). A folder
whose results.json is missing (an interrupted or partly copied run) is still a run: the recording
alone gives the turns, the task is empty and the outcome unknown (`results_missing` in metadata).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sources.readers.base import FormatError, Reader, iter_jsonl, load_json
from sources.schema import Quarantine, Trajectory, Turn

CAST = "sessions/agent.cast"
_CSI = re.compile(r"\x1b\[([0-?]*)[ -/]*([@-~])")
_STRING = re.compile(r"\x1b[\]P_^].*?(?:\x07|\x1b\\|\Z)", re.DOTALL)  # OSC, DCS, APC, PM
_OTHER_ESC = re.compile(r"\x1b[()*+][0-~]|\x1b[^\[\]P_^()*+]")
_PASTE = re.compile(r"\x1b\[20[01]~")
_KEYS = {
    "\x1b[A": "Up",
    "\x1b[B": "Down",
    "\x1b[C": "Right",
    "\x1b[D": "Left",
    "\x1bOA": "Up",
    "\x1bOB": "Down",
    "\x1bOC": "Right",
    "\x1bOD": "Left",
    "\x1b[H": "Home",
    "\x1b[F": "End",
    "\x1b[3~": "DC",
    "\x1b[5~": "PPage",
    "\x1b[6~": "NPage",
    "\x1b": "Escape",
    "\x7f": "BSpace",
}
_KEY_RE = re.compile(
    "|".join(re.escape(k) for k in sorted(_KEYS, key=len, reverse=True))
    + r"|[\x00-\x08\x0b\x0c\x0e-\x1f]"
)


class Screen:
    """A minimal terminal: logical lines (no wrapping), a cursor, and the erase sequences."""

    def __init__(self, height: int = 40) -> None:
        self.height = height
        self.lines: list[list[str]] = [[]]
        self.row = self.col = 0

    def feed(self, data: str) -> None:
        i = 0
        while i < len(data):
            char = data[i]
            if char == "\x1b":
                i = self._escape(data, i)
                continue
            if char == "\r":
                self.col = 0
            elif char == "\n":
                self._goto(self.row + 1, 0)
            elif char == "\b":
                self.col = max(0, self.col - 1)
            elif char == "\t":
                self.col = (self.col // 8 + 1) * 8
            elif char >= " " and char != "\x7f":
                self._put(char)
            i += 1

    def text(self) -> str:
        lines = ["".join(line).rstrip() for line in self.lines]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    @property
    def _top(self) -> int:
        return max(0, len(self.lines) - self.height)

    def _goto(self, row: int, col: int) -> None:
        self.row, self.col = max(0, row), max(0, col)
        while len(self.lines) <= self.row:
            self.lines.append([])

    def _put(self, char: str) -> None:
        line = self.lines[self.row]
        if self.col > len(line):
            line.extend(" " * (self.col - len(line)))
        if self.col == len(line):
            line.append(char)
        else:
            line[self.col] = char
        self.col += 1

    def _escape(self, data: str, i: int) -> int:
        """Apply the escape sequence at data[i]; return the index after it."""
        match = _CSI.match(data, i)
        if match:
            self._csi(match.group(1), match.group(2))
            return match.end()
        for pattern in (_STRING, _OTHER_ESC):
            match = pattern.match(data, i)
            if match:
                return match.end()
        return i + 1

    def _csi(self, params: str, final: str) -> None:
        if params.startswith(("?", ">", "<", "=")):
            return  # private modes: bracketed paste, cursor visibility, ...
        numbers = [int(p) if p.isdigit() else 0 for p in params.split(";")] if params else []
        first = numbers[0] if numbers else 0
        count = max(1, first)
        line = self.lines[self.row]
        if final == "K":
            if first == 0:
                del line[self.col :]
            elif first == 1:
                line[: self.col] = " " * min(self.col, len(line))
            else:
                line.clear()
        elif final == "J":
            if first in (0, 2):
                start = self._top if first == 2 else self.row
                if first == 0:
                    del line[self.col :]
                    start += 1
                del self.lines[start:]
                if not self.lines:
                    self.lines.append([])
                self._goto(min(self.row, len(self.lines) - 1), self.col if first == 0 else 0)
            elif first == 3:  # scrollback: everything above the visible screen
                top = self._top
                del self.lines[:top]
                self._goto(self.row - top, self.col)
        elif final in "Hf":
            row = numbers[0] if numbers and numbers[0] else 1
            col = numbers[1] if len(numbers) > 1 and numbers[1] else 1
            self._goto(self._top + row - 1, col - 1)
        elif final == "A":
            self._goto(max(self._top, self.row - count), self.col)
        elif final == "B":
            self._goto(self.row + count, self.col)
        elif final == "C":
            self.col += count
        elif final == "D":
            self.col = max(0, self.col - count)
        elif final == "G":
            self.col = count - 1
        elif final == "d":
            self._goto(self._top + count - 1, self.col)
        elif final == "P":
            del line[self.col : self.col + count]
        elif final == "@":
            line[self.col : self.col] = " " * count
        elif final == "X":
            for position in range(self.col, min(len(line), self.col + count)):
                line[position] = " "


def render_output(data: str, height: int = 40) -> str:
    screen = Screen(height)
    screen.feed(data)
    return screen.text()


def render_keys(data: str) -> str:
    """Keystrokes as text: Enter is a newline, other keys get their tmux names."""
    data = _PASTE.sub("", data).replace("\r\n", "\n").replace("\r", "\n")
    parts: list[str] = []
    last = 0
    for match in _KEY_RE.finditer(data):
        parts.append(data[last : match.start()])
        key = match.group(0)
        name = _KEYS.get(key) or f"C-{chr(ord(key) + 96)}"
        parts.append(name if not parts[-1] or parts[-1].endswith(("\n", " ")) else f" {name}")
        if match.end() < len(data) and data[match.end()] not in "\n ":
            parts.append(" ")
        last = match.end()
    parts.append(data[last:])
    return "".join(parts)


def _plain(data: str) -> str:
    data = _CSI.sub("", _STRING.sub("", data))
    return "".join(char for char in data if char >= " " and char != "\x7f")


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

        header: dict[str, Any] | None = None
        turns: list[_Turn] = []
        before_first: list[str] = []
        ignored: Counter[str] = Counter()
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
                yield Quarantine(str(path), f"{CAST} {event.position}", event.reason)
                continue
            if (
                not isinstance(event, list)
                or len(event) < 3
                or not isinstance(event[0], int | float)
                or not isinstance(event[1], str)
                or not isinstance(event[2], str)
            ):
                yield Quarantine(str(path), where, "event must be [time, type, data]")
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

        height = header.get("height") if isinstance(header.get("height"), int) else 40
        metadata = self._metadata(
            path, results, header, render_output("".join(before_first), height), ignored
        )
        if not has_results:
            metadata["results_missing"] = True
        yield Trajectory(
            task=str(task),
            turns=[self._turn(turn, height) for turn in turns],
            position="folder",
            outcome={True: "success", False: "failure"}.get(results.get("is_resolved"), "unknown"),
            metadata=metadata,
        )

    @staticmethod
    def _key(turns: list[_Turn], data: str) -> None:
        current = turns[-1] if turns else None
        if current is not None:
            echoed = "".join(current.since_last_key)
            typing = (
                not current.ended and _plain(echoed).strip() == _plain(current.keys[-1]).strip()
            )
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
