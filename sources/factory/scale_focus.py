"""Which app a generated GUI trajectory has in front of it, turn by turn, so that its screens
hang together the way a real session's do.

A real Android or desktop session stays in one app until the agent switches. A world model can
only predict such screens, and `worldtrace validate` can only tell a screen swapped in from
another trajectory, when the generator keeps that state too (before, each screen drew its app
at random: 187 of 350 consecutive Android screens changed app).

The app in front at each turn is drawn once per trajectory from the trajectory's own seed (not
from the turns' seeds), so redrawing one turn (a planted near-duplicate edit) never moves the
app of the turns after it; a turn opens its app when the screen before it showed another one,
the launcher, or nothing. (Screens of an app still draw their rows afresh: rows that come back
as the agent scrolls make many new screens near-copies of earlier ones, which the labelling
guide calls unchanged, and the planted truth would no longer be unambiguous.)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class FocusConfig:
    """How often the app in front changes: a turn switches with probability `switch_rate`."""

    switch_rate: float = 0.08


def focus_plan(seed: int, n_turns: int, apps: Sequence[str], first: str,
               config: FocusConfig = FocusConfig()) -> tuple[str, ...]:
    """The app in front after each of `n_turns` turns, starting with `first`."""
    rng = random.Random(seed)
    current, plan = first, []
    for _ in range(n_turns):
        if rng.random() < config.switch_rate:
            current = rng.choice([a for a in apps if a != current])
        plan.append(current)
    return tuple(plan)


def planned_focus(ctx: dict[str, Any], index: int, apps: Sequence[str],
                  shown_before: str | None) -> tuple[str, bool]:
    """The app in front at turn `index` of the trajectory `ctx` belongs to, and whether the
    agent must switch to it: the previous observation showed another app, the launcher or
    nothing (`shown_before`, None for those).

    The plan is computed once and kept in `ctx` (it depends only on the trajectory's seed and
    length, so keeping it cannot change what a later call returns)."""
    plan = ctx.get("focus_plan")
    if plan is None:
        plan = focus_plan(ctx["scene_seed"], ctx["n_turns"], apps, ctx["app"])
        ctx["focus_plan"] = plan
    app = plan[index]
    return app, shown_before != app
