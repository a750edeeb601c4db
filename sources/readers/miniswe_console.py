"""mini-swe-agent's console log, as a terminal recording shows it, turned back into its messages.

When terminal-bench runs mini-swe-agent as an installed agent, the agent's steps exist only as
what its console printed inside the recording (rendered to text by `terminal_screen`):

    System:
    You are a helpful assistant that can interact with a computer. ...

    User:
    Please solve this issue: ...
    ────────────────────────────────────────
    mini-swe-agent (step 1, $0.00):
    THOUGHT: ... ```bash
    ls -la
    ```

    User:
    <returncode>0</returncode>
    <output>
    ...
    </output>
    ────────────────────────────────────────

Every message starts at its role header (`System:`, `User:`, or the agent's `NAME (step N,
$COST):`) and ends at the next header or at the rule the console draws after each answer. What
the agent's own process printed between messages (library warnings, the "Waiting for the LM"
spinner) is not a message, so it is dropped with the text outside messages; after the last
message the command line's closing words ("Saved trajectory to ...") and the shell prompt are
not part of it either. The console wraps lines at its width, so a line longer than the terminal
is split where the console split it (the width is kept in the trajectory's metadata).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEADER = re.compile(r"^(?:(System|User|Assistant)|(\S+) \(step (\d+), \$[0-9.]+\)):$")
_RULE = re.compile(r"^─{20,}$")
_CLOSING = re.compile(r"^Saved trajectory to ")
_PROMPT = re.compile(r"^\S+@\S+:\S*[#$]( .*)?$")
# A record of Python's logging in the agent's own process ("07:00:04 - LiteLLM:ERROR: ..."),
# often followed by its traceback, printed into the console between or inside messages.
_LOG_RECORD = re.compile(r"^\d{2}:\d{2}:\d{2} - [\w.]+:(DEBUG|INFO|WARNING|ERROR|CRITICAL): ")
_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")
ROLES = {"System": "system", "User": "user", "Assistant": "assistant"}


@dataclass
class ConsoleLog:
    """The messages a console printed, and the name it gave the agent."""

    messages: list[dict[str, str]] = field(default_factory=list)
    agent_name: str | None = None
    steps: int = 0
    log_records_dropped: int = 0


def console_messages(text: str) -> ConsoleLog:
    """The system, user and assistant messages in mini-swe-agent's console output."""
    log = ConsoleLog()
    role: str | None = None
    body: list[str] = []

    def close() -> None:
        if role is not None:
            kept, dropped = drop_log_records(body)
            log.log_records_dropped += dropped
            log.messages.append({"role": role, "content": _trim(kept)})

    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            close()
            if header.group(1):
                role = ROLES[header.group(1)]
            else:
                role, log.agent_name = "assistant", header.group(2)
                log.steps += 1
            body = []
        elif _RULE.match(line):
            close()
            role, body = None, []
        elif role is not None:
            body.append(line)
    if role is not None:
        close_at = next((i for i, line in enumerate(body) if _CLOSING.match(line)), len(body))
        body = body[:close_at]
        while body and (not body[-1].strip() or _PROMPT.match(body[-1])):
            body.pop()
        close()
    return log


def drop_log_records(lines: list[str]) -> tuple[list[str], int]:
    """The lines without the agent process's log records (and their tracebacks); lines inside a
    command's `<output>` block are the command's own and are always kept."""
    kept: list[str] = []
    dropped = 0
    inside_output = False
    index = 0
    while index < len(lines):
        line = lines[index]
        if line == "<output>":
            inside_output = True
        if inside_output or not _LOG_RECORD.match(line):
            inside_output = inside_output and not line.endswith("</output>")
            kept.append(line)
            index += 1
            continue
        dropped += 1
        index = _traceback_end(lines, index + 1)
    return kept, dropped


def _traceback_end(lines: list[str], index: int) -> int:
    """The index after the (possibly chained) traceback starting at `index`, if one does."""
    while index < len(lines) and lines[index].startswith("Traceback (most recent call last):"):
        index += 1
        while index < len(lines) and lines[index].startswith(" "):
            index += 1  # frames and source lines
        if index < len(lines):
            index += 1  # the exception line
        rest = lines[index:index + 3]
        if len(rest) == 3 and not rest[0].strip() and rest[1].startswith(_CHAINED):
            index += 3  # blank, "During handling ...", blank: the next traceback follows
    return index


def _trim(lines: list[str]) -> str:
    """The message text without the blank lines the console prints around it."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])
