"""A terminal as a recording shows it: output rendered like a screen, keystrokes as text.

Output is rendered like a screen: ANSI CSI/OSC sequences and bracketed-paste markers are removed,
carriage returns and backspaces overwrite, erase-line / clear-screen sequences erase. In actions,
Enter becomes a newline and other keys take tmux names (C-c, Escape, Up). Used by the
terminal-bench reader for both the agent's keystrokes and what an installed agent printed.
"""

from __future__ import annotations

import re

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


def plain_text(data: str) -> str:
    data = _CSI.sub("", _STRING.sub("", data))
    return "".join(char for char in data if char >= " " and char != "\x7f")
