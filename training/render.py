"""Trajectories of one pool as episodes, and episodes as chat messages and weighted text.

An `Episode` is a trajectory with its turns (action, observation, observation format) and each
turn's category and loss weight from turn_labels, read in a stable order (trajectory_id, then
turn_index) one trajectory at a time. The chat layout is the one the tokenizer's chat template
writes (tokenizer.CHAT_TEMPLATE): `<|role|>content<|end|>` per message, a world-model system
prompt (one of the 10 variants, with the task), then the history replayed as user = action,
assistant = observation, as AgentWorldBench replays it.

`weighted_segments` cuts that same text into pieces with a loss weight each: the system prompt
and the actions weigh `action_weight` (1.0: the context is text too), an observation (its role
marker and <|end|> included) weighs its turn's loss_weight, so a low-information turn stays in
the text and only counts less.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb

from bench.predictors.messages import conversation
from sources.storage import load_sql, partition_path
from training.prompt_variants import system_prompt, variant_for

END = "<|end|>"
EOS = "<eos>"
JUDGEABLE = ("informative", "error")  # turns a world model can be judged on (turn-categories.md)


@dataclass(frozen=True)
class Step:
    """One turn of an episode."""

    turn_index: int
    action: str
    observation: str
    observation_format: str
    category: str
    loss_weight: float
    exit_code: int | None = None
    is_error: bool | None = None
    action_kind: str = ""
    tool_name: str = ""

    @property
    def judgeable(self) -> bool:
        """A turn a world model can be judged on (the bench draws its targets from these)."""
        return self.category in JUDGEABLE


@dataclass(frozen=True)
class Episode:
    """A trajectory of one pool, ready to render."""

    trajectory_id: str
    domain: str
    task: str
    steps: tuple[Step, ...]

    def formats(self) -> list[str]:
        return [s.observation_format for s in self.steps]

    def system(self, seed: int = 0, key: str | None = None) -> tuple[int, str]:
        """(variant, system prompt), the variant by a stable hash of `key` (default: the id)."""
        variant = variant_for(key or self.trajectory_id, seed)
        return variant, system_prompt(variant, self.domain, self.task, self.formats())


def read_episodes(data_dir: Path, domain: str, pool: str = "train") -> Iterator[Episode]:
    """The episodes of one pool of one domain, by trajectory_id (streamed from DuckDB)."""
    # The scrubbed tables (same schema as the raw ones): no secret or personal datum is
    # rendered into a corpus, a model or a release.
    paths = {t: partition_path(data_dir, t, domain)
             for t in ("trajectory_split", "scrubbed_trajectories", "scrubbed_turns",
                       "turn_labels")}
    missing = [str(p) for p in paths.values() if not p.exists()]
    if missing:
        raise FileNotFoundError(f"{domain}: missing tables {missing}")
    con = duckdb.connect()
    try:
        params = {"pool": pool, "split": str(paths["trajectory_split"]),
                  "trajectories": str(paths["scrubbed_trajectories"]),
                  "turns": str(paths["scrubbed_turns"]), "labels": str(paths["turn_labels"])}
        reader = con.sql(load_sql(__file__, "episodes.sql"), params=params).to_arrow_reader(2048)
        current: list[dict] = []
        for batch in reader:
            for row in batch.to_pylist():
                if current and row["trajectory_id"] != current[0]["trajectory_id"]:
                    yield _episode(domain, current)
                    current = []
                current.append(row)
        if current:
            yield _episode(domain, current)
    finally:
        con.close()


def first_episodes(data_dir: Path, domain: str, limit: int | None, pool: str = "train"
                   ) -> Iterator[Episode]:
    """The first `limit` episodes of a pool (all when None): trajectory ids are content
    hashes, so the first ones are an unbiased, stable sample."""
    return itertools.islice(read_episodes(data_dir, domain, pool), limit)


def _episode(domain: str, rows: list[dict]) -> Episode:
    steps = tuple(Step(r["turn_index"], r["action"] or "", r["observation"] or "",
                       r["observation_format"] or "", r["category"], float(r["loss_weight"]),
                       r["exit_code"], r["is_error"], r["action_kind"] or "",
                       r["tool_name"] or "") for r in rows)
    return Episode(rows[0]["trajectory_id"], domain, rows[0]["task"] or "", steps)


def messages(system: str, steps: tuple[Step, ...] | list[Step], current_action: str | None
             ) -> list[dict[str, str]]:
    """System, the steps replayed (user = action, assistant = observation), then the current
    action as the last user message when given (the bench's layout, raw texts)."""
    return conversation(system, ((s.action, s.observation) for s in steps), current_action)


def weighted_segments(episode: Episode, system: str, action_weight: float = 1.0
                      ) -> list[tuple[str, float]]:
    """The episode's chat text (as the chat template writes it, then <eos>) in weighted
    pieces; a token takes the weight of the piece it starts in."""
    pieces = [(f"<|system|>{system}{END}", action_weight)]
    for step in episode.steps:
        pieces.append((f"<|user|>{step.action}{END}", action_weight))
        pieces.append((f"<|assistant|>{step.observation}{END}", step.loss_weight))
    pieces.append((EOS, action_weight))
    return pieces
