"""The RL reward: the bench's hybrid reward on one completion for one rl_split row.

rl_split prompts are the chat messages system + history + current action in the bench's
layout (user = "### Turn N\n**Action:**\n...", assistant = "**Environment Observation:**\n...");
the judges want the raw history as (action, observation) pairs and the current action apart, as
a BenchSample holds them, and the verifier spec as a mapping (the row holds it as JSON text).
"""

from __future__ import annotations

import json
from typing import Any

from bench.reward import hybrid_reward
from sources.readers.agentworldbench import split_prompt, strip_observation


def history_and_action(prompt: list[dict[str, str]]) -> tuple[list[tuple[str, str]], str]:
    """Raw (action, observation) pairs of the replayed history, and the raw current action
    (the bench's turn header, sections and observation marker removed, as bench.official
    imports them)."""
    turns = [message for message in prompt if message["role"] != "system"]
    if not turns or turns[-1]["role"] != "user":
        raise ValueError(f"rl prompt must end with the current action as a user message: "
                         f"{[m['role'] for m in prompt]}")
    history = []
    for before, after in zip(turns[:-1], turns[1:-1], strict=False):
        if before["role"] == "user" and after["role"] == "assistant":
            history.append((split_prompt(before["content"])[0],
                            strip_observation(after["content"])))
    return history, split_prompt(turns[-1]["content"])[0]


def hybrid_scorer(row: dict[str, Any], completion: str) -> float:
    """bench.reward.hybrid_reward for a completion of an rl_split row (0 when malformed)."""
    history, action = history_and_action(row["prompt"])
    spec = json.loads(row["verifier"]) if row.get("verifier") else None
    return hybrid_reward(row["domain"], completion, row["reference_observation"], history,
                         action, spec)
