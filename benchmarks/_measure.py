"""What every benchmark script measures the same way: wall and CPU seconds, peak RSS.

Wall time is what a user waits; CPU time (this process's) is printed beside it where the
machine is shared, since wall time then measures the neighbours as much as the code. Peak RSS
is the kernel's high-water mark (Linux reports kilobytes), of this process or of the largest
child process that has ended.
"""

from __future__ import annotations

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


@contextmanager
def stopwatch() -> Iterator[Lap]:
    """`with stopwatch() as lap:` ... then lap.wall and lap.cpu."""
    lap = Lap()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield lap
    finally:
        lap.wall, lap.cpu = time.perf_counter() - wall, time.process_time() - cpu


def timed(work: Callable[[], Result]) -> tuple[Result, Lap]:
    """work()'s result and the lap it took."""
    with stopwatch() as lap:
        result = work()
    return result, lap


def peak_rss_mb(children: bool = False) -> float:
    """Peak resident memory in MiB: this process's, or (children) its largest ended child's."""
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024
