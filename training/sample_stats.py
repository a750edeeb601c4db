"""Counts and token statistics of a split of samples, per domain, recorded while writing."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np


@dataclass
class SampleStats:
    """Samples (and those held out for validation), trajectories, skipped targets (by reason)
    and prompt tokens, per domain."""

    config: str = ""
    samples: Counter = field(default_factory=Counter)
    trajectories: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)  # (domain, reason) -> targets
    prompt_tokens: dict[str, list[int]] = field(default_factory=dict)
    target_tokens: dict[str, list[int]] = field(default_factory=dict)
    dropped_turns: Counter = field(default_factory=Counter)  # history turns cut by the budget
    targets_cut: Counter = field(default_factory=Counter)  # target observations cut to a head
    # domain -> samples held out for validation; None for a split without one (rl_split)
    validation: Counter | None = None

    def add(self, domain: str, prompt_tokens: int, target_tokens: int, dropped: int,
            validation: bool = False) -> None:
        self.samples[domain] += 1
        if validation:
            self.validation[domain] += 1  # a split without a validation Counter fails here
        self.prompt_tokens.setdefault(domain, []).append(prompt_tokens)
        self.target_tokens.setdefault(domain, []).append(target_tokens)
        self.dropped_turns[domain] += dropped

    def table(self) -> list[dict]:
        """One row per domain: counts and prompt / target token statistics."""
        rows = []
        for domain in sorted(self.trajectories):
            prompts = np.array(self.prompt_tokens.get(domain, [0]))
            targets = np.array(self.target_tokens.get(domain, [0]))
            held_out = ({} if self.validation is None
                        else {"validation_samples": self.validation[domain]})
            rows.append({
                "domain": domain, "samples": self.samples[domain], **held_out,
                "trajectories": self.trajectories[domain],
                "skipped": sum(n for (d, _), n in self.skipped.items() if d == domain),
                "prompt_tokens_mean": round(float(prompts.mean()), 1),
                "prompt_tokens_p50": int(np.median(prompts)),
                "prompt_tokens_max": int(prompts.max()),
                "target_tokens_mean": round(float(targets.mean()), 1),
                "target_tokens_max": int(targets.max()),
                "targets_cut": self.targets_cut[domain],
                "history_turns_dropped": self.dropped_turns[domain],
            })
        return rows
