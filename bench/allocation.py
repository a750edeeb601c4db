"""How many samples each source of a domain gets: stratified, capped, redistributed.

A domain asks for `n` samples. Each source gets a share proportional to its eligible
trajectories (largest remainder, ties broken by source name), never more than its eligible
turns; what a source cannot fill goes to the sources that still have room, in proportion again,
until `n` is met or every eligible turn is used (the shortfall is then reported, not hidden).
"""

from __future__ import annotations

from collections.abc import Mapping


def _proportional(n: int, weights: Mapping[str, int]) -> dict[str, int]:
    total = sum(weights.values())
    if n <= 0 or total == 0:
        return {name: 0 for name in weights}
    exact = {name: n * w / total for name, w in weights.items()}
    out = {name: int(value) for name, value in exact.items()}
    by_remainder = sorted(weights, key=lambda name: (-(exact[name] - out[name]), name))
    for name in by_remainder[: n - sum(out.values())]:
        out[name] += 1
    return out


def allocate(n: int, trajectories: Mapping[str, int], capacity: Mapping[str, int]
             ) -> dict[str, int]:
    """Samples per source: proportional to `trajectories`, capped by `capacity` (turns)."""
    quota = {name: 0 for name in capacity}
    remaining = min(n, sum(capacity.values()))
    while remaining > 0:
        open_sources = {name: trajectories.get(name, 0) or 1 for name in capacity
                        if quota[name] < capacity[name]}
        share = _proportional(remaining, open_sources)
        for name, extra in share.items():
            take = min(extra, capacity[name] - quota[name])
            quota[name] += take
            remaining -= take
    return quota
