"""One benchmark sample: a real trajectory prefix, the action taken next, the real next observation.

The world model reads `system_prompt`, then the history replayed turn by turn, then
`current_action`, and predicts the observation; `reference` is what the environment really said.
`turn_idx` is the 1-based position of the predicted turn (so `len(history) == turn_idx - 1`),
`total_turns` the length of the whole trajectory. GUI domains (android, web, os) also carry the
task instruction and the screen before the first action (`initial_state`): their prompts show
"**Task Instruction:**" and "**Current State:**" sections (see `bench.official`). A sample read
from an official file keeps that `record`: what a model is sent is its strings, not a rendering.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sources.schema import DOMAINS

GUI_DOMAINS: tuple[str, ...] = ("android", "web", "os")
TEXT_DOMAINS: tuple[str, ...] = tuple(d for d in DOMAINS if d not in GUI_DOMAINS)


@dataclass(frozen=True)
class BenchSample:
    """A teacher-forced one-step prediction task (history is a tuple of (action, observation))."""

    domain: str
    id: str
    history: Sequence[tuple[str, str]]
    current_action: str
    reference: str
    system_prompt: str
    turn_idx: int
    total_turns: int
    trajectory_id: str
    source: str
    task: str = ""
    initial_state: str = ""
    category: str = ""  # the target turn's turn_labels category (informative, error), if known
    # The official record the sample was read from, verbatim (None for samples we built): the
    # messages sent and the judge's prompt are its own strings, and an export writes it back.
    record: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Lists from JSON or Parquet become tuples, so equal samples compare equal.
        object.__setattr__(self, "history", tuple((a, o) for a, o in self.history))
        if self.domain not in DOMAINS:
            raise ValueError(f"sample {self.id}: unknown domain {self.domain!r}")
        if self.turn_idx != len(self.history) + 1:
            raise ValueError(f"sample {self.id}: turn_idx {self.turn_idx} but "
                             f"{len(self.history)} history turns")
        if self.total_turns < self.turn_idx:
            raise ValueError(f"sample {self.id}: total_turns {self.total_turns} < turn_idx "
                             f"{self.turn_idx}")
        if self.record is not None and self.record.get("turn_idx") != self.turn_idx:
            # A copy with another history (dataclasses.replace) must drop the record it no
            # longer matches, or its messages would be the old sample's.
            raise ValueError(f"sample {self.id}: turn_idx {self.turn_idx} but its record's is "
                             f"{self.record.get('turn_idx')!r} (pass record=None)")

    @property
    def is_gui(self) -> bool:
        return self.domain in GUI_DOMAINS

    @property
    def last_observation(self) -> str:
        """The observation right before the current action ("" on the first turn of a text
        domain; the initial screen on the first turn of a GUI domain)."""
        return self.history[-1][1] if self.history else self.initial_state


def first_per_domain(samples: Sequence[BenchSample], per_domain: int) -> list[BenchSample]:
    """At most `per_domain` samples of each domain, the first by id (ids are hashes of the
    target turn, so a stable, unbiased subset), ordered by domain and id."""
    kept: dict[str, int] = {}
    chosen = []
    for sample in sorted(samples, key=lambda s: (s.domain, s.id)):
        if kept.get(sample.domain, 0) < per_domain:
            kept[sample.domain] = kept.get(sample.domain, 0) + 1
            chosen.append(sample)
    return chosen
