"""Shared pieces of the scale generator: the generated turn, category planning, turn counts.

A domain writer (`scale_<domain>.py`) builds a trajectory turn by turn from a category plan and
renders it into its native file format. The core decides everything that must be the same for
all domains: which category each turn gets, how many turns a trajectory has, and how a
trajectory's text for Jaccard is formed.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Protocol

CATEGORIES: tuple[str, ...] = ("informative", "echo", "unchanged", "boilerplate", "error", "empty")

# "unchanged" repeats the previous observation; it only follows a turn whose observation is
# plain content (a repeated error or banner would be two categories at once).
_REPEATABLE = frozenset({"informative", "unchanged"})


@dataclass(slots=True)
class GenTurn:
    """One generated turn: the texts a reader yields, its planted category, native fields."""

    action: str
    observation: str
    category: str
    native: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class GenTask:
    """The task text a reader yields, plus whatever the writer needs to keep per trajectory."""

    text: str
    ctx: dict[str, Any] = field(default_factory=dict)


class DomainWriter(Protocol):
    """What scale.py needs from a domain module."""

    DOMAIN: str
    SUFFIX: str  # file name suffix, e.g. ".trajectory.json"
    MEAN_TURNS: float
    WEIGHTS: dict[str, float]
    PREFIX: tuple[str, ...]  # forced categories of the first turns
    LAST: str | None  # forced category of the last turn

    def make_task(self, rng: random.Random) -> GenTask: ...

    def make_turn(
        self, rng: random.Random, category: str, task: GenTask, prev: GenTurn | None, index: int
    ) -> GenTurn: ...

    def render(self, rng: random.Random, task: GenTask, turns: list[GenTurn]) -> bytes: ...


def sample_turn_count(
    rng: random.Random, mean: float, sigma: float = 0.55, minimum: int = 2
) -> int:
    """A clipped lognormal whose mean is about `mean` (a long right tail, like real runs)."""
    mu = math.log(mean) - sigma * sigma / 2
    n = int(round(rng.lognormvariate(mu, sigma)))
    return max(minimum, min(n, int(mean * 4)))


def plan_categories(
    rng: random.Random, n: int, weights: dict[str, float],
    prefix: tuple[str, ...] = (), last: str | None = None,
) -> list[str]:
    """Draw a category per turn; fix the draws that cannot hold (see `_REPEATABLE`).

    `prefix` forces the first categories (an MCP session opens with initialize and tools/list),
    `last` the final one (a SWE-agent run ends with `submit` and its diff).
    """
    cats = rng.choices(CATEGORIES, [weights.get(c, 0.0) for c in CATEGORIES], k=n)
    cats[: len(prefix)] = prefix
    if last is not None:
        cats[-1] = last
    for t, cat in enumerate(cats):
        if cat == "unchanged" and (t == 0 or cats[t - 1] not in _REPEATABLE):
            cats[t] = "informative"
    return cats


def trajectory_text(task: str, turns: list[GenTurn]) -> str:
    """The text Jaccard is computed on: task, then each turn's action and observation."""
    parts = [task]
    for turn in turns:
        parts.append(turn.action)
        parts.append(turn.observation)
    return "\n".join(parts)


def near_repeat(rng: random.Random, text: str, token: str) -> str:
    """`text` with one line changed slightly (a clock tick, a counter): a near-identical repeat."""
    lines = text.split("\n")
    if len(lines) < 10:
        return text
    k = int(rng.random() * len(lines))
    lines[k] = f"{lines[k]} {token}" if lines[k] else token
    return "\n".join(lines)


def pick_edits(
    erng: random.Random, heavy: bool, task: GenTask, turns: list[GenTurn], cats: list[str],
    first: int,
) -> list[int]:
    """Turns to redraw so that about a target share of the text changes (see build_trajectory).

    Only turns whose redraw changes their text (informative, echo, error) are picked, in random
    order, each only if it fits the remaining budget; a turn's cost includes the "unchanged"
    repeats right after it, which change with it. If nothing fits, the cheapest turn is taken.
    """
    target = erng.uniform(0.45, 0.78) if heavy else erng.uniform(0.82, 0.97)
    sizes = [len(t.action) + len(t.observation) for t in turns]
    budget = (1 - target) / (1 + target) * (len(task.text) + sum(sizes))
    cost = {}
    for t, cat in enumerate(cats):
        if t >= first and cat in ("informative", "echo", "error"):
            cost[t] = sizes[t]
            for later in range(t + 1, len(cats)):
                if cats[later] != "unchanged":
                    break
                cost[t] += sizes[later]
    candidates = sorted(cost)
    erng.shuffle(candidates)
    chosen = []
    for t in candidates:
        if cost[t] <= budget:
            chosen.append(t)
            budget -= cost[t]
    if not chosen and candidates:
        chosen = [min(candidates, key=lambda t: (cost[t], t))]
    if not chosen:  # nothing but boilerplate, repeats and empties: make one turn informative
        chosen = [first + int(erng.random() * (len(cats) - first))]
        cats[chosen[0]] = "informative"
    return chosen


def redraw_seed(
    erng: random.Random, writer: DomainWriter, task: GenTask, turns: list[GenTurn], cat: str,
    t: int, tries: int = 12,
) -> int:
    """A new seed for turn t whose text is about as long as the old one (0.5x-2x), so the
    share of rewritten text, and with it the Jaccard, lands near the target."""
    old = len(turns[t].action) + len(turns[t].observation)
    prev = turns[t - 1] if t else None
    best, best_gap = 0, float("inf")
    for _ in range(tries):
        seed = erng.getrandbits(64)
        new = writer.make_turn(random.Random(seed), cat, task, prev, t)
        ratio = (len(new.action) + len(new.observation) + 1) / (old + 1)
        gap = abs(math.log(ratio))
        if gap < best_gap:
            best, best_gap = seed, gap
        if gap <= math.log(2):
            break
    return best
