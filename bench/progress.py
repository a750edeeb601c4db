"""Progress of one predictor over a bench: samples done / total, rate, time left.

On a terminal it is a tqdm bar; in a log (a file, Dagster's logger, a pipe) it is plain lines,
at most one every `every_s` seconds and always one at the end, e.g.

    hf_local:sft_model: 16/70 samples, 0.41 samples/s, about 2m12s left

so a slow model is never silent for minutes after "Loading weights".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tqdm import tqdm


def duration(seconds: float) -> str:
    """3725 -> '1h02m05s', 132 -> '2m12s', 7.4 -> '7s'."""
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


@dataclass
class Progress:
    """Call `update(n)` as samples finish; `close()` when done (writes the last line)."""

    name: str
    total: int
    write: Callable[[str], None]
    unit: str = "samples"  # what is counted (trajectories, for validation)
    verb: str = "predicting"  # what is done to them, on the opening line
    bar: bool = False  # a tqdm bar (a terminal) instead of lines
    every_s: float = 10.0
    clock: Callable[[], float] = time.monotonic
    done: int = 0
    _started: float = field(init=False)
    _last: float = field(init=False)
    _bar: tqdm | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._started = self._last = self.clock()
        if self.bar:
            self._bar = tqdm(total=self.total, desc=self.name, unit=f" {self.unit}")
        else:
            self.write(f"{self.name}: {self.verb} {self.total} {self.unit}")

    def line(self) -> str:
        """The progress line as of now."""
        elapsed = max(self.clock() - self._started, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else None
        remaining = "done" if self.done >= self.total else (
            f"about {duration(left)} left" if left is not None else "time left unknown")
        return (f"{self.name}: {self.done}/{self.total} {self.unit}, {rate:.2f} {self.unit}/s, "
                f"{remaining} ({duration(elapsed)} so far)")

    def update(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        now = self.clock()
        if self.done >= self.total or now - self._last >= self.every_s:
            self._last = now
            self.write(self.line())

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
