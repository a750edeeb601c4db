"""The predictor protocol and the one place that turns a spec string into a predictor.

A predictor returns raw model text per sample (thinking and tags included); parsing is the
evaluation's job (`bench.parsing`), so a predictor is judged on exactly what it emits. A sample
it could not generate (a prompt over the model's context) gets "" and, when the predictor has
a `failures` dict, its reason there (sample id -> why): an empty generation is a failed sample,
as in the released evaluation (`predictor_failures`).

Specs: `name` or `name:argument`, e.g. `copy_last`, `retrieval`, `hf_local:data/models/sft_model`,
`openai_compatible:http://127.0.0.1:8000/v1`. Each implementation is a class with a
`from_spec(argument, context)` classmethod, registered in `PREDICTORS` (the project's one plug-in
mechanism, sources.registry) and imported only when named (so the baselines run without torch or
a network).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from bench.official import OFFICIAL_MAX_TOKENS
from bench.sample import BenchSample
from sources.registry import Registry, UnknownName


@runtime_checkable
class Predictor(Protocol):
    """Anything with a name that maps samples to raw model outputs, one per sample, in order."""

    name: str

    def predict(self, samples: Sequence[BenchSample]) -> list[str]: ...


def predictor_failures(predictor: Predictor) -> dict[str, str]:
    """Why the predictor left samples ungenerated (sample id -> reason; {} when it keeps none)."""
    return dict(getattr(predictor, "failures", {}) or {})


def predictor_fitted(predictor: Predictor) -> dict[str, str]:
    """sample id -> sha256 of the messages sent, for the samples whose prompt the predictor
    fitted to a token budget (hf_local with max_prompt_tokens); {} when it sends them whole."""
    return dict(getattr(predictor, "fitted", {}) or {})


@dataclass(frozen=True)
class PredictorContext:
    """What a predictor may need beyond its own argument.

    data_dir: the worldtrace data directory (retrieval reads the training pool there; a bare
    model name resolves under {data_dir}/models). model: the model name sent to an endpoint.
    cache_dir: where a remote predictor keeps finished samples so a rerun resumes (default
    {data_dir}/bench_cache; neither set: nothing kept).
    """

    data_dir: Path | None = None
    seed: int = 0
    max_new_tokens: int = OFFICIAL_MAX_TOKENS
    max_prompt_tokens: int | None = None  # local models: prompt budget under the context
    temperature: float = 0.0
    model: str | None = None
    concurrency: int = 4
    timeout_s: float = 120.0
    cache_dir: Path | None = None


# name -> "module:Class"; the class has `from_spec(argument: str | None, context) -> Predictor`.
PREDICTORS: Registry[type] = Registry("predictor", {
    "copy_last": "bench.predictors.baselines:CopyLastPredictor",
    "empty": "bench.predictors.baselines:EmptyPredictor",
    "retrieval": "bench.predictors.retrieval:RetrievalPredictor",
    "hf_local": "bench.predictors.hf_local:HfLocalPredictor",
    "openai_compatible": "bench.predictors.openai_compatible:OpenAICompatiblePredictor",
})


class UnknownPredictor(UnknownName):
    """A spec that names no predictor (the message lists the known names)."""


class PredictorSetupError(ValueError):
    """A known predictor that cannot start with what it was given (argument, data folder)."""


def split_spec(spec: str) -> tuple[str, str | None]:
    """`name:argument` -> (name, argument); a URL's own colons stay in the argument."""
    name, _, argument = spec.partition(":")
    return name.strip(), (argument.strip() or None)


def build_predictor(spec: str, context: PredictorContext | None = None) -> Predictor:
    """The predictor a spec names (ValueError listing the known names for an unknown one)."""
    name, argument = split_spec(spec)
    if name not in PREDICTORS.names():
        raise UnknownPredictor("predictor", name, sorted(PREDICTORS.names()))
    predictor = PREDICTORS.get(name).from_spec(argument, context or PredictorContext())
    if not isinstance(predictor, Predictor):
        raise TypeError(f"{PREDICTORS.targets()[name]} does not implement Predictor")
    return predictor
