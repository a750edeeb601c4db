"""Terminal collector: a real bash in a sandbox folder, driven by a seeded scripted agent, as ATIF.

Each trajectory gets its own folder (HOME and working directory), a fresh interactive
`bash --noprofile --norc --noediting -i` on pipes, a minimal PATH and a C locale. Every command
really runs; the recorded observation is what bash printed (stdout and stderr merged, as a
terminal shows them), framed like Terminus's screen: the prompt bash printed, the command, its
output and the next prompt. Exit codes come from `$?` and go to the step's `extra`.

Isolation: a command is checked before it is sent (`check_command`): every word that names a
path is resolved against the shell's real working directory and must stay in the sandbox (a few
system paths such as /dev/null and shebang interpreters excepted); command substitution and
variables inside paths are refused. After each command the shell's $PWD is checked and reset
into the sandbox if it left. This guards our own scripted policy; it is not a security boundary
for adversarial code (use a container for that).

Determinism: file contents, mtimes and listings do not appear (the policy uses `stat -c %A`,
never `ls -l`, and sorts `find` output); the sandbox's real path is shown as /home/agent; the
job-control warning's process id is shown as -1.
"""

from __future__ import annotations

import os
import random
import re
import select
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from sources.factory.collect_util import (
    dump_json,
    fresh_dir,
    minimal_env,
    normalise_path,
    run_indexed,
    trajectory_rng,
    workers_for,
    write_text,
)
from sources.factory.terminal_tasks import TASKS, TerminalTask, make_task

SHOWN_HOME = "/home/agent"
PROMPT_MARK = "\x1f"  # brackets the prompt bash prints (PS1), so prompt and output can be split
DONE = re.compile(r"\x1e(\d+) ([^\x1e]*)\x1e")
# Paths outside the sandbox a command may name: sinks and shebang interpreters, nothing to read.
ALLOWED_OUTSIDE = frozenset({"/dev/null", "/bin/sh", "/bin/bash", "/usr/bin/env"})
_WORD_SPLIT = re.compile(r"""[\s<>|;&()=:'"]+""")


def check_command(command: str, cwd: Path, root: Path) -> str | None:
    """Why `command` may not run in the sandbox at `root` (None when it may).

    Every word that could name a path (it has a '/', is '..', or starts with '~') is resolved
    against the real working directory, following symlinks, and must stay inside the sandbox.
    """
    if "`" in command or "$(" in command or "<(" in command or ">(" in command:
        return "command substitution is not allowed in the sandbox"
    try:
        tokens = shlex.split(command, posix=True)
    except ValueError:
        tokens = command.split()
    root_real = os.path.realpath(root)
    for token in tokens:
        for word in _WORD_SPLIT.split(token):
            if word.startswith("~"):
                word = str(root) + word[1:]
            word = word.replace("${HOME}", str(root)).replace("$HOME", str(root))
            word = word.replace("${PWD}", str(cwd)).replace("$PWD", str(cwd))
            if "/" not in word and word not in ("..", "."):
                continue
            if "$" in word:
                return f"variable in a path is not allowed in the sandbox: {word}"
            resolved = os.path.realpath(word if word.startswith("/") else cwd / word)
            if resolved in ALLOWED_OUTSIDE:
                continue
            if resolved != root_real and not resolved.startswith(root_real + os.sep):
                return f"path escapes the sandbox: {word}"
    return None


@dataclass
class CommandResult:
    """One command as the terminal showed it."""

    command: str
    output: str  # stdout + stderr as printed
    exit_code: int
    prompt: str  # the prompt shown before the command
    next_prompt: str  # the prompt shown after it
    refused: str | None = None

    def screen(self) -> str:
        """The observation, framed like Terminus's "New Terminal Output" screen."""
        return (
            f"New Terminal Output:\n\n{self.prompt}{self.command}\n{self.output}{self.next_prompt}"
        )


class BashSandbox:
    """A persistent interactive bash whose HOME and working directory are `root`."""

    def __init__(
        self,
        root: Path,
        timeout: float = 15.0,
        cwd: Path | None = None,
        extra_path: tuple[str, ...] = (),
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.timeout = timeout
        self.cwd = Path(os.path.realpath(cwd)) if cwd else self.root
        env = minimal_env(self.root, extra_path)
        env.update(extra_env or {})
        env.update(PS1=f"{PROMPT_MARK}agent@sandbox:\\w$ {PROMPT_MARK}", PS2="", HISTFILE="")
        self._proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc", "--noediting", "-i", "+H"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=self.cwd,
            env=env,
            start_new_session=True,
        )
        self._buffer = b""
        banner = self._read_until(re.compile(rb"\x1f([^\x1f]*)\x1f"))
        text = banner.decode("utf-8", errors="replace")
        self.banner = re.sub(
            r"process group \(\d+\)", "process group (-1)", text.split(PROMPT_MARK)[0]
        )
        self.prompt = text.split(PROMPT_MARK)[1]

    def _read_until(self, pattern: re.Pattern[bytes]) -> bytes:
        """Read the shell's output until `pattern` has been seen; return all up to its end."""
        deadline = time.monotonic() + self.timeout
        fd = self._proc.stdout.fileno()  # type: ignore[union-attr]
        while not (match := pattern.search(self._buffer)):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.close()
                raise TimeoutError(f"bash did not answer within {self.timeout}s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError("bash exited unexpectedly")
            self._buffer += chunk
        taken, self._buffer = self._buffer[: match.end()], self._buffer[match.end() :]
        return taken

    def run(self, command: str) -> CommandResult:
        """Run one command line (stdin from /dev/null) unless the sandbox guard refuses it."""
        prompt = self.prompt
        refused = check_command(command, self.cwd, self.root)
        if refused:
            output = f"sandbox: refused: {refused}\n"
            return CommandResult(command, output, 126, prompt, prompt, refused)
        line = (
            f'eval -- {shlex.quote(command)} </dev/null; printf \'\\036%d %s\\036\' "$?" "$PWD"\n'
        )
        self._proc.stdin.write(line.encode())  # type: ignore[union-attr]
        self._proc.stdin.flush()  # type: ignore[union-attr]
        raw = self._read_until(re.compile(rb"\x1e\d+ [^\x1e]*\x1e[^\x1f]*\x1f[^\x1f]*\x1f"))
        text = raw.decode("utf-8", errors="replace")
        done = DONE.search(text)
        assert done is not None
        output, rest = text[: done.start()], text[done.end() :]
        self.prompt = rest.split(PROMPT_MARK)[1]
        pwd = Path(done.group(2))
        if pwd != self.root and self.root not in pwd.parents:  # left the sandbox: bring it back
            self._silent(f"cd {shlex.quote(str(self.root))}")
            pwd = self.root
            output += "sandbox: working directory reset to home\n"
        self.cwd = pwd
        return CommandResult(command, output, int(done.group(1)), prompt, self.prompt)

    def _silent(self, command: str) -> None:
        """Run a housekeeping command that is not part of the recording."""
        self._proc.stdin.write(f'{command}; printf \'\\036%d %s\\036\' "$?" "$PWD"\n'.encode())  # type: ignore[union-attr]
        self._proc.stdin.flush()  # type: ignore[union-attr]
        raw = self._read_until(re.compile(rb"\x1e\d+ [^\x1e]*\x1e[^\x1f]*\x1f[^\x1f]*\x1f"))
        self.prompt = raw.decode("utf-8", errors="replace").split(PROMPT_MARK)[-2]

    def close(self) -> None:
        """End the shell (and anything it started)."""
        if self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream:
                stream.close()

    def __enter__(self) -> BashSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


TYPOS = {
    "ls": "sl",
    "grep": "gerp",
    "cat": "cta",
    "sort": "srot",
    "head": "haed",
    "find": "fnid",
    "chmod": "chmdo",
    "sed": "sde",
    "wc": "cw",
    "mkdir": "mkdri",
    "echo": "ecoh",
    "tail": "tial",
    "cut": "ctu",
    "stat": "stta",
    "cp": "cpy",
    "diff": "dfif",
    "bash": "bsah",
    "tr": "rt",
}


@dataclass
class ScriptedAgent:
    """A seeded policy: runs the task's commands, and sometimes errs the way people do."""

    shell: BashSandbox
    rng: random.Random
    steps: list[tuple[str, CommandResult]] = field(default_factory=list)
    typo_rate: float = 0.12
    path_slip_rate: float = 0.25
    recheck_rate: float = 0.15

    def _exec(self, command: str, plan: str) -> CommandResult:
        result = self.shell.run(command)
        self.steps.append((plan, result))
        return result

    def do(self, command: str, plan: str, path: str | None = None) -> CommandResult:
        """Run `command`; maybe first with a typo'd name or a slipped path, then retry."""
        rng = self.rng
        name = command.split()[0]
        if name in TYPOS and rng.random() < self.typo_rate:
            typo = TYPOS[name] + command[len(name) :]
            tried = self._exec(typo, plan)
            if tried.exit_code != 0 or "command not found" in tried.output:
                plan = f"`{TYPOS[name]}` was a typo ({name}); running it again correctly."
        elif path and len(path) > 4 and rng.random() < self.path_slip_rate:
            cut = rng.randrange(1, len(path) - 1)
            slipped = path[:cut] + path[cut + 1 :]
            if self._exec(command.replace(path, slipped), plan).exit_code != 0:
                self._exec("ls", f"There is no {slipped}; list the directory to see the real name.")
                plan = f"The file is {path}; retry with the right name."
        result = self._exec(command, plan)
        if rng.random() < self.recheck_rate:
            self._exec("ls", "Look at the directory again before going on.")
        return result

    def look(self, command: str, plan: str) -> CommandResult:
        """An exploratory command, never mistyped."""
        return self._exec(command, plan)


SYSTEM_PREAMBLE = (
    "You are an AI assistant tasked with solving command-line tasks in a Linux environment. "
    "You will be given a task description and the output from previously executed commands. "
    'Answer with JSON holding "analysis", "plan" and "commands" (keystrokes and duration); '
    'set "task_complete" when done.'
)


def collect_one(index: int, seed: int, out_dir: Path, work_dir: Path) -> int:
    """Run one terminal task in its own sandbox and write it as ATIF; returns the turn count."""
    rng = trajectory_rng(seed, "terminal", index)
    task = make_task(seed, index)
    sandbox = fresh_dir(work_dir / f"terminal-{index:05d}")
    task.materialise(sandbox)
    with BashSandbox(sandbox) as shell:
        agent = ScriptedAgent(shell, rng)
        initial_screen = shell.banner + shell.prompt
        if rng.random() < 0.4:
            agent.look("pwd", "Where am I?")
        if rng.random() < 0.3:
            agent.look("ls -a", "List everything, hidden files included.")
        TASKS[task.kind].run(agent, task)
        verified = TASKS[task.kind].verify(sandbox, task)
    document = to_atif(task, agent.steps, initial_screen, sandbox, index, seed, verified)
    write_text(out_dir / f"terminal-collected-{index:05d}.trajectory.json", document)
    return len(agent.steps)


def to_atif(
    task: TerminalTask,
    steps: list[tuple[str, CommandResult]],
    initial_screen: str,
    sandbox: Path,
    index: int,
    seed: int,
    verified: bool,
) -> str:
    """Serialise one run in the ATIF layout Harbor's Terminus-2 writes."""
    user = (
        f"{SYSTEM_PREAMBLE}\n\nTask Description:\n{task.instruction}\n\n\n"
        f"Current terminal state:\nCurrent Terminal Screen:\n{initial_screen}\n"
    )
    out_steps: list[dict[str, object]] = [{"step_id": 1, "source": "user", "message": user}]
    for number, (plan, result) in enumerate(steps, start=1):
        call_id = f"call_{number}_1"
        out_steps.append(
            {
                "step_id": number + 1,
                "source": "agent",
                "model_name": "worldtrace/scripted-terminal",
                "message": f"Analysis: {plan}\nPlan: run `{result.command}`.",
                "tool_calls": [
                    {
                        "tool_call_id": call_id,
                        "function_name": "bash_command",
                        "arguments": {"keystrokes": result.command + "\n", "duration": 0.1},
                    }
                ],
                "observation": {
                    "results": [{"source_call_id": call_id, "content": result.screen()}]
                },
                "extra": {
                    "exit_code": result.exit_code,
                    **({"refused": result.refused} if result.refused else {}),
                },
            }
        )
    out_steps.append(
        {
            "step_id": len(out_steps) + 1,
            "source": "agent",
            "model_name": "worldtrace/scripted-terminal",
            "message": "Analysis: The task is done.\nPlan: No further commands.",
        }
    )
    document = {
        "schema_version": "ATIF-v1.5",
        "session_id": f"terminal-collected-{seed}-{index:05d}",
        "agent": {
            "name": "worldtrace-scripted",
            "version": "1.0",
            "model_name": "worldtrace/scripted-terminal",
            "extra": {"policy": "seeded script with typos, path slips and rechecks"},
        },
        "steps": out_steps,
        "notes": "Collected by worldtrace's terminal collector: real bash, scripted agent.",
        "final_metrics": {"total_steps": len(out_steps)},
        "extra": {
            "task": task.instruction,
            "task_kind": task.kind,
            "verified": verified,
            "seed": seed,
        },
    }
    return normalise_path(dump_json(document), sandbox, SHOWN_HOME)


def collect(out_dir: Path, n: int, seed: int, work_dir: Path) -> list[int]:
    """Collect `n` terminal trajectories into `out_dir`; returns turns per trajectory."""
    return run_indexed(lambda i: collect_one(i, seed, out_dir, work_dir), range(n), workers_for(n))
