"""terminal-bench runs of installed agents: the agent's own steps, read from what it printed.

For an installed agent (mini-swe-agent, OpenHands, ...) the recording's keystrokes are only the
harness's: clear the screen, source the agent's setup and install scripts, type one command that
launches the agent, and C-d at the end. The agent then works in its own subshells, so its
commands never reach the recording as keystrokes; they appear, if at all, in the console output
the launched agent prints. Reading the keystrokes as turns would store harness plumbing as if an
agent had acted, so such a run is either read from the agent's console (a format this module
knows: mini-swe-agent's, see `miniswe_console`) or quarantined with the reason, never stored as
keystroke turns. A launch that failed (`mini: command not found`, a missing interpreter) is such
a quarantine, with the last line the terminal printed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sources.readers.miniswe import extract_task, pair_messages
from sources.readers.miniswe_console import console_messages
from sources.readers.terminal_screen import render_output
from sources.schema import Quarantine, Trajectory

# Keystrokes terminal-bench's harness sends itself (rendered by terminal_screen.render_keys and
# stripped): screen set-up, the installed-agent scripts, the test runner, the closing C-d.
HARNESS_KEYS = re.compile(
    r"^(clear|C-d|exit|asciinema rec\b.*|source /installed-agent/.*|bash /tests/run-tests\.sh.*)$",
    re.DOTALL,
)
INSTALL_KEYS = re.compile(r"^source /installed-agent/install-agent\.sh\b")
_PROMPT = re.compile(r"^\S+@\S+:\S*[#$]( .*)?$")


def installed_agent_run(
    path: Path,
    turns: list[tuple[str, str]],
    install: int,
    task: str,
    outcome: str,
    metadata: dict[str, Any],
    header: dict[str, Any],
) -> Trajectory | Quarantine:
    """The agent's trajectory from its console, or a quarantine saying why there is none.

    `turns` are the recording's keystroke groups as (rendered keys, raw output after them);
    `install` is the index of the install-script keystrokes. The launch is the next keystroke
    group that is not the harness's; what the terminal printed from there until the harness types
    again (typically C-d) is the agent's console. Keystrokes in between that are not the
    harness's are the rest of a long launch command typed in pieces, and their output is console
    output too.
    """
    launch = next(
        (i for i in range(install + 1, len(turns)) if not HARNESS_KEYS.match(turns[i][0])), None
    )
    if launch is None:
        return Quarantine(str(path), "folder", "installed-agent run: the agent was never launched "
                          "(no command after the harness's install script)")
    end = next(
        (i for i in range(launch + 1, len(turns)) if HARNESS_KEYS.match(turns[i][0])), len(turns)
    )
    height = header.get("height") if isinstance(header.get("height"), int) else 40
    console = render_output("".join(output for _, output in turns[launch:end]), height)
    launch_command = turns[launch][0].split("\n", 1)[0]
    log = console_messages(console)
    first_user = next(
        (i for i, message in enumerate(log.messages) if message["role"] == "user"), None
    )
    if log.steps == 0 or first_user is None:
        return Quarantine(
            str(path), "folder",
            f"installed-agent run: the agent's console output has no step this reader can read "
            f"(launch: {launch_command[:120]!r}; last line printed: {_last_line(console)!r})",
        )
    agent_turns, counts = pair_messages(path, "console", log.messages, first_user)
    console_task, _ = extract_task(log.messages[first_user]["content"])
    metadata = dict(metadata)
    metadata.update({key: value for key, value in counts.items() if value})
    metadata.update({
        "installed_agent": log.agent_name,
        "agent_launch": launch_command,
        "agent_steps_printed": log.steps,
        "console_width": header.get("width"),
    })
    if log.log_records_dropped:
        metadata["agent_log_records_dropped"] = log.log_records_dropped
    if end - launch > 1:
        metadata["launch_keystroke_groups"] = end - launch
    system_prompt = next(
        (m["content"] for m in log.messages[:first_user] if m["role"] == "system"), None
    )
    return Trajectory(
        task=task or console_task,
        turns=agent_turns,
        position="folder",
        outcome=outcome,
        system_prompt=system_prompt,
        metadata=metadata,
    )


def _last_line(console: str) -> str:
    """The last thing the terminal printed that is not a shell prompt or the closing `exit`."""
    for line in reversed(console.splitlines()):
        if line.strip() and not _PROMPT.match(line) and line.strip() != "exit":
            return line.strip()[:200]
    return ""
