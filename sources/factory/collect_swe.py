"""SWE collector: a real git repository with a planted bug, fixed by a scripted agent, as `.traj`.

Per trajectory a repository is generated from `swe_templates` (package, tests, pyproject),
committed with git (fixed author and dates, so hashes repeat), and worked on through the
terminal collector's sandboxed bash: the agent lists files, greps, opens files (`cat -n`,
`sed -n`), runs `python -m pytest -q` (really: the failure before the edit, the pass after),
edits the file with a `str_replace_editor` tool (SWE-agent's edit tool, applied here in Python
to the real file) and submits `git diff`, which is the `info.submission`.

Normalised for repeatable files: the sandbox path is shown as /<repo name> (like SWE-agent's
/testbed), pytest's "in 0.05s" timing is stripped, object addresses in reprs ("at 0x7f..")
become "at 0x...", and `execution_time` is not recorded.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from sources.factory.collect_terminal import BashSandbox
from sources.factory.collect_util import (
    FIXED_DATE,
    dump_json,
    fresh_dir,
    minimal_env,
    normalise_path,
    run_indexed,
    strip_pytest_timing,
    trajectory_rng,
    workers_for,
    write_text,
)
from sources.factory.swe_templates import Repo, make_repo

_ADDRESS = re.compile(r"(<[\w.]+ object) at 0x[0-9a-f]+>")
SNIPPET_LINES = 4  # lines of context SWE-agent's editor shows around an edit
SYSTEM_PROMPT = (
    "SETTING: You are an autonomous programmer, and you're working directly in the command line "
    "with a special interface.\n\nYou can use bash commands and the str_replace_editor tool to "
    "view and edit files. Run the tests with `python -m pytest -q`. When you are done, run "
    "`submit`; your changes (git diff) are the submission."
)
GIT_DATE = f"{FIXED_DATE}T10:00:00+00:00"


def init_repo(path: Path, repo: Repo) -> None:
    """Write the template and commit it (fixed identity and dates: the same commit every run)."""
    for rel in sorted(repo.files):
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(repo.files[rel], encoding="utf-8")
    env = minimal_env(path.parent) | {
        "GIT_AUTHOR_NAME": "worldtrace",
        "GIT_AUTHOR_EMAIL": "factory@worldtrace.invalid",
        "GIT_COMMITTER_NAME": "worldtrace",
        "GIT_COMMITTER_EMAIL": "factory@worldtrace.invalid",
        "GIT_AUTHOR_DATE": GIT_DATE,
        "GIT_COMMITTER_DATE": GIT_DATE,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["commit", "-q", "-m", "Initial commit"],
    ):
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)


def str_replace(path: Path, shown: str, old: str, new: str) -> tuple[str, bool]:
    """SWE-agent's `str_replace_editor str_replace`, applied to the real file: (output, ok)."""
    text = path.read_text(encoding="utf-8")
    count = text.count(old)
    if count == 0:
        return (
            f"No replacement was performed, old_str `{old}` did not appear verbatim in {shown}.",
            False,
        )
    if count > 1:
        return (
            f"No replacement was performed. Multiple occurrences of old_str `{old}`. "
            "Please ensure it is unique"
        ), False
    start_line = text[: text.index(old)].count("\n")
    text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    lines = text.split("\n")
    first = max(0, start_line - SNIPPET_LINES)
    last = min(len(lines), start_line + new.count("\n") + SNIPPET_LINES + 1)
    snippet = "\n".join(f"{number + 1:6}\t{lines[number]}" for number in range(first, last))
    return (
        f"The file {shown} has been edited. Here's the result of running `cat -n` on a snippet "
        f"of {shown}:\n{snippet}\nReview the changes and make sure they are as expected. Edit "
        "the file again if necessary."
    ), True


class SweEpisode:
    """The scripted agent's session: each step is (thought, action, tool call, observation)."""

    def __init__(self, shell: BashSandbox, repo_dir: Path, shown_root: str) -> None:
        self.shell = shell
        self.repo_dir = repo_dir
        self.shown_root = shown_root
        self.steps: list[dict[str, Any]] = []
        self.open_file = "n/a"

    def _record(self, thought: str, action: str, call: dict[str, Any], output: str) -> str:
        output = strip_pytest_timing(normalise_path(output, self.repo_dir, self.shown_root))
        output = _ADDRESS.sub(r"\1 at 0x...>", output)  # object reprs carry per-process addresses
        self.steps.append(
            {
                "thought": thought,
                "action": action,
                "call": call,
                "observation": output,
                "state": {"open_file": self.open_file, "working_dir": self.shown_root},
            }
        )
        return output

    def bash(self, command: str, thought: str) -> tuple[str, int]:
        result = self.shell.run(command)
        output = result.output.removesuffix("\n")
        return self._record(
            thought, command, {"name": "bash", "arguments": {"command": command}}, output
        ), result.exit_code

    def open(self, rel: str, thought: str) -> str:
        self.open_file = f"{self.shown_root}/{rel}"
        return self.bash(f"cat -n {rel}", thought)[0]

    def edit(self, rel: str, old: str, new: str, thought: str) -> bool:
        shown = f"{self.shown_root}/{rel}"
        self.open_file = shown
        output, ok = str_replace(self.repo_dir / rel, shown, old, new)
        action = (
            f"str_replace_editor str_replace {shown} --old_str {shlex.quote(old)} "
            f"--new_str {shlex.quote(new)}"
        )
        call = {
            "name": "str_replace_editor",
            "arguments": {"command": "str_replace", "path": shown, "old_str": old, "new_str": new},
        }
        self._record(thought, action, call, output)
        return ok


def run_policy(episode: SweEpisode, repo: Repo, rng: Any) -> None:
    """The scripted agent: explore, reproduce, edit (maybe twice), test, review, submit."""
    bug, pkg = repo.bug, repo.package
    module = f"{pkg}/{bug.module}"
    test_file = f"tests/test_{bug.module.removesuffix('.py')}.py"
    episode.bash(
        "ls -a" if rng.random() < 0.3 else "ls", "Let me look at the repository layout first."
    )
    if rng.random() < 0.5:
        episode.bash("cat README.md", "The README may say how to run things.")
    episode.bash(f"ls {pkg} tests", "List the package and the tests.")
    if rng.random() < 0.3:  # a search that finds nothing: wrong guess at the name
        episode.bash(f'grep -rn "{bug.search}_" --include=*.py .', "Search for the function.")
    episode.bash(f'grep -rn "{bug.search}" --include=*.py .', "Find where it is defined.")
    episode.open(module, "Open the module that defines it.")
    if rng.random() < 0.6:
        episode.bash(f"sed -n '1,20p' {test_file}", "Look at the tests for it.")
    if rng.random() < 0.25:  # a wrong path for the test file first
        episode.bash(f"python -m pytest -q tests/test_{pkg}.py", "Run the tests for this module.")
    out, code = episode.bash("python -m pytest -q", "Run the test suite to reproduce the failure.")
    if rng.random() < 0.35:  # an edit whose old text does not match (indentation slip)
        episode.edit(
            module, bug.old.lstrip(" ").replace(" ", "  ", 1), bug.new, "Fix the faulty line."
        )
    episode.edit(module, bug.old, bug.new, "Fix the faulty line (matching the file's indentation).")
    if rng.random() < 0.3:
        episode.open(module, "Re-read the edited function.")
    episode.bash("python -m pytest -q", "Run the tests again.")
    if rng.random() < 0.3:  # re-running unchanged code: the same output again
        episode.bash("python -m pytest -q", "Run them once more to be sure the pass is stable.")
    episode.bash("git status --short", "Check which files changed.")
    diff, _ = episode.bash("git diff", "Review the change before submitting.")
    episode.steps.append(
        {
            "thought": "The tests pass; submit the change.",
            "action": "submit",
            "call": {"name": "submit", "arguments": {}},
            "observation": diff,
            "state": {"open_file": episode.open_file, "working_dir": episode.shown_root},
        }
    )


def to_traj(repo: Repo, steps: list[dict[str, Any]], seed: int, index: int) -> str:
    """Serialise as SWE-agent's `.traj`: trajectory, history, info."""
    shown_root = f"/{repo.name}"
    issue = (
        f"We're currently solving the following issue within our repository. Here's the issue "
        f"text:\nISSUE:\n{repo.bug.issue}\n\nINSTRUCTIONS:\nSolve this issue on your own. Your "
        f"terminal session has started and you're in the repository's root directory "
        f"({shown_root})."
    )
    history: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": SYSTEM_PROMPT,
            "agent": "main",
            "message_type": "system_prompt",
        },
        {"role": "user", "content": issue, "agent": "main", "message_type": "observation"},
    ]
    trajectory = []
    for number, step in enumerate(steps, start=1):
        call_id = f"call_{seed}_{index}_{number}"
        history.append(
            {
                "role": "assistant",
                "content": step["thought"],
                "thought": step["thought"],
                "action": step["action"],
                "agent": "main",
                "message_type": "action",
                "tool_calls": [
                    {
                        "function": {
                            "arguments": json.dumps(step["call"]["arguments"]),
                            "name": step["call"]["name"],
                        },
                        "id": call_id,
                        "type": "function",
                    }
                ],
            }
        )
        state = step["state"]
        history.append(
            {
                "role": "tool",
                "agent": "main",
                "tool_call_ids": [call_id],
                "message_type": "observation",
                "content": (
                    f"{step['observation']}\n(Open file: {state['open_file']})\n"
                    f"(Current directory: {state['working_dir']})\nbash-$"
                ),
            }
        )
        trajectory.append(
            {
                "action": step["action"],
                "observation": step["observation"],
                "response": step["thought"],
                "thought": step["thought"],
                "state": state,
            }
        )
    info = {
        "submission": steps[-1]["observation"],
        "exit_status": "submitted",
        "model_stats": {
            "instance_cost": 0.0,
            "tokens_sent": 0,
            "tokens_received": 0,
            "api_calls": len(steps),
        },
    }
    document = {
        "environment": "worldtrace-local",
        "trajectory": trajectory,
        "history": history,
        "info": info,
        "replay_config": {
            "agent": {"name": "worldtrace-scripted-swe"},
            "env": {"repo": {"path": shown_root, "base_commit": "HEAD"}},
            "problem_statement": {"id": f"{repo.name}-{repo.bug_name}", "seed": seed},
        },
    }
    return dump_json(document)


def collect_one(index: int, seed: int, out_dir: Path, work_dir: Path) -> int:
    """Generate one repository, let the scripted agent fix it, write the `.traj`; returns turns."""
    rng = trajectory_rng(seed, "swe", index)
    repo = make_repo(rng, index)
    sandbox = fresh_dir(work_dir / f"swe-{index:05d}")
    repo_dir = sandbox / repo.name
    repo_dir.mkdir()
    init_repo(repo_dir, repo)
    env = {
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_PAGER": "cat",
        "PAGER": "cat",
    }
    bin_dir = sandbox / ".bin"  # `python` -> this interpreter (a wrapper keeps a venv working)
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    (bin_dir / "python").chmod(0o755)
    with BashSandbox(
        sandbox, cwd=repo_dir, extra_path=(str(bin_dir),), extra_env=env, timeout=60.0
    ) as shell:
        episode = SweEpisode(shell, repo_dir, f"/{repo.name}")
        run_policy(episode, repo, rng)
    write_text(
        out_dir / f"swe-collected-{index:05d}.traj", to_traj(repo, episode.steps, seed, index)
    )
    return len(episode.steps)


def collect(out_dir: Path, n: int, seed: int, work_dir: Path) -> list[int]:
    """Collect `n` SWE trajectories into `out_dir`; returns turns per trajectory."""
    return run_indexed(lambda i: collect_one(i, seed, out_dir, work_dir), range(n), workers_for(n))
