"""Floors without a model: what a world model must beat to have learned anything.

- copy_last: the observation right before the action, again (GUI: the current screen
  unchanged). Scores well only where the environment really did not change: the Echo Trap.
- empty: an empty but well-formed observation block (format alone, nothing predicted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Self

from bench.parsing import format_prediction
from bench.predictors.base import PredictorContext, PredictorSetupError
from bench.sample import BenchSample


class RulePredictor:
    """A predictor whose observation is a fixed rule of the sample; takes no argument."""

    name: ClassVar[str]

    @classmethod
    def from_spec(cls, argument: str | None, context: PredictorContext) -> Self:
        if argument:
            raise PredictorSetupError(f"predictor {cls.name} takes no argument, got "
                                      f"{argument!r}")
        return cls()

    def observation(self, sample: BenchSample) -> str:
        raise NotImplementedError

    def predict(self, samples: Sequence[BenchSample]) -> list[str]:
        return [format_prediction(self.observation(sample)) for sample in samples]


class CopyLastPredictor(RulePredictor):
    """Predicts the previous observation verbatim."""

    name = "copy_last"

    def observation(self, sample: BenchSample) -> str:
        return sample.last_observation


class EmptyPredictor(RulePredictor):
    """Predicts an empty observation, well formed."""

    name = "empty"

    def observation(self, sample: BenchSample) -> str:
        return ""
