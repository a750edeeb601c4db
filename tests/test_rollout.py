"""Free-running mode: predictions fed back, scored against the real turns and teacher forcing."""

from __future__ import annotations

import pyarrow as pa
import pytest

from bench.judges.rubric import judge
from bench.predictors.baselines import CopyLastPredictor
from bench.rollout import (
    chains_from_samples,
    chains_from_turns,
    decay_table,
    free_run,
    read_trajectory_turns,
)
from bench.sample import BenchSample
from quality.tables import SCRUBBED_TURNS
from sources.storage import write_parquet

LISTING = "drwxr-xr-x 2 user user 4096 src\n-rw-r--r-- 1 user user 120 README.md"
# A session whose first answer differs from every later one: copying the last *real*
# observation is right from turn 3 on, copying one's own first guess never is.
TURNS = [("cd /repo", ""), ("git status", "On branch main\nnothing to commit"),
         ("ls -l", LISTING), ("ls -l", LISTING), ("ls -l", LISTING), ("ls -l", LISTING)]


def sample_at(turn_idx: int, trajectory: str = "traj-1") -> BenchSample:
    return BenchSample(domain="terminal", id=f"{trajectory}@{turn_idx}",
                       history=TURNS[:turn_idx - 1], current_action=TURNS[turn_idx - 1][0],
                       reference=TURNS[turn_idx - 1][1], system_prompt="sim", turn_idx=turn_idx,
                       total_turns=len(TURNS), trajectory_id=trajectory, source="test")


def test_chains_read_their_future_from_the_trajectory_or_a_later_sample():
    from_turns = chains_from_turns([sample_at(2)], {"traj-1": TURNS})[0]
    from_samples = chains_from_samples([sample_at(2), sample_at(6)])
    assert from_turns.future == tuple(TURNS[2:])
    assert from_samples[0].future == tuple(TURNS[2:]) and from_samples[1].future == ()
    third = from_turns.teacher_forced(3)  # two steps on: the real history up to turn 3
    assert (third.history, third.current_action, third.turn_idx) == (tuple(TURNS[:3]), "ls -l", 4)
    assert third.id == "traj-1@2+2" and from_turns.teacher_forced(1) == sample_at(2)
    with pytest.raises(KeyError, match="no turns for trajectory"):
        chains_from_turns([sample_at(2, "other")], {"traj-1": TURNS})


def test_free_running_feeds_predictions_back_and_decays_against_teacher_forcing():
    chains = chains_from_turns([sample_at(2)], {"traj-1": TURNS})
    steps = free_run(CopyLastPredictor(), chains, depth=4, judge=judge)
    assert [s.depth for s in steps] == [1, 2, 3, 4]
    # The prediction fed back is the copy of turn 1's output, again and again.
    assert {s.prediction for s in steps} == {""}
    assert steps[0].score == steps[0].teacher_score
    for step in steps[2:]:  # teacher forcing copies the real, unchanged listing: exact
        assert step.teacher_score == 100.0 and step.score < step.teacher_score
    rows = decay_table(steps)
    assert [r["domain"] for r in rows] == ["terminal"] * 4 + ["all"] * 4
    assert rows[3]["gap"] == pytest.approx(100.0 - steps[3].score, abs=0.01)


def test_chains_stop_where_their_trajectory_ends():
    chains = chains_from_turns([sample_at(5), sample_at(2)], {"traj-1": TURNS})
    steps = free_run(CopyLastPredictor(), chains, depth=4, judge=judge)
    depths = {chain: [s.depth for s in steps if s.chain == chain] for chain in ("traj-1@5",
                                                                              "traj-1@2")}
    assert depths == {"traj-1@5": [1, 2], "traj-1@2": [1, 2, 3, 4]}


def test_trajectory_turns_are_read_in_order_from_scrubbed_turns(tmp_path):
    rows = [("b", 1, "x1", "y1"), ("a", 1, "a1", "o1"), ("a", 0, "a0", "o0"), ("c", 0, "z", "z")]
    table = pa.table({name: [r[i] for r in rows] for i, name in
                      enumerate(["trajectory_id", "turn_index", "action", "observation"])})
    path = SCRUBBED_TURNS.path(tmp_path, "terminal", "0")
    path.parent.mkdir(parents=True)
    write_parquet(table, path)
    assert read_trajectory_turns(tmp_path, "terminal", ["a", "b"]) == {
        "a": [("a0", "o0"), ("a1", "o1")], "b": [("x1", "y1")]}
    with pytest.raises(FileNotFoundError, match="scrubbed_turns of web"):
        read_trajectory_turns(tmp_path, "web", ["a"])


def test_free_running_and_teacher_forced_samples_have_distinct_ids():
    seen: list[str] = []

    class Recording(CopyLastPredictor):
        def predict(self, samples):
            seen.extend(s.id for s in samples)
            return super().predict(samples)

    free_run(Recording(), chains_from_turns([sample_at(2)], {"traj-1": TURNS}), 3, judge)
    assert seen == ["traj-1@2", "traj-1@2+1/free", "traj-1@2+1", "traj-1@2+2/free", "traj-1@2+2"]
