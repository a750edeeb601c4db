"""Run a real collector for one domain and publish its files atomically.

`collect_domain("terminal", out, 40, seed=0)` writes 40 trajectories into
`out/terminal/terminal-collected/` (one trajectory per file, in the domain's native format).
Everything is first written to a temporary sibling folder, whose sandboxes are removed, and the
folder is renamed into place only when the whole domain succeeded, so readers never see half a
collection. For the same seed the files are byte-identical wherever the environment is
deterministic (all seven domains on one machine: timestamps are pinned, listings sorted, pytest
timings stripped, the web server's port and the sandbox paths rewritten). Across machines the
terminal and SWE outputs follow the installed tools (bash, coreutils, git, pytest versions) and
the search corpus follows the Python version.

Real execution: terminal (bash), swe (git + pytest), mcp (MCP SDK servers over stdio), search
(DuckDB BM25 over stdlib docs), web (HTTP server + text browser). Modeled: android, os.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sources.registry import Registry
from sources.storage import atomic_path

Collector = Callable[[Path, int, int, Path], list[int]]


# Imported on first use: each collector pulls in its own dependencies (duckdb, mcp, ...).
COLLECTORS: Registry[Collector] = Registry("collector", {
    "terminal": "sources.factory.collect_terminal:collect",
    "swe": "sources.factory.collect_swe:collect",
    "mcp": "sources.factory.collect_mcp:collect",
    "search": "sources.factory.collect_search:collect",
    "web": "sources.factory.collect_web:collect",
    "android": "sources.factory.collect_gui_model:collect_android",
    "os": "sources.factory.collect_gui_model:collect_os",
})
COLLECTED_DOMAINS: tuple[str, ...] = tuple(COLLECTORS.names())
REAL_DOMAINS: frozenset[str] = frozenset({"terminal", "swe", "mcp", "search", "web"})
FORMATS = {
    "terminal": "atif",
    "swe": "sweagent_traj",
    "mcp": "mcp_jsonrpc",
    "search": "miroflow",
    "web": "webarena_render",
    "android": "androidworld",
    "os": "osworld_traj",
}


@dataclass(frozen=True)
class CollectStats:
    """What one collection produced."""

    domain: str
    source: str  # folder name under out_dir/<domain>/, also the catalog source name
    path: Path
    n_trajectories: int
    n_turns: int
    seconds: float
    real: bool  # real environment (True) or modeled UI (False)
    format: str  # reader that parses the files


def source_name(domain: str) -> str:
    return f"{domain}-collected"


def collect_domain(domain: str, out_dir: Path, n_trajectories: int, seed: int) -> CollectStats:
    """Collect `n_trajectories` for `domain` into out_dir/<domain>/<domain>-collected/."""
    collect = COLLECTORS.get(domain)
    start = time.perf_counter()
    final = Path(out_dir) / domain / source_name(domain)
    work = final.parent / f".{final.name}.work-{os.getpid()}"  # sandboxes: never the user's files
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        with atomic_path(final) as staging:
            staging.mkdir()
            turns = collect(staging, n_trajectories, seed, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return CollectStats(
        domain,
        source_name(domain),
        final,
        len(turns),
        sum(turns),
        time.perf_counter() - start,
        domain in REAL_DOMAINS,
        FORMATS[domain],
    )
