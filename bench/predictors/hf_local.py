"""hf_local: a local transformers causal-LM folder (e.g. {data}/models/sft_model) as a predictor.

Each sample is sent in the official message layout through the folder's own chat template;
samples of similar length share a padded batch (less padding), and outputs come back in input
order. Deterministic: batch b is generated with seed + b, and the batching depends only on the
samples, so the same samples, model and settings give the same text.

Official by default: the messages are sent whole, and the answer may use what the context
leaves (at most max_new_tokens); a prompt that leaves no room fails that sample, as in the
released evaluation: its output is empty, the reason is in `failures` (sample id -> why) and
`stats.failed_samples`, and the run goes on. With a `max_prompt_tokens` budget (a small model
trained on short prompts; not the official setting) the prompt is fitted to it instead: oldest
turns first, then the left part of the current prompt (a GUI screen alone can be longer than a
tiny model's context); a sample whose system prompt and action alone do not fit fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

import torch

from bench.local_model import LocalChatModel, SamplingSettings
from bench.official import chat_messages
from bench.predictors.base import PredictorContext
from bench.predictors.messages import (
    Messages,
    cut_current_prompt,
    fit_messages,
    history_pairs,
)
from bench.result_cache import content_hash
from bench.sample import BenchSample


@dataclass(frozen=True)
class HfLocalConfig:
    """A model folder and how to generate from it (temperature 0 = greedy)."""

    model_dir: Path
    batch_size: int = 8
    max_new_tokens: int = 1024
    # Prompt budget below the model's context (None, the official setting: the whole prompt,
    # failing when it leaves no room): a model trained on short prompts gains nothing from a
    # longer one and pays for it in time.
    max_prompt_tokens: int | None = None
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    dtype: str = "auto"
    device: str | None = None
    # torch CPU threads (process-wide; None: torch's default). One: on 2 shared cores a tiny
    # model's 70 bench samples took 15 s on 1 thread and 145-580 s on torch's default 2 while
    # another process generated beside it (bench_predictions and bench_rollout run together).
    cpu_threads: int | None = 1


@dataclass
class HfLocalStats:
    """Counters kept as predictions run."""

    samples: int = 0
    batches: int = 0
    trimmed_samples: int = 0  # samples whose oldest turns were dropped to fit the context
    dropped_turns: int = 0
    cut_samples: int = 0  # samples whose current prompt was cut from the left to fit
    failed_samples: int = 0  # samples not generated (prompt over the context or budget)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass
class HfLocalPredictor:
    """Predict with a local model; `model` may be passed in to share one loaded copy."""

    config: HfLocalConfig
    model: LocalChatModel | None = None
    stats: HfLocalStats = field(default_factory=HfLocalStats)

    def __post_init__(self) -> None:
        self.failures: dict[str, str] = {}
        self.fitted: dict[str, str] = {}  # sample id -> hash of the messages sent, when fitted
        self.on_done: Callable[[int], None] | None = None  # progress: samples finished
        if self.model is None:
            self.model = LocalChatModel.load(self.config.model_dir, self.config.dtype,
                                             self.config.device)
        if self.config.cpu_threads and self.model.model.device.type == "cpu":
            torch.set_num_threads(self.config.cpu_threads)
        self.name = f"hf_local:{Path(self.config.model_dir).name}"

    @classmethod
    def from_spec(cls, argument: str | None, context: PredictorContext) -> Self:
        """`hf_local:PATH`, or `hf_local:NAME` for {data_dir}/models/NAME."""
        if not argument:
            raise ValueError("hf_local needs a model folder: hf_local:PATH or hf_local:NAME")
        folder = Path(argument)
        if not folder.exists() and context.data_dir is not None:
            folder = Path(context.data_dir) / "models" / argument
        return cls(HfLocalConfig(folder, max_new_tokens=context.max_new_tokens,
                                 max_prompt_tokens=context.max_prompt_tokens,
                                 temperature=context.temperature, seed=context.seed))

    def predict(self, samples: Sequence[BenchSample]) -> list[str]:
        start = time.perf_counter()
        conversations = []
        for sample in samples:
            messages = chat_messages(sample)
            fitted, reason = self._fit(messages)
            conversations.append(fitted)
            if reason:
                self.failures[sample.id] = reason
            elif fitted != messages:
                self.fitted[sample.id] = content_hash(fitted)
        lengths = [self.model.prompt_tokens(c) if c is not None else 0 for c in conversations]
        order = sorted((i for i, c in enumerate(conversations) if c is not None),
                       key=lambda i: (lengths[i], i))
        outputs: list[str] = [""] * len(samples)
        size = self.config.batch_size
        if self.on_done is not None and conversations.count(None):
            self.on_done(conversations.count(None))  # failed: nothing to generate
        for batch, first in enumerate(range(0, len(order), size)):
            chosen = order[first:first + size]
            results = self.model.generate([conversations[i] for i in chosen],
                                          self._settings(self.config.seed + batch))
            for i, result in zip(chosen, results, strict=True):
                outputs[i] = result.choices[0].text
                self.stats.prompt_tokens += result.prompt_tokens
                self.stats.completion_tokens += result.choices[0].completion_tokens
            self.stats.batches += 1
            if self.on_done is not None:
                self.on_done(len(chosen))
        self.stats.failed_samples += conversations.count(None)
        self.stats.samples += len(samples)
        self.stats.seconds += time.perf_counter() - start
        return outputs

    def _settings(self, seed: int) -> SamplingSettings:
        return SamplingSettings(max_new_tokens=self.config.max_new_tokens,
                                temperature=self.config.temperature, top_p=self.config.top_p,
                                seed=seed)

    def _fit(self, messages: Messages) -> tuple[Messages | None, str]:
        """(what to send, "") or (None, why not). Officially the whole prompt, which must leave
        room to answer; under a `max_prompt_tokens` budget the oldest turns are dropped, then
        the current prompt cut from the left, until it fits."""
        context = self.model.context_length
        budget = self.config.max_prompt_tokens
        if budget is None:
            tokens = self.model.prompt_tokens(messages) if context is not None else 0
            if context is not None and tokens >= context:
                return None, (f"prompt of {tokens} tokens leaves no room in the model's "
                              f"context of {context}")
            return messages, ""
        limit = budget if context is None else min(budget, context - 1)

        def fits(candidate: Messages) -> bool:
            return self.model.prompt_tokens(candidate) <= limit

        fitted, dropped = fit_messages(messages, fits)
        if dropped:
            self.stats.trimmed_samples += 1
            self.stats.dropped_turns += dropped
        if dropped < history_pairs(messages) or fits(fitted):
            return fitted, ""
        cut = cut_current_prompt(fitted, fits)
        self.stats.cut_samples += cut is not None
        return cut, "" if cut is not None else (
            f"system prompt and action alone are over the prompt budget of {limit} tokens")
