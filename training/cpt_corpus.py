"""cpt_corpus: train episodes as chat text, tokenized, weighted per token, packed.

Each train episode becomes its chat text (render.weighted_segments: system prompt with the task,
then user = action, assistant = observation, then <eos>), tokenized once with offsets; a token
takes the loss weight of the piece of text its first character is in. The pieces end at special
tokens (<|end|>, <eos>), which the tokenizer never merges with their neighbours, so no token
straddles two turns and the weights change exactly at turn boundaries. Episodes are then packed
back to back into rows of `seq_len` tokens (the last row of a domain may be shorter; episodes
longer than a row continue in the next one), each row listing the episodes it holds.

Knowledge mix (off by default): with `knowledge_path` (any local text dataset, see
training/knowledge.py) and `knowledge_ratio` r, documents are interleaved between the episodes
of every domain so that about a share r of each domain's tokens is knowledge text (after each
episode, documents are added while knowledge < r / (1 - r) x trajectory tokens; the documents
are read once, in order, across the domains, so none repeats). A document is tokenized with
the same tokenizer, ends with its eos token, weighs `knowledge_weight`, and is listed in
`trajectory_ids` as "knowledge:<source>".

`max_tokens_per_domain` bounds the corpus (default 120K tokens a domain, about 0.85M in all:
more than a small model sees in a CPU run, and tokenizing stays a few seconds); episodes are
taken in trajectory_id order (a content hash, so an unbiased sample) until the budget is
reached, the last one whole. None takes every train episode.

Output: {data}/cpt_corpus/domain={d}/part-0.parquet (CONTRACTS): input_ids list<int32>,
loss_weights list<float32>, trajectory_ids list<string>, domain.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from transformers import PreTrainedTokenizerFast

from quality.tables import TRAJECTORY_SPLIT
from sources.storage import ParquetSink
from training.knowledge import read_texts
from training.render import Episode, read_episodes, weighted_segments
from training.tables import CPT_CORPUS


@dataclass(frozen=True)
class CptCorpusConfig:
    """Packed row length, the weight of non-observation text, the prompt-variant seed."""

    seq_len: int = 512
    action_weight: float = 1.0
    seed: int = 0
    max_tokens_per_domain: int | None = 120_000
    knowledge_path: str | None = None
    knowledge_ratio: float = 0.0  # share of each domain's tokens that is knowledge text
    knowledge_weight: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.knowledge_ratio < 1.0:
            raise ValueError(f"knowledge_ratio must be in [0, 1), got {self.knowledge_ratio}")
        if self.knowledge_ratio and not self.knowledge_path:
            raise ValueError("knowledge_ratio > 0 needs a knowledge_path")

    def __str__(self) -> str:
        mix = (f"_know{self.knowledge_ratio:g}-{Path(self.knowledge_path).stem}"
               if self.knowledge_ratio else "")
        return (f"seq{self.seq_len}_aw{self.action_weight:g}_seed{self.seed}"
                f"_max{self.max_tokens_per_domain or 'all'}{mix}")


@dataclass
class CptCorpusStats:
    """Counts per domain, recorded while packing."""

    config: str = ""
    rows: dict[str, int] = field(default_factory=dict)
    trajectories: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    weighted_tokens: dict[str, float] = field(default_factory=dict)  # sum of weights
    knowledge_documents: dict[str, int] = field(default_factory=dict)
    knowledge_tokens: dict[str, int] = field(default_factory=dict)  # included in `tokens`

    def table(self) -> list[dict]:
        rows = []
        for d in sorted(self.rows):
            row = {"domain": d, "rows": self.rows[d], "trajectories": self.trajectories[d],
                   "tokens": self.tokens[d],
                   "mean_weight": round(self.weighted_tokens[d] / max(self.tokens[d], 1), 3)}
            if self.knowledge_documents:  # only with a knowledge mix: the default table as is
                row |= {"knowledge_documents": self.knowledge_documents[d],
                        "knowledge_tokens": self.knowledge_tokens[d]}
            rows.append(row)
        return rows


def token_weights(tokenizer: PreTrainedTokenizerFast, pieces: list[tuple[str, float]]
                  ) -> tuple[list[int], np.ndarray]:
    """Token ids of the joined pieces and each token's weight (the piece its start is in)."""
    text = "".join(piece for piece, _ in pieces)
    encoded = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    ends = np.cumsum([len(piece) for piece, _ in pieces])
    weights = np.array([w for _, w in pieces], dtype=np.float32)
    starts = np.array([start for start, _ in encoded["offset_mapping"]], dtype=np.int64)
    return encoded["input_ids"], weights[np.searchsorted(ends, starts, side="right")]


def episode_tokens(tokenizer: PreTrainedTokenizerFast, episode: Episode, config: CptCorpusConfig
                   ) -> tuple[list[int], np.ndarray]:
    """Token ids and weights of one episode's chat text."""
    _, system = episode.system(config.seed)
    return token_weights(tokenizer, weighted_segments(episode, system, tokenizer,
                                                         config.action_weight))


def pack(episodes: Iterator[tuple[str, list[int], np.ndarray]], seq_len: int
         ) -> Iterator[tuple[list[int], list[float], list[str]]]:
    """Rows of seq_len tokens from (id, tokens, weights) episodes, back to back."""
    ids: list[int] = []
    weights: list[float] = []
    owners: list[str] = []
    for trajectory_id, tokens, token_w in episodes:
        position = 0
        while position < len(tokens):
            take = min(seq_len - len(ids), len(tokens) - position)
            ids += tokens[position:position + take]
            weights += token_w[position:position + take].tolist()
            if not owners or owners[-1] != trajectory_id:
                owners.append(trajectory_id)
            position += take
            if len(ids) == seq_len:
                yield ids, weights, owners
                ids, weights, owners = [], [], []
    if ids:
        yield ids, weights, owners


def knowledge_documents(tokenizer: PreTrainedTokenizerFast, path: Path, weight: float = 1.0
                        ) -> Iterator[tuple[str, list[int], np.ndarray]]:
    """A knowledge dataset's documents as (id, tokens + eos, weights), in order."""
    eos = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    for source, text in read_texts(Path(path)):
        tokens = tokenizer(text, add_special_tokens=False)["input_ids"] + eos
        yield f"knowledge:{source}", tokens, np.full(len(tokens), weight, dtype=np.float32)


def knowledge_rows(tokenizer: PreTrainedTokenizerFast, path: Path, tokens: int, seq_len: int,
                   weight: float = 1.0) -> list[dict]:
    """Packed rows (input_ids, loss_weights) of the first documents holding `tokens` tokens
    (whole documents): knowledge added to an existing corpus (the ablation's mix variant)."""
    taken = 0

    def documents() -> Iterator[tuple[str, list[int], np.ndarray]]:
        nonlocal taken
        for document in knowledge_documents(tokenizer, path, weight):
            if taken >= tokens:
                return
            taken += len(document[1])
            yield document

    return [{"input_ids": ids, "loss_weights": weights}
            for ids, weights, _ in pack(documents(), seq_len)]


def build_cpt_corpus(data_dir: Path, tokenizer: PreTrainedTokenizerFast, domains: Sequence[str],
                     config: CptCorpusConfig = CptCorpusConfig()) -> CptCorpusStats:
    """Write cpt_corpus for every domain with a split; return counts per domain."""
    stats = CptCorpusStats(config=str(config))
    documents = (knowledge_documents(tokenizer, Path(config.knowledge_path),
                                     config.knowledge_weight)
                 if config.knowledge_ratio else iter(()))
    share = config.knowledge_ratio / (1 - config.knowledge_ratio)  # knowledge per episode token
    for domain in domains:
        if not TRAJECTORY_SPLIT.path(data_dir, domain).exists():
            continue
        stats.rows[domain] = stats.trajectories[domain] = stats.tokens[domain] = 0
        stats.weighted_tokens[domain] = 0.0
        if config.knowledge_ratio:
            stats.knowledge_documents[domain] = stats.knowledge_tokens[domain] = 0

        def tokenized(domain: str = domain) -> Iterator[tuple[str, list[int], np.ndarray]]:
            episode_tokens_seen = 0
            for episode in read_episodes(data_dir, domain, "train"):
                if config.max_tokens_per_domain is not None and (
                        stats.tokens[domain] >= config.max_tokens_per_domain):
                    break
                tokens, weights = episode_tokens(tokenizer, episode, config)
                stats.trajectories[domain] += 1
                stats.tokens[domain] += len(tokens)
                stats.weighted_tokens[domain] += float(weights.sum())
                episode_tokens_seen += len(tokens)
                yield episode.trajectory_id, tokens, weights
                while (config.knowledge_ratio
                       and stats.knowledge_tokens[domain] < share * episode_tokens_seen
                       and (document := next(documents, None)) is not None):
                    stats.knowledge_documents[domain] += 1
                    stats.knowledge_tokens[domain] += len(document[1])
                    stats.tokens[domain] += len(document[1])
                    stats.weighted_tokens[domain] += float(document[2].sum())
                    yield document

        with ParquetSink(CPT_CORPUS.path(data_dir, domain), CPT_CORPUS.schema) as sink:
            for ids, weights, owners in pack(tokenized(), config.seq_len):
                sink.write({"input_ids": ids, "loss_weights": weights,
                            "trajectory_ids": owners, "domain": domain})
                stats.rows[domain] += 1
    return stats
