"""The terminal collector's task book: seeded file and text tasks, their scripts and checks.

A task is (instruction, starting files, a script of commands, a check of the end state). The
script reacts to what bash really returned (exit codes, output) where a person would.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sources.factory.collect_util import trajectory_rng

WORDS = (
    "apple banana cherry delta echo falcon granite harbor island jungle kernel lemon meadow "
    "nickel orbit pepper quartz river saddle timber umbra velvet walnut xenon yonder zephyr "
    "amber basalt cobalt dune ember fjord glacier hollow indigo juniper"
).split()
NAMES = (
    "ada alan grace linus margaret dennis barbara ken edsger donald frances john radia tim "
    "katherine guido bjarne anita"
).split()
HOSTS = ("db.internal", "10.0.0.12", "cache.local", "api.example.org", "queue.lan")


@dataclass
class TerminalTask:
    """One task: what the agent is told and the files its sandbox starts with."""

    kind: str
    instruction: str
    files: dict[str, str]
    modes: dict[str, int] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)

    def materialise(self, root: Path) -> None:
        """Write the starting files into the sandbox (sorted: creation order is fixed)."""
        for rel in sorted(self.files):
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.files[rel], encoding="utf-8")
            path.chmod(self.modes.get(rel, 0o644))


@dataclass(frozen=True)
class TaskSpec:
    build: Callable[[random.Random], TerminalTask]
    run: Callable[[Any, TerminalTask], None]  # (ScriptedAgent, task)
    verify: Callable[[Path, TerminalTask], bool]


def _read(root: Path, rel: str) -> str:
    path = root / rel
    return path.read_text(encoding="utf-8") if path.is_file() else ""


# --- unique words -------------------------------------------------------------------------
def build_words(rng: random.Random) -> TerminalTask:
    pool = rng.sample(WORDS, rng.randint(6, 12))
    words = [rng.choice(pool) for _ in range(rng.randint(15, 40))]
    return TerminalTask(
        "words",
        "words.txt has one word per line. Write the distinct words, sorted, "
        "to unique.txt and the number of distinct words to count.txt.",
        {"words.txt": "\n".join(words) + "\n"},
        params={"n": len(set(words))},
    )


def run_words(agent: Any, task: TerminalTask) -> None:
    agent.look("ls", "Start by seeing what is in the working directory.")
    agent.do("head -n 5 words.txt", "Peek at the input file.", path="words.txt")
    agent.do("wc -l words.txt", "Count the lines.", path="words.txt")
    agent.do("sort words.txt | uniq > unique.txt", "Sort and drop duplicates.", path="words.txt")
    agent.do("wc -l < unique.txt > count.txt", "Store the number of distinct words.")
    agent.do("cat count.txt", "Check the count.", path="count.txt")
    agent.do("head -n 3 unique.txt", "Check the first sorted words.", path="unique.txt")


def verify_words(root: Path, task: TerminalTask) -> bool:
    return _read(root, "count.txt").strip() == str(task.params["n"])


# --- error counts in logs -----------------------------------------------------------------
def build_logs(rng: random.Random) -> TerminalTask:
    files = {}
    for name in sorted(rng.sample(["api", "worker", "db", "auth", "cron"], rng.randint(2, 4))):
        lines = []
        for second in range(rng.randint(8, 20)):
            level = rng.choices(["INFO", "WARN", "ERROR"], [6, 2, 2])[0]
            lines.append(
                f"2025-03-03T10:00:{second:02d} {level} {name}: event {rng.randint(100, 999)}"
            )
        files[f"logs/{name}.log"] = "\n".join(lines) + "\n"
    return TerminalTask(
        "logs",
        "Count the ERROR lines in each log under logs/ and write 'file count' "
        "lines, highest count first, to errors.txt.",
        files,
    )


def run_logs(agent: Any, task: TerminalTask) -> None:
    agent.look("ls", "See what is here.")
    agent.do("ls logs", "List the logs.")
    first = sorted(task.files)[0]
    agent.do(f"head -n 3 {first}", "Look at the line format.", path=first)
    agent.do("grep -c ERROR logs/*.log", "Count ERROR lines per file.")
    agent.do(
        "grep -c ERROR logs/*.log | sort -t: -k2 -nr | tr ':' ' ' > errors.txt",
        "Sort by count, descending, and write the result.",
    )
    agent.do("cat errors.txt", "Check the result.", path="errors.txt")


def verify_logs(root: Path, task: TerminalTask) -> bool:
    counts = [
        int(line.split()[1]) for line in _read(root, "errors.txt").split("\n") if line.strip()
    ]
    return len(counts) == len(task.files) and counts == sorted(counts, reverse=True)


# --- configuration edit with sed ----------------------------------------------------------
def build_config(rng: random.Random) -> TerminalTask:
    host, port = rng.choice(HOSTS), rng.choice([5432, 6379, 8080, 9000, 27017])
    text = (
        f"# service settings\nname = {rng.choice(WORDS)}\nhost = localhost\nport = 1234\n"
        f"retries = {rng.randint(1, 5)}\ndebug = false\n"
    )
    return TerminalTask(
        "config",
        f"In settings.conf set host to {host} and port to {port}; keep the "
        "original as settings.conf.bak.",
        {"settings.conf": text},
        params={"host": host, "port": port},
    )


def run_config(agent: Any, task: TerminalTask) -> None:
    host, port = task.params["host"], task.params["port"]
    agent.do("cat settings.conf", "Read the current settings.", path="settings.conf")
    agent.do("cp settings.conf settings.conf.bak", "Keep a backup first.", path="settings.conf")
    agent.do(f"sed -i 's/^host = .*/host = {host}/' settings.conf", "Replace the host line.")
    agent.do(f"sed -i 's/^port = .*/port = {port}/' settings.conf", "Replace the port line.")
    agent.do("grep -n -E '^(host|port)' settings.conf", "Check both lines.")
    agent.do(
        "diff settings.conf.bak settings.conf", "Compare with the backup (diff exits 1 on changes)."
    )


def verify_config(root: Path, task: TerminalTask) -> bool:
    text = _read(root, "settings.conf")
    return f"host = {task.params['host']}" in text and (root / "settings.conf.bak").is_file()


# --- make a script executable and run it --------------------------------------------------
def build_script(rng: random.Random) -> TerminalTask:
    files = {f"data/{rng.choice(WORDS)}-{i}.csv": "a,b\n1,2\n" for i in range(rng.randint(2, 6))}
    files["data/readme.txt"] = "not a csv\n"
    files["tools/report.sh"] = "#!/bin/bash\nprintf 'csv files: '\nls data | grep -c '[.]csv$'\n"
    return TerminalTask(
        "script",
        "tools/report.sh prints how many .csv files data/ holds. Make it "
        "executable, run it, and save its output to report.txt.",
        files,
        params={"n": len(files) - 2},
    )


def run_script(agent: Any, task: TerminalTask) -> None:
    agent.look("ls -F", "See the layout.")
    agent.do("cat tools/report.sh", "Read the script.", path="tools/report.sh")
    if agent.do("./tools/report.sh", "Try to run it.").exit_code != 0:
        agent.do("stat -c '%A %n' tools/report.sh", "Permission denied: check its mode.")
    agent.do("chmod +x tools/report.sh", "Make it executable.", path="tools/report.sh")
    agent.do("./tools/report.sh > report.txt", "Run it and keep the output.")
    agent.do("cat report.txt", "Check the saved output.", path="report.txt")


def verify_script(root: Path, task: TerminalTask) -> bool:
    return _read(root, "report.txt").strip() == f"csv files: {task.params['n']}"


# --- move temporary files with find -------------------------------------------------------
def build_tmpfiles(rng: random.Random) -> TerminalTask:
    files = {}
    for i in range(rng.randint(4, 9)):
        folder = rng.choice(["project", "project/src", "project/docs", "project/src/lib"])
        suffix = rng.choice([".py", ".md", ".tmp", ".tmp", ".txt"])
        files[f"{folder}/{rng.choice(WORDS)}{i}{suffix}"] = f"file {i}\n"
    files.setdefault("project/cache.tmp", "scratch\n")
    return TerminalTask(
        "tmpfiles",
        "Move every .tmp file under project/ into a new folder trash/, "
        "then list the files left in project/.",
        files,
        params={"n": sum(name.endswith(".tmp") for name in files)},
    )


def run_tmpfiles(agent: Any, task: TerminalTask) -> None:
    agent.look("ls", "See what is here.")
    agent.do("find project -type f | sort", "List every file under project/.")
    agent.do("find project -name '*.tmp' | sort", "Find the temporary files.")
    if agent.do("mv project/cache.tmp trash/", "Move the first one.").exit_code != 0:
        agent.do("mkdir trash", "trash/ does not exist yet: create it.")
    agent.do("find project -name '*.tmp' -exec mv {} trash/ ';'", "Move all remaining .tmp files.")
    agent.do("ls trash", "Check the trash folder.")
    agent.do("find project -type f | sort", "List what is left.")


def verify_tmpfiles(root: Path, task: TerminalTask) -> bool:
    left = [p for p in (root / "project").rglob("*.tmp")]
    return not left and (root / "trash").is_dir()


# --- top scores from a CSV ----------------------------------------------------------------
def build_scores(rng: random.Random) -> TerminalTask:
    names = rng.sample(NAMES, rng.randint(6, 12))
    scores = rng.sample(range(10, 100), len(names))
    rows = "".join(f"{name},{score}\n" for name, score in zip(names, scores, strict=True))
    top = [name for _, name in sorted(zip(scores, names, strict=True), reverse=True)[:3]]
    return TerminalTask(
        "scores",
        "scores.csv has a header and name,score rows. Write the names of "
        "the three best scores, best first, to top3.txt.",
        {"scores.csv": "name,score\n" + rows},
        params={"top": top},
    )


def run_scores(agent: Any, task: TerminalTask) -> None:
    agent.do("head -n 4 scores.csv", "Look at the CSV.", path="scores.csv")
    agent.do(
        "tail -n +2 scores.csv | sort -t, -k2 -nr | head -n 3",
        "Sort rows by score, numerically, descending.",
    )
    agent.do(
        "tail -n +2 scores.csv | sort -t, -k2 -nr | head -n 3 | cut -d, -f1 > top3.txt",
        "Keep only the names.",
    )
    agent.do("cat top3.txt", "Check the result.", path="top3.txt")


def verify_scores(root: Path, task: TerminalTask) -> bool:
    return _read(root, "top3.txt").split() == task.params["top"]


# --- write a small script -----------------------------------------------------------------
def build_counter(rng: random.Random) -> TerminalTask:
    files = {
        f"notes/{name}.txt": "".join(f"{rng.choice(WORDS)}\n" for _ in range(rng.randint(1, 9)))
        for name in rng.sample(NAMES, rng.randint(2, 5))
    }
    return TerminalTask(
        "counter",
        "Write count_lines.sh that prints every .txt file in notes/ with "
        "its number of lines, make it executable and run it.",
        files,
    )


def run_counter(agent: Any, task: TerminalTask) -> None:
    agent.look("ls notes", "See the notes.")
    agent.do(
        'printf \'#!/bin/bash\\nfor f in notes/*.txt; do\\n  printf "%%s " "$f"\\n  '
        'wc -l < "$f"\\ndone\\n\' > count_lines.sh',
        "Write the script.",
    )
    agent.do("cat count_lines.sh", "Check what was written.", path="count_lines.sh")
    if agent.do("./count_lines.sh", "Run it.").exit_code != 0:
        agent.do("chmod +x count_lines.sh", "It is not executable yet.", path="count_lines.sh")
        agent.do("./count_lines.sh", "Run it again.")
    agent.do("wc -l notes/*.txt", "Cross-check with wc.")


def verify_counter(root: Path, task: TerminalTask) -> bool:
    return (root / "count_lines.sh").is_file() and bool(
        (root / "count_lines.sh").stat().st_mode & 0o100
    )


# --- permissions --------------------------------------------------------------------------
def build_perms(rng: random.Random) -> TerminalTask:
    files = {
        f"bin/{name}.sh": f"#!/bin/sh\necho {name}\n"
        for name in rng.sample(WORDS, rng.randint(2, 4))
    }
    files["secrets.txt"] = f"token={rng.randrange(16**12):012x}\n"
    modes = {"secrets.txt": 0o666}
    return TerminalTask(
        "perms",
        "Make every .sh file in bin/ executable and remove write permission "
        "for group and others from secrets.txt.",
        files,
        modes,
    )


def run_perms(agent: Any, task: TerminalTask) -> None:
    agent.do("stat -c '%A %n' bin/*.sh secrets.txt", "Check the current modes.")
    agent.do("chmod +x bin/*.sh", "Make the scripts executable.")
    agent.do(
        "chmod go-w secrets.txt", "Drop group/other write on the secrets file.", path="secrets.txt"
    )
    agent.do("stat -c '%A %n' bin/*.sh secrets.txt", "Check the modes again.")
    first = sorted(name for name in task.files if name.startswith("bin/"))[0]
    agent.do(f"./{first}", "Run one script to be sure.")


def verify_perms(root: Path, task: TerminalTask) -> bool:
    return not (root / "secrets.txt").stat().st_mode & 0o022


# --- extract e-mail addresses -------------------------------------------------------------
def build_emails(rng: random.Random) -> TerminalTask:
    people = rng.sample(NAMES, rng.randint(3, 7))
    lines = [
        f"{name.title()} <{name.upper() if rng.random() < 0.3 else name}@example.org> "
        f"room {rng.randint(1, 99)}"
        for name in people
    ]
    lines += [lines[0]] + ["no address on this line"]
    return TerminalTask(
        "emails",
        "Extract all e-mail addresses from contacts.txt, lowercase them, "
        "drop duplicates and save them sorted to emails.txt.",
        {"contacts.txt": "\n".join(lines) + "\n"},
        params={"n": len(people)},
    )


def run_emails(agent: Any, task: TerminalTask) -> None:
    agent.do("cat contacts.txt", "Read the contacts.", path="contacts.txt")
    agent.do("grep -oE '[A-Za-z0-9._]+@[A-Za-z0-9.]+' contacts.txt", "Pull out the addresses.")
    agent.do(
        "grep -oE '[A-Za-z0-9._]+@[A-Za-z0-9.]+' contacts.txt | tr 'A-Z' 'a-z' | sort -u "
        "> emails.txt",
        "Lowercase, sort and deduplicate.",
    )
    agent.do("wc -l emails.txt", "Count them.", path="emails.txt")
    agent.do("cat emails.txt", "Check the file.", path="emails.txt")


def verify_emails(root: Path, task: TerminalTask) -> bool:
    return len(_read(root, "emails.txt").split()) == task.params["n"]


TASKS: dict[str, TaskSpec] = {
    "words": TaskSpec(build_words, run_words, verify_words),
    "logs": TaskSpec(build_logs, run_logs, verify_logs),
    "config": TaskSpec(build_config, run_config, verify_config),
    "script": TaskSpec(build_script, run_script, verify_script),
    "tmpfiles": TaskSpec(build_tmpfiles, run_tmpfiles, verify_tmpfiles),
    "scores": TaskSpec(build_scores, run_scores, verify_scores),
    "counter": TaskSpec(build_counter, run_counter, verify_counter),
    "perms": TaskSpec(build_perms, run_perms, verify_perms),
    "emails": TaskSpec(build_emails, run_emails, verify_emails),
}


def make_task(seed: int, index: int) -> TerminalTask:
    """The task of trajectory `index` (its own generator, so tests can rebuild it alone)."""
    rng = trajectory_rng(seed, "terminal-task", index)
    kinds = sorted(TASKS)
    kind = kinds[index % len(kinds)] if index < len(kinds) else rng.choice(kinds)
    return TASKS[kind].build(rng)
