"""Trajectory validation: how surprising is each real observation to a world model?

Every turn is scored by the mean negative log-likelihood (nats a token) the model gives its
observation's tokens after the system prompt, the history and the action, in the chat layout
the model was trained on (render.messages through the model's own chat template; the
observation is the assistant message "**Environment Observation:**\\n<observation>", and only
the observation's own tokens count). A trajectory is read in one forward pass when it fits
`max_tokens`, else in windows of whole turns (each window repeats the system prompt and the
turn before its first scored one as context), so each token is scored about once.

Scores are normalised per domain (z = (nll - domain mean) / domain standard deviation: a
terminal dump and a GUI tree are not equally predictable) and turns with z >= `z_threshold`
are flagged as outliers. A swapped-in observation, a truncated log, an environment answering
another action: the seeds' "trajectory validation / anomaly detection" use of a world model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from statistics import fmean, pstdev
from typing import Any

import pyarrow as pa
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerFast

from training.render import Episode, message_pieces, messages

SCORE_SCHEMA = pa.schema([
    ("trajectory_id", pa.string()), ("domain", pa.string()), ("turn_index", pa.int32()),
    ("observation_tokens", pa.int32()), ("nll", pa.float64()), ("z", pa.float64()),
    ("outlier", pa.bool_()),
])


@dataclass(frozen=True)
class ValidateConfig:
    """Window size in tokens, the outlier threshold, the system prompt variant seed."""

    max_tokens: int = 2048
    z_threshold: float = 3.0
    seed: int = 0

    def __str__(self) -> str:
        return f"w{self.max_tokens}_z{self.z_threshold:g}_seed{self.seed}"


@dataclass
class ValidateStats:
    """Counts kept while scoring."""

    trajectories: int = 0
    turns: int = 0
    empty_observations: int = 0  # nothing to score: not in the table
    windows: int = 0
    tokens: int = 0
    per_domain: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class _Turn:
    """One message's tokens, and for an observation which of them are its own text."""

    ids: list[int]
    scored: tuple[int, int] | None = None  # [start, end) of the observation's tokens
    turn_index: int | None = None


def _tokenized(tokenizer: PreTrainedTokenizerFast, episode: Episode, system: str
               ) -> tuple[_Turn, list[tuple[_Turn, _Turn]]]:
    """The system message and each turn's (action, observation) messages as token ids."""
    chat = messages(system, episode, 0, None)
    pieces = message_pieces(tokenizer, chat)
    encoded = tokenizer(pieces, add_special_tokens=False, return_offsets_mapping=True)
    turns = []
    for k, step in enumerate(episode.steps):
        user, assistant = 1 + 2 * k, 2 + 2 * k
        piece = pieces[assistant]
        start = piece.rfind(step.observation) if step.observation else -1
        scored = None
        if start >= 0:
            end = start + len(step.observation)
            inside = [i for i, (a, _) in enumerate(encoded["offset_mapping"][assistant])
                      if start <= a < end]
            scored = (inside[0], inside[-1] + 1) if inside else None
        turns.append((_Turn(encoded["input_ids"][user]),
                      _Turn(encoded["input_ids"][assistant], scored, step.turn_index)))
    return _Turn(encoded["input_ids"][0]), turns


def _windows(system: _Turn, turns: list[tuple[_Turn, _Turn]], max_tokens: int
             ) -> Iterator[list[_Turn]]:
    """Windows of whole turns under max_tokens; each scored turn is scored in one window."""
    window, size, first = [system], len(system.ids), True
    for k, (action, observation) in enumerate(turns):
        cost = len(action.ids) + len(observation.ids)
        if not first and size + cost > max_tokens:
            yield window
            previous = turns[k - 1]
            context = [_Turn(previous[0].ids), _Turn(previous[1].ids)]  # context, not scored
            window = [system, *context]
            size = len(system.ids) + sum(len(t.ids) for t in context)
        window += [action, observation]
        size += cost
        first = False
    yield window


@torch.inference_mode()
def _window_nll(model: PreTrainedModel, window: list[_Turn], max_tokens: int
                ) -> list[tuple[int, float, int]]:
    """(turn_index, mean NLL, tokens) of each scored observation in one forward pass; a window
    still over max_tokens (one huge turn) keeps its last max_tokens tokens."""
    ids: list[int] = []
    spans = []
    for turn in window:
        if turn.scored is not None:
            spans.append((turn.turn_index, len(ids) + turn.scored[0], len(ids) + turn.scored[1]))
        ids += turn.ids
    cut = max(0, len(ids) - max_tokens)
    tensor = torch.tensor([ids[cut:]], device=model.device)
    logits = model(input_ids=tensor).logits[0].float()
    # token t is predicted by position t - 1
    token_nll = torch.nn.functional.cross_entropy(logits[:-1], tensor[0, 1:], reduction="none")
    out = []
    for turn_index, start, end in spans:
        start, end = max(start - cut, 1), end - cut
        if end > start:
            out.append((turn_index, float(token_nll[start - 1:end - 1].mean()), end - start))
    return out


def score_episode(model: PreTrainedModel, tokenizer: PreTrainedTokenizerFast, episode: Episode,
                  config: ValidateConfig, stats: ValidateStats) -> list[dict[str, Any]]:
    """One row per turn with an observation: trajectory, domain, turn, tokens, mean NLL."""
    _, system = episode.system(config.seed)
    system_turn, turns = _tokenized(tokenizer, episode, system)
    rows = []
    for window in _windows(system_turn, turns, config.max_tokens):
        stats.windows += 1
        stats.tokens += sum(len(t.ids) for t in window)
        for turn_index, nll, tokens in _window_nll(model, window, config.max_tokens):
            rows.append({"trajectory_id": episode.trajectory_id, "domain": episode.domain,
                         "turn_index": turn_index, "observation_tokens": tokens, "nll": nll})
    stats.trajectories += 1
    stats.turns += len(episode.steps)
    stats.empty_observations += len(episode.steps) - len(rows)
    stats.per_domain[episode.domain] = stats.per_domain.get(episode.domain, 0) + len(rows)
    return rows


def normalise(rows: Sequence[dict[str, Any]], z_threshold: float) -> list[dict[str, Any]]:
    """Rows with z (per domain) and the outlier flag, most surprising first."""
    by_domain: dict[str, list[float]] = {}
    for row in rows:
        by_domain.setdefault(row["domain"], []).append(row["nll"])
    moments = {d: (fmean(v), pstdev(v)) for d, v in by_domain.items()}
    out = []
    for row in rows:
        mean, spread = moments[row["domain"]]
        z = (row["nll"] - mean) / spread if spread > 0 else 0.0
        out.append({**row, "z": z, "outlier": z >= z_threshold})
    return sorted(out, key=lambda r: (-r["z"], r["trajectory_id"], r["turn_index"]))


def validate(model: PreTrainedModel, tokenizer: PreTrainedTokenizerFast,
             episodes: Iterable[Episode], config: ValidateConfig = ValidateConfig(),
             stats: ValidateStats | None = None) -> list[dict[str, Any]]:
    """Score every turn of the episodes; rows sorted by z, outliers flagged."""
    stats = stats if stats is not None else ValidateStats()
    model.eval()
    rows = [row for episode in episodes
            for row in score_episode(model, tokenizer, episode, config, stats)]
    if not rows:
        raise ValueError("no observation to score in the trajectories given")
    return normalise(rows, config.z_threshold)


def domain_table(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per domain: turns, mean and spread of the NLL, outliers."""
    table = []
    for domain in sorted({r["domain"] for r in rows}):
        mine = [r for r in rows if r["domain"] == domain]
        nll = [r["nll"] for r in mine]
        table.append({"domain": domain, "turns": len(mine), "mean_nll": round(fmean(nll), 3),
                      "std_nll": round(pstdev(nll), 3),
                      "perplexity": round(math.exp(fmean(nll)), 1),
                      "outliers": sum(r["outlier"] for r in mine)})
    return table
