"""Scale generator, SWE domain: SWE-agent runs written as `.traj` files.

`trajectory[]` holds one step per turn (action = the command line, observation = its output,
thought/response, execution_time, state) and `history[]` the chat log (system prompt, the issue
wrapped in SWE-agent's "ISSUE: ... INSTRUCTIONS:" template, then assistant/tool pairs), like
the SWE-agent test fixtures. The run ends with `submit`, whose observation is the diff. The
reader (sources/readers/sweagent.py) yields every trajectory step as a turn and cuts the task out of
the template.
"""

from __future__ import annotations

import json
import random

from sources.factory import scale_text as tx
from sources.factory.scale_core import GenTask, GenTurn, near_repeat

DOMAIN = "swe"
SUFFIX = ".traj"
MEAN_TURNS = 28.0
WEIGHTS = {"informative": 0.58, "echo": 0.07, "unchanged": 0.08, "boilerplate": 0.09,
           "error": 0.12, "empty": 0.06}
PREFIX: tuple[str, ...] = ()
LAST: str | None = "informative"  # `submit` and the diff

SYSTEM = (
    "SETTING: You are an autonomous programmer, and you're working directly in the command "
    "line with a special interface.\n\nThe special interface consists of a file editor that "
    "shows you 100 lines of a file at a time.\nIn addition to typical bash commands, you can "
    "also use the following commands to help you navigate and edit files: open, goto, "
    "scroll_up, scroll_down, create, find_file, search_dir, search_file, edit, submit.\n\n"
    "RESPONSE FORMAT:\nYour shell prompt is formatted as follows:\n(Open file: <path>) <cwd> $"
)
INSTRUCTIONS = (
    "INSTRUCTIONS:\nNow, you're going to solve this issue on your own. Your terminal session "
    "has started and you're in the repository's root directory. You can use any bash commands "
    "or the special interface to help you. Edit all the files you need to and run any checks "
    "or tests that you want.\nRemember, YOU CAN ONLY ENTER ONE COMMAND AT A TIME. When you're "
    "satisfied with all of the changes you've made, you can submit your changes to the code "
    "base by simply running the submit command."
)
BOILERPLATE = (
    "Your command ran successfully and did not produce any output.",
    "File updated. Please review the changes and make sure they are correct (correct "
    "indentation, no duplicate lines, etc). Edit the file again if necessary.",
    "Requirement already satisfied: pytest in /usr/local/lib/python3.11/site-packages (8.3.2)\n"
    "Requirement already satisfied: iniconfig in /usr/local/lib/python3.11/site-packages "
    "(from pytest) (2.0.0)\nRequirement already satisfied: packaging in "
    "/usr/local/lib/python3.11/site-packages (from pytest) (24.1)\nRequirement already "
    "satisfied: pluggy<2,>=1.5 in /usr/local/lib/python3.11/site-packages (from pytest) (1.5.0)",
    "On branch main\nnothing to commit, working tree clean",
)
BOILERPLATE_ACTIONS = ("rm -f reproduce.py", "edit", "pip install pytest", "git status")
ISSUE_KINDS = (
    "`{f}()` raises {e} when {w} is empty",
    "{c}.{f} returns the wrong {w} for negative values",
    "Regression: {f} ignores the `{w}` option since the last release",
    "{c} loses {w} entries after a round trip through to_dict()",
    "Wrong error message from {f} when {w} is missing",
)


def make_task(rng: random.Random) -> GenTask:
    f, c, w = tx.ident(rng), tx.camel(rng), rng.choice(tx.WORDS)
    e = rng.choice(("KeyError", "TypeError", "IndexError", "AttributeError"))
    title = rng.choice(ISSUE_KINDS).format(f=f, c=c, w=w, e=e)
    code = "\n".join(line.strip() for line in tx.code_window(rng, tx.ri(rng, 2, 5)))
    body = (f"{title}\n{tx.paragraph(rng, tx.ri(rng, 1, 3))}\n\n```python\n{code}\n```\n\n"
            f"{tx.sentence(rng)}")
    repo = f"{rng.choice(tx.WORDS)}-{rng.choice(tx.TECH)}"
    return GenTask(body, {"repo": f"/{repo}", "file": None, "model": rng.choice(
        ("gpt-4o", "claude-3-5-sonnet-20241022", "gpt-4.1", "deepseek-v3"))})


def _open(rng: random.Random, repo: str) -> tuple[str, str]:
    path = f"{repo}/{tx.relpath(rng)}"
    total = tx.ri(rng, 120, 2400)
    start = tx.ri(rng, 1, total - 99)
    lines = tx.code_window(rng, 100)
    numbered = "\n".join(f"{start + k}:{line}" for k, line in enumerate(lines))
    above = f"({start - 1} more lines above)\n" if start > 1 else ""
    below = f"\n({total - start - 99} more lines below)" if total - start > 99 else ""
    action = f"open {path} {start + 50}" if rng.random() < 0.5 else f"goto {start + 50}"
    return action, f"[File: {path} ({total} lines total)]\n{above}{numbered}{below}"


def _search(rng: random.Random, repo: str) -> tuple[str, str]:
    term = tx.ident(rng)
    hits = [(f"{repo}/{tx.relpath(rng)}", tx.ri(rng, 1, 9)) for _ in range(tx.ri(rng, 1, 12))]
    body = "\n".join(f"{p} ({k} matches)" for p, k in hits)
    total = sum(k for _, k in hits)
    return (f"search_dir {term}", f"Found {total} matches for \"{term}\" in {repo}:\n{body}\n"
            f"End of matches for \"{term}\" in {repo}")


def _pytest(rng: random.Random, repo: str) -> tuple[str, str]:
    n_pass, n_fail = tx.ri(rng, 3, 140), tx.ri(rng, 0, 4)
    files = [f"tests/test_{tx.ident(rng)}.py" for _ in range(tx.ri(rng, 1, 6))]
    progress = "\n".join(f"{f} {'.' * tx.ri(rng, 1, 30)}{'F' * tx.ri(rng, 0, 2)}" for f in files)
    fails = "\n".join(
        f"FAILED {rng.choice(files)}::test_{tx.ident(rng)} - AssertionError: "
        f"assert {tx.ri(rng, 0, 99)} == {tx.ri(rng, 100, 999)}" for _ in range(n_fail))
    summary = f"{n_fail} failed, {n_pass} passed" if n_fail else f"{n_pass} passed"
    return ("python -m pytest -q tests/", f"{progress}\n{fails}\n{summary} in "
            f"{rng.uniform(0.2, 30):.2f}s".replace("\n\n", "\n"))


def _ls(rng: random.Random, repo: str) -> tuple[str, str]:
    return "ls -F", "\n".join(sorted({tx.filename(rng) if rng.random() < 0.7 else
                                      rng.choice(tx.DIRS) + "/" for _ in range(tx.ri(rng, 4, 20))}))


def _run(rng: random.Random, repo: str) -> tuple[str, str]:
    lines = [f"{tx.ident(rng)} = {rng.choice((str(tx.ri(rng, -99, 999)), repr(tx.words(rng, 2))))}"
             for _ in range(tx.ri(rng, 1, 8))]
    return "python reproduce.py", "\n".join(lines)


INFORMATIVE = (_open, _open, _open, _search, _pytest, _ls, _run)


def _diff(rng: random.Random, repo: str) -> str:
    path = tx.relpath(rng)
    old = tx.code_window(rng, tx.ri(rng, 4, 12))
    start = tx.ri(rng, 1, 500)
    middle = len(old) // 2
    edited = [f"+{line}  # fixed" if k == middle else f" {line}" for k, line in enumerate(old)]
    return (f"\ndiff --git a/{path} b/{path}\nindex {tx.hexid(rng, 7)}..{tx.hexid(rng, 7)} 100644\n"
            f"--- a/{path}\n+++ b/{path}\n@@ -{start},{len(old)} +{start},{len(old) + 1} @@\n"
            + "\n".join(edited) + "\n")


def _error(rng: random.Random, repo: str) -> tuple[str, str]:
    roll = rng.random()
    if roll < 0.35:
        kind = rng.choice(("AttributeError", "KeyError", "TypeError", "ImportError"))
        frames = "\n".join(f'  File "{repo}/{tx.relpath(rng)}", line {tx.ri(rng, 1, 900)}, in '
                           f"{tx.ident(rng)}\n    {tx.code_window(rng, 1)[0].strip()}"
                           for _ in range(tx.ri(rng, 2, 6)))
        return ("python reproduce.py", f"Traceback (most recent call last):\n{frames}\n{kind}: "
                f"{tx.words(rng, tx.ri(rng, 2, 8))}")
    if roll < 0.55:
        name = tx.filename(rng)
        return f"open {name}", f"File {name} not found"
    if roll < 0.75:
        line = tx.ri(rng, 3000, 9000)
        return f"goto {line}", f"Error: <line> must be less than or equal to {tx.ri(rng, 50, 2900)}"
    if roll < 0.88:
        tool = rng.choice(("rg", "tree", "black", "mypy"))
        return f"{tool} .", f"/bin/bash: line {tx.ri(rng, 100, 999)}: {tool}: command not found"
    return f"python -c 'import {tx.ident(rng)}'", (
        f"Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
        f"ModuleNotFoundError: No module named '{tx.ident(rng)}'")


def make_turn(rng: random.Random, category: str, task: GenTask, prev: GenTurn | None,
              index: int) -> GenTurn:
    repo = task.ctx["repo"]
    if index == task.ctx["n_turns"] - 1:
        return GenTurn("submit", _diff(rng, repo), category)
    if category == "unchanged" and prev is not None:
        obs = prev.observation if rng.random() < 0.7 else near_repeat(
            rng, prev.observation, f"{rng.uniform(0.1, 9):.2f}s")
        return GenTurn(prev.action, obs, category)
    if category == "echo":
        text = tx.words(rng, tx.ri(rng, 3, 12))
        roll = rng.random()
        if roll < 0.5:
            return GenTurn(f"echo \"{text}\" >> notes.txt && tail -n 1 notes.txt", text, category)
        if roll < 0.8:
            return GenTurn(f"python -c \"print('{text}')\"", text, category)
        old, new = tx.ident(rng), tx.ident(rng)
        return GenTurn(f"edit '{old}' '{new}'",
                       f"Replaced 1 occurrences of '{old}' with '{new}'.", category)
    if category == "boilerplate":
        k = int(rng.random() * len(BOILERPLATE))
        action = BOILERPLATE_ACTIONS[k]
        if action == "edit":
            action = f"edit '{tx.ident(rng)}' '{tx.ident(rng)}'"
        return GenTurn(action, BOILERPLATE[k], category)
    if category == "error":
        action, obs = _error(rng, repo)
        return GenTurn(action, obs, category)
    if category == "empty":
        return GenTurn(rng.choice(("python reproduce.py", "touch reproduce.py", "git stash")),
                       rng.choice(("", "", "\n")), category)
    action, obs = rng.choice(INFORMATIVE)(rng, repo)
    return GenTurn(action, obs, "informative")


def render(rng: random.Random, task: GenTask, turns: list[GenTurn]) -> bytes:
    repo = task.ctx["repo"]
    issue = (f"We're currently solving the following issue within our repository. Here's the "
             f"issue text:\nISSUE:\n{task.text}\n\n{INSTRUCTIONS}\n\n(Open file: n/a)\n"
             f"(Current directory: {repo})\nbash-$")
    history: list[dict] = [
        {"role": "system", "content": SYSTEM, "agent": "main", "message_type": "system_prompt"},
        {"role": "user", "content": issue, "agent": "main", "message_type": "observation"},
    ]
    steps = []
    open_file = "n/a"
    for turn in turns:
        if turn.action.startswith("open "):
            open_file = turn.action.split()[1]
        thought = tx.paragraph(rng, tx.ri(rng, 1, 3))
        steps.append({"action": turn.action, "observation": turn.observation,
                      "response": f"{thought}\n\n```\n{turn.action}\n```", "thought": thought,
                      "execution_time": round(rng.uniform(0.05, 12.0), 6),
                      "state": {"open_file": open_file, "working_dir": repo}})
        history.append({"role": "assistant", "content": thought, "thought": thought,
                        "action": turn.action, "agent": "main", "message_type": "action"})
        history.append({"role": "user", "content": f"{turn.observation}\n(Open file: {open_file})"
                        f"\n(Current directory: {repo})\nbash-$", "agent": "main",
                        "message_type": "observation"})
    calls = len(turns)
    doc = {
        "environment": "main",
        "trajectory": steps,
        "history": history,
        "info": {"submission": turns[-1].observation, "exit_status": "submitted",
                 "model_stats": {"instance_cost": round(calls * rng.uniform(0.002, 0.03), 6),
                                 "tokens_sent": calls * tx.ri(rng, 1500, 9000),
                                 "tokens_received": calls * tx.ri(rng, 40, 300),
                                 "api_calls": calls}},
        "replay_config": {"agent": {"model": {"name": task.ctx["model"]}},
                          "problem_statement": {"type": "text",
                                                "id": f"{repo.strip('/')}-{tx.hexid(rng, 6)}"}},
    }
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")
