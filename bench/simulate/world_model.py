"""The world model behind a simulated server: a local model folder or an OpenAI-compatible URL.

Both are the bench's own predictors (hf_local, openai_compatible), so the model is sent exactly
what the bench sends: the official message layout of a BenchSample (system prompt of the domain,
each earlier turn as user/assistant, the current request). A local folder may be any Hugging
Face causal-LM folder with a chat template; a prompt longer than `max_prompt_tokens` is fitted
by the predictor (oldest turns first). Calls are answered one at a time (a local model is one
set of weights); a reply not ready by the deadline raises ModelTimeout, and the caller answers
with an error instead of waiting.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from bench.model_folder import NotAModelFolder
from bench.predictors.base import Predictor, PredictorContext, build_predictor, predictor_failures
from bench.sample import BenchSample
from bench.simulate.errors import ModelSetupError


class ModelTimeout(TimeoutError):
    """The model did not reply within the deadline."""


@dataclass(frozen=True)
class WorldModelConfig:
    """Which model, and how it answers (temperature 0: the same session gives the same
    answers)."""

    model: str  # a model folder, or an http(s) URL of an OpenAI-compatible API (…/v1)
    model_name: str | None = None  # the model name sent to a URL (None: the first it lists)
    max_new_tokens: int = 512
    max_prompt_tokens: int | None = None
    temperature: float = 0.0
    timeout_s: float = 120.0
    seed: int = 0

    @property
    def is_url(self) -> bool:
        return self.model.startswith(("http://", "https://"))


def build_world_predictor(config: WorldModelConfig) -> Predictor:
    """The bench predictor for the model (ModelSetupError when it cannot start)."""
    context = PredictorContext(max_new_tokens=config.max_new_tokens,
                               max_prompt_tokens=config.max_prompt_tokens,
                               temperature=config.temperature, model=config.model_name,
                               concurrency=1, timeout_s=config.timeout_s, seed=config.seed)
    if config.is_url:
        return build_predictor(f"openai_compatible:{config.model}", context)
    folder = Path(config.model)
    try:
        return build_predictor(f"hf_local:{folder}", context)
    except NotAModelFolder:
        raise  # names the folder and what it lacks (the loader's own check)
    except (OSError, ValueError) as error:
        raise ModelSetupError(f"{folder}: cannot load the model: {error}") from error


class WorldModel:
    """Predict one observation at a time, within a deadline."""

    def __init__(self, predictor: Predictor, timeout_s: float) -> None:
        self.predictor = predictor
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self.calls = 0
        self.seconds = 0.0

    @classmethod
    def load(cls, config: WorldModelConfig) -> WorldModel:
        return cls(build_world_predictor(config), config.timeout_s)

    @property
    def name(self) -> str:
        return self.predictor.name

    def predict_now(self, sample: BenchSample) -> str:
        """The raw model text for one sample (blocking; one prediction at a time)."""
        with self._lock:
            start = time.perf_counter()
            text = self.predictor.predict([sample])[0]
            self.calls += 1
            self.seconds += time.perf_counter() - start
        if not text:
            reason = predictor_failures(self.predictor).get(sample.id, "an empty reply")
            raise RuntimeError(f"the world model gave no answer: {reason}")
        return text

    async def predict(self, sample: BenchSample) -> str:
        """predict_now in a worker thread; ModelTimeout after `timeout_s` (the generation is
        left to finish in the background; the next call waits for it within its own
        deadline)."""
        try:
            with anyio.fail_after(self.timeout_s):
                return await anyio.to_thread.run_sync(self.predict_now, sample,
                                                      abandon_on_cancel=True)
        except TimeoutError:
            raise ModelTimeout(f"the world model did not answer within {self.timeout_s:g} s"
                               ) from None
