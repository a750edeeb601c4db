"""Trajectories of one pool as episodes, and episodes as chat messages and weighted text.

An `Episode` is a trajectory with its turns (action, observation, observation format) and each
turn's category and loss weight from turn_labels, read in a stable order (trajectory_id, then
turn_index) one trajectory at a time. The chat layout is the one the tokenizer's chat template
writes (tokenizer.CHAT_TEMPLATE): `<|role|>content<|end|>` per message, a world-model system
prompt (one of the 10 variants, with the task), then the history replayed exactly as the bench
sends it (`bench.official`: user = "### Turn N\n**Action:**\n<action>", GUI turns with the task
and the screen before the action; assistant = "**Environment Observation:**\n<observation>"),
so a trained model sees at bench time the layout it was trained on. Only the system prompt
differs: training draws one of 10 variants so the model does not depend on one wording.

`weighted_segments` cuts that same text into pieces with a loss weight each: the system prompt
and the actions weigh `action_weight` (1.0: the context is text too), an observation (its role
marker and <|end|> included) weighs its turn's loss_weight, so a low-information turn stays in
the text and only counts less. The pieces are what the given tokenizer's chat template writes
for each message (`message_pieces`): ours gives `<|role|>content<|end|>`, a pretrained base's
ChatML `<|im_start|>role\ncontent<|im_end|>\n`, so a corpus built for a base is in its layout.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import duckdb
from transformers import PreTrainedTokenizerFast

from bench.build import initial_state
from bench.official import render_prompt, render_response
from bench.predictors.messages import conversation
from bench.sample import GUI_DOMAINS, BenchSample
from quality.labels import JUDGEABLE
from quality.tables import SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS, TRAJECTORY_SPLIT, TURN_LABELS
from sources.storage import load_sql
from training.prompt_variants import system_prompt, variant_for


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
    initial_state: str = ""  # GUI domains: the screen before the first action

    def formats(self) -> list[str]:
        return [s.observation_format for s in self.steps]

    def system(self, seed: int = 0, key: str | None = None) -> tuple[int, str]:
        """(variant, system prompt), the variant by a stable hash of `key` (default: the id)."""
        variant = variant_for(key or self.trajectory_id, seed)
        return variant, system_prompt(variant, self.domain, self.task, self.formats())

    def bench_sample(self, position: int, system: str) -> BenchSample:
        """The bench sample predicting steps[position] (the whole history before it), as
        bench.build makes one from a bench-pool trajectory."""
        step = self.steps[position]
        return BenchSample(
            domain=self.domain, id=f"{self.trajectory_id}:{step.turn_index}",
            history=[(s.action, s.observation) for s in self.steps[:position]],
            current_action=step.action, reference=step.observation, system_prompt=system,
            turn_idx=position + 1, total_turns=len(self.steps),
            trajectory_id=self.trajectory_id, source="",
            task=self.task if self.domain in GUI_DOMAINS else "",
            initial_state=self.initial_state, category=step.category)

    @cached_property
    def rendered(self) -> tuple[tuple[str, str], ...]:
        """(user, assistant) text of every turn in the bench's layout: turn k's prompt does not
        depend on which later turn is the target, so one rendering serves every prompt."""
        whole = self.bench_sample(len(self.steps) - 1, "")
        return tuple((render_prompt(whole, k + 1), render_response(step.observation))
                     for k, step in enumerate(self.steps))


def read_episodes(data_dir: Path, domain: str, pool: str = "train") -> Iterator[Episode]:
    """The episodes of one pool of one domain, by trajectory_id (streamed from DuckDB)."""
    # The scrubbed tables (same schema as the raw ones): no secret or personal datum is
    # rendered into a corpus, a model or a release.
    tables = (TRAJECTORY_SPLIT, SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS, TURN_LABELS)
    paths = {t.name: t.domain_glob(data_dir, domain) for t in tables}
    missing = [paths[t.name] for t in tables if not t.has(data_dir, domain)]
    if missing:
        raise FileNotFoundError(f"{domain}: missing tables {missing}")
    con = duckdb.connect()
    try:
        params = {"pool": pool, "split": str(paths[TRAJECTORY_SPLIT.name]),
                  "trajectories": str(paths[SCRUBBED_TRAJECTORIES.name]),
                  "turns": str(paths[SCRUBBED_TURNS.name]), "labels": str(paths[TURN_LABELS.name])}
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
    return Episode(rows[0]["trajectory_id"], domain, rows[0]["task"] or "", steps,
                   initial_state(domain, rows[0]["metadata"]))


def messages(system: str, episode: Episode, first: int, target: int | None
             ) -> list[dict[str, str]]:
    """System, turns first..target-1 replayed (bench layout: user = rendered action,
    assistant = rendered observation), then turn `target`'s action as the last user message
    (target None: every turn from `first`, no current action)."""
    end = len(episode.steps) if target is None else target
    current = None if target is None else episode.rendered[target][0]
    return conversation(system, episode.rendered[first:end], current)


def message_pieces(tokenizer: PreTrainedTokenizerFast, chat: list[dict[str, str]]
                   ) -> list[str]:
    """Each message's text as the tokenizer's chat template writes it in the conversation
    (chat[0] is the system message). Templates that render each message on its own (ours,
    ChatML) are rendered once a message; any other is rendered incrementally."""

    def render(part: list[dict[str, str]]) -> str:
        return tokenizer.apply_chat_template(part, tokenize=False)

    head = render(chat[:1])
    pieces = [head] + [render([chat[0], message])[len(head):] for message in chat[1:]]
    if "".join(pieces) == render(chat):
        return pieces
    pieces, before = [], ""
    for k in range(1, len(chat) + 1):
        text = render(chat[:k])
        if not text.startswith(before):
            raise ValueError(f"chat template of {tokenizer.name_or_path} renders earlier "
                             "messages differently once more follow: cannot cut it in pieces")
        pieces.append(text[len(before):])
        before = text
    return pieces


def weighted_segments(episode: Episode, system: str, tokenizer: PreTrainedTokenizerFast,
                      action_weight: float = 1.0) -> list[tuple[str, float]]:
    """The episode's chat text (as the tokenizer's chat template writes it, then its eos token
    unless the template already ends with it) in weighted pieces; a token takes the weight of
    the piece it starts in."""
    chat = messages(system, episode, 0, None)
    pieces = message_pieces(tokenizer, chat)
    weights = [action_weight] + [weight for step in episode.steps
                                 for weight in (action_weight, step.loss_weight)]
    segments = list(zip(pieces, weights, strict=True))
    eos = tokenizer.eos_token or ""
    if eos and not "".join(pieces).rstrip().endswith(eos):
        segments.append((eos, action_weight))
    return segments
