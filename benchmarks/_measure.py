"""What every benchmark script measures the same way: wall and CPU seconds, peak RSS.

Wall time is what a user waits; CPU time (this process's and its ended children's: worker
processes) is printed beside it where the machine is shared, since wall time then measures the
neighbours as much as the code; so is the load average. Peak RSS is the kernel's high-water mark
(Linux reports kilobytes), of this process or of the largest child process that has ended.
Every script ends with one `result: name=value ...` line (`result_line`) for programs to read.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

REPO = Path(__file__).resolve().parent.parent
Result = TypeVar("Result")


@dataclass
class Lap:
    """The seconds one timed piece of work took (filled when it ends)."""

    wall: float = 0.0
    cpu: float = 0.0
    own_cpu: float = 0.0  # this process's share of `cpu` (the rest: its worker processes)


@contextmanager
def stopwatch() -> Iterator[Lap]:
    """`with stopwatch() as lap:` ... then lap.wall and lap.cpu."""
    lap = Lap()
    wall, cpu, own = time.perf_counter(), cpu_seconds(), cpu_seconds(children=False)
    try:
        yield lap
    finally:
        lap.wall, lap.cpu = time.perf_counter() - wall, cpu_seconds() - cpu
        lap.own_cpu = cpu_seconds(children=False) - own


def cpu_seconds(children: bool = True) -> float:
    """User + system CPU seconds of this process and (unless not `children`) of its children
    that have ended."""
    whose = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)[:2 if children else 1]
    return sum(usage.ru_utime + usage.ru_stime for usage in map(resource.getrusage, whose))


def load_average() -> str:
    """The 1, 5 and 15 minute load averages ("2.1/1.9/1.5"): how busy the machine was."""
    return "/".join(f"{value:.1f}" for value in os.getloadavg())


def result_line(**figures: float | int | str) -> str:
    """`result: name=value ...`: a script's figures in one line a program can read."""
    return "result: " + " ".join(
        f"{name}={value:.6g}" if isinstance(value, float) else f"{name}={value}"
        for name, value in figures.items())


def timed(work: Callable[[], Result]) -> tuple[Result, Lap]:
    """work()'s result and the lap it took."""
    with stopwatch() as lap:
        result = work()
    return result, lap


def calibration_seconds(rounds: int = 5) -> float:
    """CPU seconds of a fixed piece of pure-Python work like a reader's (JSON decoded, dicts
    read, lines formatted, JSON encoded): the best of `rounds`. This machine's speed drifts by
    20-60 % from hour to hour (3x between two days), so a figure is compared across runs
    together with this one. Roughly, not exactly, proportional: session 19 -> 20, calibration
    0.245 -> 0.085 s (2.9x) and a 1M ingest 117 -> 49 CPU s (2.4x); within session 20,
    calibration 1.3x and ingest's CPU a million turns 1.4x."""
    elements = [{"index": i, "class_name": f"android.widget.View{i % 7}", "text": f"item {i}",
                 "is_clickable": i % 3 == 0, "bbox": {"x_min": i, "x_max": i + 40}}
                for i in range(400)]
    document = json.dumps({"screens": [elements] * 8})
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(20):
            screens = json.loads(document)["screens"]
            lines = [f"[{element['index']}] {element['class_name']} {element['text']!r}"
                     f"{' (clickable)' if element['is_clickable'] else ''}"
                     for screen in screens for element in screen]
            json.dumps({"lines": lines}, sort_keys=True)
        best = min(best, time.process_time() - start)
    return best


def peak_rss_mb(children: bool = False) -> float:
    """Peak resident memory in MiB: this process's, or (children) its largest ended child's."""
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024
