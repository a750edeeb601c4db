"""Short agent trajectories (under 20 word 5-grams) with planted near copies, for dedup tests.

Each base trajectory is one command and its answer from a handful of templates (the shapes
terminal, MCP and search turns take), with its own random names and numbers; a near copy edits
one word of its base (a number, a path part, a word of the answer). Bases of one template share
their boilerplate, so a dedup that links texts by boilerplate merges different runs.
"""

from __future__ import annotations

import random

from quality_rows import trajectory

from sources.schema import Trajectory

NAMES = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta", "lambda", "zeta",
         "orion", "vega", "lyra", "draco", "hydra", "atlas", "nova", "pixel", "ember", "quartz"]
EXTS = ["py", "txt", "json", "csv", "md", "log", "toml", "yaml"]


def _name(rng: random.Random) -> str:
    return f"{rng.choice(NAMES)}_{rng.choice(NAMES)}{rng.randint(1, 99)}"


def _base(rng: random.Random) -> tuple[str, str, str]:
    """(task, action, observation) of one short run."""
    kind = rng.randrange(4)
    if kind == 0:
        files = " ".join(f"{_name(rng)}.{rng.choice(EXTS)}" for _ in range(rng.randint(2, 4)))
        folder = _name(rng)
        return (f"list the files in {folder}", f"ls {folder}", files)
    if kind == 1:
        path = f"{_name(rng)}.{rng.choice(EXTS)}"
        return (f"count lines of {path}", f"wc -l {path}", f"{rng.randint(3, 9999)} {path}")
    if kind == 2:
        key = _name(rng)
        return (f"read the note {key}", f'notes-get({{"id": "{key}"}})',
                f'{{"id": "{key}", "text": "{_name(rng)} at {rng.randint(1, 12)} pm"}}')
    query = f"{rng.choice(NAMES)} {rng.choice(NAMES)}"
    return (f"search for {query}", f"search({query})",
            f"1. {_name(rng)} - {rng.choice(NAMES)} {rng.choice(NAMES)} "
            f"2. {_name(rng)} - {rng.choice(NAMES)}")


def _edit(rng: random.Random, text: str) -> str:
    """Replace one word with another of the same shape."""
    words = text.split(" ")
    k = rng.randrange(len(words))
    digits = [c for c in words[k] if c.isdigit()]
    if digits:
        words[k] = "".join(str((int(c) + 1) % 10) if c.isdigit() else c for c in words[k])
    else:
        words[k] = rng.choice(NAMES)
    return " ".join(words)


def short_corpus(n_bases: int, n_copies: int, seed: int
                 ) -> tuple[dict[str, Trajectory], list[tuple[str, str]]]:
    """Trajectories keyed by source path, and the planted (base, copy) pairs."""
    rng = random.Random(seed)
    bases = [_base(rng) for _ in range(n_bases)]
    items = {f"base{k:04d}.json": trajectory(task, [(action, observation)])
             for k, (task, action, observation) in enumerate(bases)}
    planted = []
    for k, b in enumerate(rng.sample(range(n_bases), n_copies)):
        task, action, observation = bases[b]
        if rng.random() < 0.5:
            observation = _edit(rng, observation)
        else:
            action = _edit(rng, action)
        items[f"copy{k:04d}.json"] = trajectory(task, [(action, observation)])
        planted.append((f"base{b:04d}.json", f"copy{k:04d}.json"))
    return items, planted


def texts_of(items: dict[str, Trajectory]) -> dict[str, str]:
    """Each trajectory's dedup text: task, then actions and observations, one per line."""
    return {name: "\n".join([t.task] + [x for turn in t.turns
                                        for x in (turn.action, turn.observation)])
            for name, t in items.items()}
