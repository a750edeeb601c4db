"""The hybrid reward for RL (the paper's recipe): rubric and rule check, each on 5..25.

- no complete <predicted_observation> block: 0 (the policy must learn the format first);
- rubric: the offline rubric's mean axis (1..5) times 5, so 5..25;
- rule: the domain verifier's score (0..1) as 5 + 20 * score, so 5..25, where one applies;
- reward: the mean of the two (the rubric alone where no rule applies), so always 5..25 for a
  well-formed answer and 0 for a malformed one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from bench.judges.rubric import judge
from bench.judges.rules import verify
from bench.parsing import parse_prediction
from bench.sample import BenchSample

MALFORMED_REWARD = 0.0


def rubric_reward(mean_axis: float) -> float:
    return 5.0 * mean_axis


def rule_reward(score: float) -> float:
    return 5.0 + 20.0 * score


def hybrid_reward(domain: str, prediction_text: str, reference: str,
                  history: Sequence[tuple[str, str]], current_action: str,
                  verifier_spec: Mapping[str, Any] | None = None) -> float:
    """Reward of one completion (see the module docstring)."""
    parsed = parse_prediction(prediction_text)
    if parsed.malformed:
        return MALFORMED_REWARD
    history = [(str(a), str(o)) for a, o in history]
    sample = BenchSample(domain=domain, id="reward", history=history,
                         current_action=current_action, reference=reference, system_prompt="",
                         turn_idx=len(history) + 1, total_turns=len(history) + 1,
                         trajectory_id="", source="")
    parts = [rubric_reward(judge(sample, prediction_text, parsed).mean)]
    rule = verify({"domain": domain, **(verifier_spec or {})}, parsed.observation or "",
                  reference=reference, action=current_action, history=history)
    if rule is not None:
        parts.append(rule_reward(rule.score))
    return fmean(parts)
