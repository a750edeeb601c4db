"""bench_rollout on a real Dagster instance: the bench built from a small generated corpus,
copy_last free-running over it, the steps stored and the decay shown."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg

from assets.bench import agentworldbench
from assets.bench_rollout import bench_rollout
from assets.resources import WorldtraceStorage
from bench.store import read_rows
from bench.tables import BENCH_ROLLOUT
from quality.split import SplitConfig, split_trajectories
from sources.schema import DOMAINS


def test_bench_rollout_runs_chains_and_reports_decay(bench_corpus: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(bench_corpus, data)
    split_trajectories(data, DOMAINS, SplitConfig(bench_share=0.5))
    result = dg.materialize(
        [agentworldbench, bench_rollout],
        resources={"storage": WorldtraceStorage(data_dir=str(data))},
        run_config={"ops": {"agentworldbench": {"config": {"per_domain": 3}},
                            "bench_rollout": {"config": {"depth": 2, "chains_per_domain": 2,
                                                         "models": []}}}},
    )
    assert result.success
    steps = read_rows(data, BENCH_ROLLOUT)
    assert steps and {row["predictor"] for row in steps} == {"copy_last"}
    depths = {row["depth"] for row in steps}
    assert depths <= {1, 2} and 1 in depths
    for row in steps:
        assert 0.0 <= row["score"] <= 100.0 and 0.0 <= row["teacher_score"] <= 100.0
        if row["depth"] == 1:
            assert row["score"] == row["teacher_score"]
    metadata = result.asset_materializations_for_node("bench_rollout")[0].metadata
    assert "free_running" in metadata["decay"].value and metadata["chains"].value >= 1
    assert (data / "leaderboard" / "rollout.png").stat().st_size > 1000
