"""Trajectory validation: how surprising is each real observation to a world model?

Every turn is scored by the mean negative log-likelihood (nats a token) the model gives its
observation's tokens after the system prompt, the history and the action, in the chat layout
the model was trained on (render.messages through the model's own chat template; the
observation is the assistant message "**Environment Observation:**\\n<observation>", and only
the observation's own tokens count). A trajectory is read in one forward pass when it fits
`max_tokens`, else in windows of whole turns (each window repeats the system prompt and the
turn before its first scored one as context), so each token is scored about once.

With `score="contrast"` each observation is also scored with its history and action left out
(the system prompt, an empty user message, the observation: `nll_alone`), and the turn is
ranked by `contrast = nll - nll_alone`, how little its own context explains it (a pointwise
mutual information, negated). The NLL ranks texts that are hard in themselves (a long listing,
random ids, garbage) on top, whether or not they answer their action; the contrast cancels
what the text costs on its own, so a well-formed observation answering another action rises,
while garbage (as costly in context as out of it) does not. The NLL is the default: on the
real base it found as many swapped observations (README, "Trajectory validation").

Scores are normalised per domain (z = (score - domain mean) / domain standard deviation: a
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
    ("observation_tokens", pa.int32()), ("nll", pa.float64()),
    ("nll_alone", pa.float64()),  # null unless score == "contrast"
    ("contrast", pa.float64()),  # nll - nll_alone; null unless score == "contrast"
    ("score", pa.string()), ("z", pa.float64()), ("outlier", pa.bool_()),
])
SCORES = ("nll", "contrast")


@dataclass(frozen=True)
class ValidateConfig:
    """Window size in tokens, the outlier threshold, the system prompt variant seed, and what
    ranks a turn: its mean NLL, or the contrast with its NLL out of context."""

    max_tokens: int = 2048
    z_threshold: float = 3.0
    seed: int = 0
    score: str = "nll"
    # Score (and show as context) only each observation's first tokens (None: every token):
    # an observation longer than the window would otherwise push its own history and action
    # out of it, and a screen's or a log's head is what its action decides. 32 found the most
    # planted swaps on trajectories it was not chosen on (README, "Trajectory validation":
    # 5 / 14 in the top 5 % against 2 / 14 for the first 256 tokens).
    observation_tokens: int | None = 32

    def __post_init__(self) -> None:
        if self.score not in SCORES:
            raise ValueError(f"score {self.score!r} is not one of {SCORES}")
        if self.observation_tokens is not None and self.observation_tokens < 1:
            raise ValueError(f"observation_tokens must be at least 1 or None (every token), "
                             f"not {self.observation_tokens}")

    def __str__(self) -> str:
        head = f"_o{self.observation_tokens}" if self.observation_tokens else ""
        return f"{self.score}_w{self.max_tokens}{head}_z{self.z_threshold:g}_seed{self.seed}"


@dataclass
class ValidateStats:
    """Counts kept while scoring."""

    trajectories: int = 0
    turns: int = 0
    empty_observations: int = 0  # nothing to score: not in the table
    windows: int = 0
    tokens: int = 0  # every token of every forward pass, context and out of context
    tokens_alone: int = 0  # of them, the out-of-context passes (score == "contrast")
    per_domain: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class _Turn:
    """One message's tokens, and for an observation which of them are its own text."""

    ids: list[int]
    scored: tuple[int, int] | None = None  # [start, end) of the observation's tokens
    turn_index: int | None = None


def _tokenized(tokenizer: PreTrainedTokenizerFast, episode: Episode, system: str,
               observation_tokens: int | None = None) -> tuple[_Turn, list[tuple[_Turn, _Turn]]]:
    """The system message and each turn's (action, observation) messages as token ids, each
    observation cut after its first `observation_tokens` tokens when given."""
    pieces = message_pieces(tokenizer, messages(system, episode, 0, None))
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
        ids = encoded["input_ids"][assistant]
        if scored is not None and observation_tokens is not None:
            scored = (scored[0], min(scored[1], scored[0] + observation_tokens))
            ids = ids[:scored[1]]
        turns.append((_Turn(encoded["input_ids"][user]), _Turn(ids, scored, step.turn_index)))
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


def _empty_user(tokenizer: PreTrainedTokenizerFast, system: str) -> _Turn:
    """An empty user message as the template writes it after the system message: what stands
    in for the history and the action when an observation is scored out of context."""
    chat = [{"role": "system", "content": system}, {"role": "user", "content": ""}]
    return _Turn(tokenizer(message_pieces(tokenizer, chat)[1], add_special_tokens=False)
                 ["input_ids"])


def _alone_nll(model: PreTrainedModel, system: _Turn, empty_user: _Turn,
               turns: list[tuple[_Turn, _Turn]], config: ValidateConfig, stats: ValidateStats
               ) -> dict[int, float]:
    """Each scored observation's mean NLL out of context: system, empty user, observation
    (one pass a turn; past max_tokens it keeps its last tokens, as a window does)."""
    out = {}
    for _, observation in turns:
        if observation.scored is None:
            continue
        window = [system, empty_user, observation]
        tokens = sum(len(t.ids) for t in window)
        stats.tokens, stats.tokens_alone = stats.tokens + tokens, stats.tokens_alone + tokens
        for turn_index, nll, _ in _window_nll(model, window, config.max_tokens):
            out[turn_index] = nll
    return out


def score_episode(model: PreTrainedModel, tokenizer: PreTrainedTokenizerFast, episode: Episode,
                  config: ValidateConfig, stats: ValidateStats) -> list[dict[str, Any]]:
    """One row per turn with an observation: trajectory, domain, turn, tokens, mean NLL (and
    out of context, with the contrast, when config.score is "contrast")."""
    _, system = episode.system(config.seed)
    system_turn, turns = _tokenized(tokenizer, episode, system, config.observation_tokens)
    rows = []
    for window in _windows(system_turn, turns, config.max_tokens):
        stats.windows += 1
        stats.tokens += sum(len(t.ids) for t in window)
        for turn_index, nll, tokens in _window_nll(model, window, config.max_tokens):
            rows.append({"trajectory_id": episode.trajectory_id, "domain": episode.domain,
                         "turn_index": turn_index, "observation_tokens": tokens, "nll": nll,
                         "nll_alone": None, "contrast": None, "score": config.score})
    if config.score == "contrast":
        alone = _alone_nll(model, system_turn, _empty_user(tokenizer, system), turns, config,
                           stats)
        for row in rows:
            row["nll_alone"] = alone[row["turn_index"]]
            row["contrast"] = row["nll"] - row["nll_alone"]
    stats.trajectories += 1
    stats.turns += len(episode.steps)
    stats.empty_observations += len(episode.steps) - len(rows)
    stats.per_domain[episode.domain] = stats.per_domain.get(episode.domain, 0) + len(rows)
    return rows


def normalise(rows: Sequence[dict[str, Any]], z_threshold: float, score: str = "nll"
              ) -> list[dict[str, Any]]:
    """Rows with z of `score` (per domain) and the outlier flag, most surprising first."""
    by_domain: dict[str, list[float]] = {}
    for row in rows:
        by_domain.setdefault(row["domain"], []).append(row[score])
    moments = {d: (fmean(v), pstdev(v)) for d, v in by_domain.items()}
    out = []
    for row in rows:
        mean, spread = moments[row["domain"]]
        z = (row[score] - mean) / spread if spread > 0 else 0.0
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
    return normalise(rows, config.z_threshold, config.score)


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
