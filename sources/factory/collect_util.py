"""Small helpers shared by the real collectors: seeding, JSON output, sandboxes, a worker pool.

Every collector records one trajectory per file. A trajectory's randomness comes only from
`trajectory_rng(seed, domain, index)`, so trajectories can be collected in any order (and in
parallel) and still come out the same for the same seed.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# The fixed clock every collector uses where a format wants a date or time (never the real one).
FIXED_DATE = "2025-03-03"
FIXED_EPOCH = 1740996000.0  # 2025-03-03T10:00:00Z


def trajectory_rng(seed: int, domain: str, index: int) -> random.Random:
    """A generator that depends only on (seed, domain, index): order and pool size do not matter."""
    return random.Random(f"worldtrace:{domain}:{seed}:{index}")


def dump_json(obj: Any) -> str:
    """Stable JSON text (indent 2, UTF-8 kept) with a trailing newline."""
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def write_text(path: Path, text: str) -> None:
    """Write UTF-8 text with Unix newlines (the output folder is renamed into place as a whole)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def fresh_dir(path: Path) -> Path:
    """An empty directory at `path` (removed first if it exists)."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def normalise_path(text: str, real: Path | str, shown: str) -> str:
    """Replace a sandbox's real absolute path by the fixed path the recording shows.

    Sandboxes live under a per-run temporary folder; a recorded file must not depend on where
    that folder was, so the real path (and its resolved form) is rewritten, like Harbor's
    CONTAINER_ID normalisation.
    """
    for form in {str(real), os.path.realpath(real)}:
        text = text.replace(form, shown)
    return text


_PYTEST_TIME = re.compile(r" in \d+\.\d+s( \(\d+:\d\d:\d\d\))?")


def strip_pytest_timing(text: str) -> str:
    """pytest's summary line ends with the wall time ("in 0.03s"): the one part that varies."""
    return _PYTEST_TIME.sub("", text)


def workers_for(n: int) -> int:
    """Threads for a collector: the machine's cores (at least 2: most time is spent waiting)."""
    return max(1, min(n, max(2, os.cpu_count() or 2)))


def run_indexed(fn: Callable[[int], T], indices: Sequence[int], workers: int) -> list[T]:
    """Call fn(i) for every index with a small thread pool; results in index order."""
    if workers <= 1 or len(indices) <= 1:
        return [fn(i) for i in indices]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, indices))


def minimal_env(home: Path, extra_path: Sequence[str] = ()) -> dict[str, str]:
    """A clean environment for sandboxed processes: HOME and TMPDIR in the sandbox, C locale,
    a minimal PATH, nothing inherited from the user's shell."""
    path = [*extra_path, "/usr/local/bin", "/usr/bin", "/bin"]
    tmp = home / ".tmp"
    tmp.mkdir(exist_ok=True)
    return {
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "PATH": ":".join(dict.fromkeys(path)),
        "LANG": "C",
        "LC_ALL": "C",
        "TZ": "UTC",
        "TERM": "dumb",
        "USER": "agent",
        "LOGNAME": "agent",
        "SHELL": "/bin/bash",
    }
