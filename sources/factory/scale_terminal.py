"""Scale generator, terminal domain: Terminus-style runs written as ATIF `*.trajectory.json`.

One agent step per turn, one `bash_command` tool call (keystrokes) and one observation result
holding the screen ("New Terminal Output:" + prompt, echoed command, output), like the Harbor
golden file. The reader (sources/readers/atif.py) yields keystrokes as the action and the result
content as the observation; the task is the text between "Task Description:" and
"Current terminal state:" of the first user step.
"""

from __future__ import annotations

import json
import random

from sources.factory import scale_text as tx
from sources.factory.scale_core import GenTask, GenTurn, near_repeat

DOMAIN = "terminal"
SUFFIX = ".trajectory.json"
MEAN_TURNS = 27.0
WEIGHTS = {"informative": 0.55, "echo": 0.11, "unchanged": 0.07, "boilerplate": 0.07,
           "error": 0.12, "empty": 0.08}
PREFIX: tuple[str, ...] = ()
LAST: str | None = None

MODELS = ("openai/gpt-4o", "anthropic/claude-sonnet-4", "openai/gpt-4.1-mini",
          "deepseek/deepseek-chat", "qwen/qwen3-coder")
PROMPT_HEAD = (
    "You are an AI assistant tasked with solving command-line tasks in a Linux environment. "
    "You will be given a task description and the output from previously executed commands. "
    "Your goal is to solve the task by providing batches of shell commands.\n\n"
    "Format your response as JSON with the fields \"analysis\", \"plan\" and \"commands\" "
    "(an array of {\"keystrokes\", \"duration\"} objects), and optionally \"task_complete\".\n\n"
)
NEW_OUTPUT = "New Terminal Output:\n\n"

# Outputs that recur verbatim in many runs: (command, output).
BOILERPLATE = (
    ("apt-get update", "Hit:1 http://deb.debian.org/debian bookworm InRelease\nHit:2 "
     "http://deb.debian.org/debian bookworm-updates InRelease\nHit:3 "
     "http://deb.debian.org/debian-security bookworm-security InRelease\nReading package "
     "lists... Done"),
    ("pip install -q requests", "WARNING: Running pip as the 'root' user can result in broken "
     "permissions and conflicting behaviour with the system package manager. It is recommended "
     "to use a virtual environment instead: https://pip.pypa.io/warnings/venv"),
    ("python3 --version", "Python 3.11.9"),
    ("cat /etc/os-release | head -n 4", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
     "NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\""),
    ("git status", "On branch main\nnothing to commit, working tree clean"),
    ("ls --help | head -n 5", "Usage: ls [OPTION]... [FILE]...\nList information about the "
     "FILEs (the current directory by default).\nSort entries alphabetically if none of "
     "-cftuvSUX nor --sort is specified.\n\nMandatory arguments to long options are mandatory "
     "for short options too."),
)

TASKS = (
    "Create a file called {f} in {d}/ containing the line '{w}' and make it executable.",
    "Find every .{e} file under {d}/ that mentions '{w}' and write their paths, sorted, to "
    "{f}.",
    "Count the distinct values of the second column of {d}/{f} and print the top {n}.",
    "Rename all files in {d}/ that end in .{e} so they end in .bak, keeping the originals' "
    "permissions.",
    "Write a script {f} that prints the {n} largest files under {d}/ with their sizes.",
    "The service config in {d}/{f} has a wrong '{w}' entry; fix it and validate the file.",
    "Archive the logs in {d}/ older than {n} days into logs-{w}.tar.gz and delete the "
    "originals.",
    "Extract every line containing '{w}' from {d}/{f}, deduplicate them, and save the result.",
)


def make_task(rng: random.Random) -> GenTask:
    text = rng.choice(TASKS).format(
        f=tx.filename(rng), d=rng.choice(tx.DIRS), w=rng.choice(tx.WORDS),
        e=rng.choice(tx.EXTS), n=tx.ri(rng, 2, 30))
    host = tx.hexid(rng, 12)
    return GenTask(text, {"prompt": f"root@{host}:/app# ", "model": rng.choice(MODELS)})


def _ls(rng: random.Random) -> tuple[str, str]:
    folder = rng.choice(tx.DIRS)
    lines = [f"total {tx.ri(rng, 8, 400)}"]
    for _ in range(tx.ri(rng, 3, 22)):
        kind = "d" if rng.random() < 0.2 else "-"
        perm = rng.choice(("rwxr-xr-x", "rw-r--r--", "rw-------", "rwxrwxr-x"))
        lines.append(
            f"{kind}{perm} 1 root root {tx.ri(rng, 0, 99999):>6} "
            f"{rng.choice(('Jan', 'Mar', 'Jun', 'Sep', 'Nov'))} {tx.ri(rng, 1, 28):>2} "
            f"{tx.clock(rng)} {tx.filename(rng)}")
    return f"ls -la {folder}", "\n".join(lines)


def _cat(rng: random.Random) -> tuple[str, str]:
    name = tx.relpath(rng)
    n = tx.ri(rng, 3, 30)
    body = tx.code_window(rng, n) if name.endswith(".py") else tx.prose_window(rng, n)
    return f"cat {name}", "\n".join(body)


def _grep(rng: random.Random) -> tuple[str, str]:
    word = rng.choice(tx.WORDS)
    code = tx.code_window(rng, tx.ri(rng, 2, 18))
    lines = [f"{tx.relpath(rng)}:{tx.ri(rng, 1, 900)}:{line.strip()}" for line in code]
    return f"grep -rn '{word}' {rng.choice(tx.DIRS)}/", "\n".join(lines)


def _find(rng: random.Random) -> tuple[str, str]:
    ext = rng.choice(tx.EXTS)
    lines = [f"./{tx.relpath(rng)}" for _ in range(tx.ri(rng, 2, 25))]
    return f"find . -name '*.{ext}' -type f", "\n".join(lines)


def _counts(rng: random.Random) -> tuple[str, str]:
    name = tx.relpath(rng)
    lines = [f"{tx.ri(rng, 1, 5000):>7} {w}" for w in rng.sample(tx.WORDS, tx.ri(rng, 3, 15))]
    return f"cut -d, -f2 {name} | sort | uniq -c | sort -rn | head", "\n".join(lines)


def _csv(rng: random.Random) -> tuple[str, str]:
    n = tx.ri(rng, 3, 20)
    cols = rng.sample(tx.WORDS, 4)
    rows = [",".join(cols)] + [
        f"{tx.ri(rng, 1, 99999)},{rng.choice(tx.CITIES)},{tx.date(rng)},{rng.random() * 900:.2f}"
        for _ in range(n)]
    return f"head -n {n + 1} {tx.relpath(rng)}", "\n".join(rows)


def _script(rng: random.Random) -> tuple[str, str]:
    lines = [f"{tx.ident(rng)}: {tx.ri(rng, 0, 10 ** tx.ri(rng, 1, 6))}"
             for _ in range(tx.ri(rng, 2, 12))]
    return f"python3 {rng.choice(('scripts', 'tools', '.'))}/{tx.filename(rng)}", "\n".join(lines)


def _gitlog(rng: random.Random) -> tuple[str, str]:
    lines = [f"{tx.hexid(rng, 7)} {tx.sentence(rng, 3, 9)}" for _ in range(tx.ri(rng, 3, 15))]
    return f"git log --oneline -n {len(lines)}", "\n".join(lines)


INFORMATIVE = (_ls, _ls, _cat, _cat, _grep, _find, _counts, _csv, _script, _gitlog)


def _silent(rng: random.Random) -> str:
    """A command that prints nothing: its screen is just the echoed command line."""
    f, d, w = tx.filename(rng), rng.choice(tx.DIRS), rng.choice(tx.WORDS)
    return rng.choice((
        f"mkdir -p {d}/{w}", f"touch {d}/{f}", f"chmod +x {d}/{f}", f"cd {d}",
        f"echo '{tx.words(rng, tx.ri(rng, 2, 8))}' > {d}/{f}", f"cp {f} {d}/{f}.bak",
        f"sed -i 's/{w}/{rng.choice(tx.WORDS)}/g' {d}/{f}", f"mv {f} {d}/",
        f"export {w.upper()}_{rng.choice(tx.WORDS).upper()}={tx.ri(rng, 1, 9999)}",
    ))


def _error(rng: random.Random) -> tuple[str, str]:
    f, d = tx.filename(rng), rng.choice(tx.DIRS)
    roll = rng.random()
    if roll < 0.3:
        tool = rng.choice(("jq", "tree", "rg", "htop", "yq", "ripgrep", "fd", "bat"))
        return f"{tool} {d}/{f}", f"bash: {tool}: command not found"
    if roll < 0.55:
        return f"cat {d}/{f}", f"cat: {d}/{f}: No such file or directory"
    if roll < 0.7:
        return f"./{f}", f"bash: ./{f}: Permission denied"
    frames = "\n".join(
        f'  File "/app/{tx.relpath(rng)}", line {tx.ri(rng, 1, 400)}, in {tx.ident(rng)}\n'
        f"    {tx.code_window(rng, 1)[0].strip()}" for _ in range(tx.ri(rng, 1, 4)))
    kind = rng.choice(("KeyError", "ValueError", "FileNotFoundError", "TypeError",
                       "ModuleNotFoundError", "ZeroDivisionError"))
    return (f"python3 {d}/{f}", f"Traceback (most recent call last):\n{frames}\n{kind}: "
            f"{tx.words(rng, tx.ri(rng, 2, 7))}")


def _screen(prompt: str, command: str, output: str) -> str:
    body = f"{prompt}{command}\n{output}\n" if output else f"{prompt}{command}\n"
    return f"{NEW_OUTPUT}{body}{prompt}\n"


def make_turn(rng: random.Random, category: str, task: GenTask, prev: GenTurn | None,
              index: int) -> GenTurn:
    prompt = task.ctx["prompt"]
    if category == "unchanged" and prev is not None:
        # the same command again (a re-run `ls`), same screen or one line different
        obs = prev.observation
        if rng.random() < 0.3:
            obs = near_repeat(rng, obs, str(tx.ri(rng, 2, 99)))
        return GenTurn(prev.action, obs, category)
    if category == "echo":
        command = _silent(rng)
        return GenTurn(command + "\n", _screen(prompt, command, ""), category)
    if category == "boilerplate":
        command, output = rng.choice(BOILERPLATE)
        return GenTurn(command + "\n", _screen(prompt, command, output), category)
    if category == "error":
        command, output = _error(rng)
        return GenTurn(command + "\n", _screen(prompt, command, output), category)
    if category == "empty":
        command = rng.choice(("clear", "clear", "reset", ""))
        return GenTurn(command + "\n" if command else "", "", category)
    command, output = rng.choice(INFORMATIVE)(rng)
    return GenTurn(command + "\n", _screen(prompt, command, output), "informative")


def render(rng: random.Random, task: GenTask, turns: list[GenTurn]) -> bytes:
    model = task.ctx["model"]
    prompt = task.ctx["prompt"]
    first = (f"{PROMPT_HEAD}Task Description:\n{task.text}\n\nCurrent terminal state:\n"
             f"Current Terminal Screen:\n{prompt}\n\n")
    steps: list[dict] = [{"step_id": 1, "source": "user", "message": first}]
    tokens_in = tokens_out = 0
    for k, turn in enumerate(turns):
        p, c = tx.ri(rng, 600, 9000), tx.ri(rng, 20, 400)
        tokens_in, tokens_out = tokens_in + p, tokens_out + c
        steps.append({
            "step_id": k + 2, "source": "agent", "model_name": model,
            "message": f"Analysis: {tx.sentence(rng)}\nPlan: {tx.sentence(rng)}",
            "tool_calls": [{"tool_call_id": f"call_{k}_1", "function_name": "bash_command",
                            "arguments": {"keystrokes": turn.action,
                                          "duration": rng.choice((0.1, 0.1, 1.0, 5.0))}}],
            "observation": {"results": [{"content": turn.observation}]},
            "metrics": {"prompt_tokens": p, "completion_tokens": c,
                        "cost_usd": round(p * 2.5e-6 + c * 1e-5, 6)},
        })
    doc = {
        "schema_version": "ATIF-v1.5", "session_id": tx.uuid(rng),
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": model,
                  "extra": {"parser": "json", "temperature": 0.7}},
        "steps": steps,
        "final_metrics": {"total_prompt_tokens": tokens_in, "total_completion_tokens": tokens_out,
                          "total_cached_tokens": 0},
    }
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")
