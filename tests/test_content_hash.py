"""The content hash is the hash of each turn's json.dumps text, however that text is made."""

from __future__ import annotations

import json
import random

from sources.ids import stable_hash, trajectory_content_hash
from sources.schema import Trajectory, Turn


def reference_hash(trajectory: Trajectory) -> str:
    """The definition: the task, then json.dumps([action, observation, kind, tool]) a turn."""
    return stable_hash(trajectory.task, *(
        json.dumps([t.action, t.observation, t.action_kind, t.tool_name], ensure_ascii=False)
        for t in trajectory.turns))


def test_the_hash_is_that_of_the_json_text_of_each_turn() -> None:
    draw = random.Random(11)
    alphabet = [chr(code) for code in range(0x80)] + [
        "é", "中", "\u2028", "\ufeff", "\U0001f600", "\ud800", "\udfff"]

    def text() -> str:
        return "".join(draw.choice(alphabet) for _ in range(draw.randint(0, 40)))

    odd_values = [None, 7, 2.5, 1e16, True, ["a", None], {"k": "v"}]
    for _ in range(500):
        turns = [Turn(action=draw.choice([text(), None, *odd_values]), observation=text(),
                      action_kind=text(), observation_format="text",
                      tool_name=draw.choice([None, text()]))
                 for _ in range(draw.randint(0, 6))]
        trajectory = Trajectory(task=text(), turns=turns, position="$", outcome="unknown",
                                metadata={})
        assert trajectory_content_hash(trajectory) == reference_hash(trajectory)
