"""The RL reward: the bench's hybrid reward on one completion for one rl_split row.

rl_split prompts are the chat messages system + history (user = action, assistant =
observation) + current action; the bench wants the history as (action, observation) pairs and
the current action apart, and the verifier spec as a mapping (the row holds it as JSON text).
"""

from __future__ import annotations

import json
from typing import Any

from bench.reward import hybrid_reward


def history_and_action(prompt: list[dict[str, str]]) -> tuple[list[tuple[str, str]], str]:
    """(action, observation) pairs of the replayed history, and the current action."""
    turns = [message for message in prompt if message["role"] != "system"]
    if not turns or turns[-1]["role"] != "user":
        raise ValueError(f"rl prompt must end with the current action as a user message: "
                         f"{[m['role'] for m in prompt]}")
    history = []
    for before, after in zip(turns[:-1], turns[1:-1], strict=False):
        if before["role"] == "user" and after["role"] == "assistant":
            history.append((before["content"], after["content"]))
    return history, turns[-1]["content"]


def hybrid_scorer(row: dict[str, Any], completion: str) -> float:
    """bench.reward.hybrid_reward for a completion of an rl_split row (0 when malformed)."""
    history, action = history_and_action(row["prompt"])
    spec = json.loads(row["verifier"]) if row.get("verifier") else None
    return hybrid_reward(row["domain"], completion, row["reference_observation"], history,
                         action, spec)
