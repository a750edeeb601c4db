"""Model output -> predicted observation, the way the official evaluation reads it.

1. Thinking is dropped: every closed `<think>...</think>` block, and everything up to a lone
   `</think>` (chat templates that open the think block in the prompt leave only its end).
2. The prediction is the content of the LAST complete
   `<predicted_observation>...</predicted_observation>` block (a model that drafts and then
   corrects itself is judged on its final answer).
3. The "**Environment Observation:**" marker is removed from its start (the benchmark's
   responses carry it; a model trained on them may repeat it).

Output without a complete block is *malformed*: `observation` is None and `fallback` holds the
text (thinking removed, a dangling open tag dropped) that a judge can still read. The rubric
gives it format 1 (and caps GUI samples); the RL reward gives it 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sources.readers.agentworldbench import OBSERVATION_MARKER, strip_observation

OPEN_TAG = "<predicted_observation>"
CLOSE_TAG = "</predicted_observation>"
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL)
_UNCLOSED_THINK = re.compile(r"<think>.*\Z", re.DOTALL)
_BLOCK = re.compile(re.escape(OPEN_TAG) + r"(.*?)" + re.escape(CLOSE_TAG), re.DOTALL)


@dataclass(frozen=True)
class ParsedPrediction:
    """The predicted observation (None when malformed) and what a judge reads otherwise."""

    observation: str | None
    malformed: bool
    fallback: str = ""
    n_blocks: int = 0

    @property
    def judged_text(self) -> str:
        """What the judges score: the observation, or the fallback text when malformed."""
        return self.observation if self.observation is not None else self.fallback


def strip_thinking(text: str) -> str:
    """The text without its reasoning: closed think blocks, a lone `</think>` prefix, and an
    unclosed `<think>` to the end (a model cut off while thinking predicted nothing)."""
    text = _THINK_BLOCK.sub("", text)
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    return _UNCLOSED_THINK.sub("", text)


def clean_observation(text: str) -> str:
    """A block's content without the observation marker and the one newline after the open tag
    and before the close tag (what `format_prediction` puts there), so the round trip is exact."""
    text = text.removeprefix("\n").removesuffix("\n")
    if text.lstrip().startswith(OBSERVATION_MARKER):
        text = strip_observation(text)
    return text


def parse_prediction(text: str) -> ParsedPrediction:
    """Parse raw model output (see the module docstring for the rules)."""
    visible = strip_thinking(text or "")
    blocks = _BLOCK.findall(visible)
    if blocks:
        return ParsedPrediction(clean_observation(blocks[-1]), False, n_blocks=len(blocks))
    fallback = visible.replace(OPEN_TAG, "").replace(CLOSE_TAG, "")
    return ParsedPrediction(None, True, fallback=clean_observation(fallback.strip()))


def format_prediction(observation: str, thinking: str = "") -> str:
    """The target text a world model emits: optional thinking, then one observation block."""
    think = f"<think>\n{thinking}\n</think>\n" if thinking else ""
    return f"{think}{OPEN_TAG}\n{observation}\n{CLOSE_TAG}"
