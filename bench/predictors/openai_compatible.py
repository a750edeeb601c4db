"""openai_compatible: any OpenAI-compatible chat endpoint (vLLM, SGLang, `worldtrace serve`).

Samples go out in the official message layout, at most `concurrency` at a time, each with
retries and backoff (bench.endpoint). Runs resume: every finished sample is appended to a JSONL
cache keyed by sample id (bench.result_cache), and a rerun asks only for what is missing. A
sample that still fails is reported after the others finished (and were cached), so a rerun
picks up exactly the failures. A prompt the endpoint rejects as longer than the model's context
fails that sample, as in the released evaluation (nothing is dropped to make it fit): its output
is empty and the reason is in `failures` (sample id -> why).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from bench.concurrency import run_concurrently
from bench.endpoint import ChatEndpoint, EndpointConfig, EndpointError, error_code
from bench.official import OFFICIAL_MAX_TOKENS, REFERENCE_TEMPERATURE, chat_messages
from bench.predictors.base import PredictorContext
from bench.result_cache import ResultCache, content_hash, fingerprint
from bench.sample import BenchSample


@dataclass(frozen=True)
class OpenAICompatibleConfig:
    """The endpoint, the sampling settings sent with each request, and the resume cache."""

    endpoint: EndpointConfig
    temperature: float = REFERENCE_TEMPERATURE
    top_p: float | None = None
    max_tokens: int = OFFICIAL_MAX_TOKENS
    seed: int | None = 0
    cache_dir: Path | None = None  # None: nothing kept, every run asks everything

    def request_settings(self) -> dict:
        settings = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.top_p is not None:
            settings["top_p"] = self.top_p
        if self.seed is not None:
            settings["seed"] = self.seed
        return settings


@dataclass
class PredictStats:
    """Counters kept as predictions run (the endpoint keeps request-level ones)."""

    samples: int = 0
    cached: int = 0
    asked: int = 0
    over_context: int = 0  # samples the endpoint rejected as longer than the model's context
    failed: int = 0
    seconds: float = 0.0


class PredictionFailures(RuntimeError):
    """Some samples failed after retries; the rest are cached, so a rerun resumes."""


@dataclass
class OpenAICompatiblePredictor:
    config: OpenAICompatibleConfig
    stats: PredictStats = field(default_factory=PredictStats)

    def __post_init__(self) -> None:
        self.failures: dict[str, str] = {}
        self.on_done: Callable[[int], None] | None = None  # progress: samples finished
        self.endpoint = ChatEndpoint(self.config.endpoint)
        self.name = f"openai_compatible:{self.endpoint.model}"
        settings = {"model": self.endpoint.model, **self.config.request_settings()}
        self.cache_path = None if self.config.cache_dir is None else \
            Path(self.config.cache_dir) / f"{_slug(self.name)}.jsonl"
        self.cache = ResultCache(self.cache_path, fingerprint(settings))

    @classmethod
    def from_spec(cls, argument: str | None, context: PredictorContext) -> Self:
        """`openai_compatible:BASE_URL` (e.g. http://127.0.0.1:8000/v1); finished samples are
        kept in context.cache_dir, else {data_dir}/bench_cache/ when a data dir is given."""
        if not argument:
            raise ValueError("openai_compatible needs a base URL: openai_compatible:URL")
        endpoint = EndpointConfig(argument, model=context.model, timeout_s=context.timeout_s,
                                  concurrency=context.concurrency)
        cache_dir = context.cache_dir or (
            None if context.data_dir is None else Path(context.data_dir) / "bench_cache")
        return cls(OpenAICompatibleConfig(endpoint, temperature=context.temperature,
                                          max_tokens=context.max_new_tokens, seed=context.seed,
                                          cache_dir=cache_dir))

    def predict(self, samples: Sequence[BenchSample]) -> list[str]:
        start = time.perf_counter()
        outputs: list[str | None] = [None] * len(samples)
        todo = []
        for i, sample in enumerate(samples):
            messages = chat_messages(sample)
            cached = self.cache.get(sample.id, content_hash(messages))
            if cached is not None:
                outputs[i] = cached
            else:
                todo.append((i, sample, messages))
        self.stats.samples += len(samples)
        self.stats.cached += len(samples) - len(todo)
        if self.on_done is not None and len(samples) > len(todo):
            self.on_done(len(samples) - len(todo))
        errors = self._ask_all(todo, outputs)
        self.stats.seconds += time.perf_counter() - start
        if errors:
            raise PredictionFailures(
                f"{len(errors)} of {len(samples)} samples failed at "
                f"{self.config.endpoint.base_url} (the others are cached in "
                f"{self.cache_path}; rerun to resume): " + "; ".join(errors[:5]))
        return outputs  # type: ignore[return-value]  (every slot filled when none failed)

    def _ask_all(self, todo: list, outputs: list[str | None]) -> list[str]:
        results = run_concurrently(lambda job: self._ask(job[1], job[2]), todo,
                                   self.config.endpoint.concurrency, expected=(EndpointError,),
                                   on_done=self.on_done)
        errors: list[str] = []
        for (i, sample, _), result in zip(todo, results, strict=True):
            if isinstance(result, EndpointError):
                self.stats.failed += 1
                errors.append(f"{sample.id}: {result}")
            else:
                outputs[i], reason = result
                self.stats.asked += 1
                if reason:
                    self.stats.over_context += 1
                    self.failures[sample.id] = reason
        return errors

    def _ask(self, sample: BenchSample, messages: list[dict[str, str]]) -> tuple[str, str]:
        """One sample's prediction (cached as soon as it arrives), or "" and why when the
        endpoint says the prompt is longer than the model's context (not cached: a rerun
        against a larger model asks again)."""
        try:
            text = self.endpoint.complete(messages, **self.config.request_settings())
        except EndpointError as error:
            if error_code(error) != "context_length_exceeded":
                raise
            return "", f"prompt over the model's context: {error}"
        self.cache.put(sample.id, content_hash(messages), text)
        return text, ""


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")
