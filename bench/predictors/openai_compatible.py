"""openai_compatible: any OpenAI-compatible chat endpoint (vLLM, SGLang, `worldtrace serve`).

Samples go out in the official message layout, at most `concurrency` at a time, each with
retries and backoff (bench.endpoint). Runs resume: every finished sample is appended to a JSONL
cache keyed by sample id (bench.result_cache), and a rerun asks only for what is missing. A
sample that still fails is reported after the others finished (and were cached), so a rerun
picks up exactly the failures. A prompt the endpoint rejects as too long is retried with its
oldest turns dropped, doubling the number dropped each time.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from bench.concurrency import run_concurrently
from bench.endpoint import ChatEndpoint, EndpointConfig, EndpointError, error_code
from bench.official import chat_messages
from bench.predictors.base import PredictorContext
from bench.predictors.messages import drop_oldest_turns, history_pairs
from bench.result_cache import ResultCache, content_hash, fingerprint
from bench.sample import BenchSample

OFFICIAL_TEMPERATURE = 0.6  # the reference setting of the official evaluation


@dataclass(frozen=True)
class OpenAICompatibleConfig:
    """The endpoint, the sampling settings sent with each request, and the resume cache."""

    endpoint: EndpointConfig
    temperature: float = OFFICIAL_TEMPERATURE
    top_p: float | None = None
    max_tokens: int = 1024
    seed: int | None = 0
    cache_dir: Path | None = None  # None: nothing kept, every run asks everything
    progress: bool = False

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
    trimmed_samples: int = 0
    failed: int = 0
    seconds: float = 0.0


class PredictionFailures(RuntimeError):
    """Some samples failed after retries; the rest are cached, so a rerun resumes."""


@dataclass
class OpenAICompatiblePredictor:
    config: OpenAICompatibleConfig
    stats: PredictStats = field(default_factory=PredictStats)

    def __post_init__(self) -> None:
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
        failures = self._ask_all(todo, outputs)
        self.stats.seconds += time.perf_counter() - start
        if failures:
            raise PredictionFailures(
                f"{len(failures)} of {len(samples)} samples failed at "
                f"{self.config.endpoint.base_url} (the others are cached in "
                f"{self.cache_path}; rerun to resume): " + "; ".join(failures[:5]))
        return outputs  # type: ignore[return-value]  (every slot filled when none failed)

    def _ask_all(self, todo: list, outputs: list[str | None]) -> list[str]:
        results = run_concurrently(lambda job: self._ask(job[1], job[2]), todo,
                                   self.config.endpoint.concurrency, expected=(EndpointError,),
                                   desc=self.name, progress=self.config.progress)
        failures: list[str] = []
        for (i, sample, _), result in zip(todo, results, strict=True):
            if isinstance(result, EndpointError):
                self.stats.failed += 1
                failures.append(f"{sample.id}: {result}")
            else:
                outputs[i], dropped = result
                self.stats.asked += 1
                self.stats.trimmed_samples += dropped > 0
        return failures

    def _ask(self, sample: BenchSample, messages: list[dict[str, str]]) -> tuple[str, int]:
        """One sample's prediction (cached as soon as it arrives) and the turns dropped."""
        dropped = 0
        while True:
            try:
                text = self.endpoint.complete(drop_oldest_turns(messages, dropped),
                                              **self.config.request_settings())
                break
            except EndpointError as error:
                pairs = history_pairs(messages)
                if error_code(error) != "context_length_exceeded" or dropped >= pairs:
                    raise
                dropped = min(pairs, max(1, 2 * dropped))
        self.cache.put(sample.id, content_hash(messages), text)
        return text, dropped


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")
