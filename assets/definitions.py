"""The whole pipeline as one Dagster code location: read this file for the table of contents."""

import dagster as dg

from assets.asset_info import with_defaults
from assets.bench import agentworldbench, bench_predictions, bench_scores, leaderboard
from assets.bench_rollout import bench_rollout
from assets.checks import domain_checks
from assets.executors import executor_from_environment
from assets.factory import generated_traces
from assets.ingest import raw_traces
from assets.jobs import checks_jobs, make_jobs
from assets.mcp_simulation import mcp_simulation_report
from assets.quality import (
    staged_turn_features,
    trajectory_dedup,
    turn_features,
    turn_labels,
)
from assets.release import dataset_release
from assets.resources import storage_from_environment
from assets.scrub import scrubbed_traces
from assets.shard_sensor import shard_registry
from assets.splits import (
    cpt_corpus,
    rl_split,
    rl_split_all_turns,
    sft_split,
    tokenizer,
    trajectory_split,
)
from assets.training import ablation_table, cpt_model, rl_model, sft_model, untrained_model

ASSETS = [generated_traces, raw_traces, staged_turn_features, turn_features, turn_labels,
          trajectory_dedup, scrubbed_traces, trajectory_split, tokenizer, cpt_corpus, sft_split,
          rl_split, rl_split_all_turns, untrained_model, cpt_model, sft_model, rl_model,
          agentworldbench, bench_predictions, bench_scores, leaderboard, bench_rollout,
          mcp_simulation_report, dataset_release]

# The models train once on every domain's splits; they are not per-partition work. The bench
# (bench_job, from assets/jobs.py) measures them and the baselines over all domains at once.
models_job = dg.define_asset_job(
    "models_job",
    selection=dg.AssetSelection.assets(untrained_model, cpt_model, sft_model, rl_model),
    description="CPT -> SFT -> RL (GSPO) on the split tables of all domains, once.",
)

# The ablation trains seven more models and scores them all: its own job, in no other one.
ablation_job = dg.define_asset_job(
    "ablation_job",
    selection=dg.AssetSelection.assets(ablation_table),
    description="Train the CPT / SFT / RL variants and score each on the bench in one table.",
)

CHECKS = domain_checks()

defs = dg.Definitions(
    assets=with_defaults([*ASSETS, ablation_table]),
    asset_checks=CHECKS,
    jobs=[*make_jobs(ASSETS), models_job, ablation_job, *checks_jobs(CHECKS)],
    sensors=[shard_registry],
    resources={"storage": storage_from_environment()},
    executor=executor_from_environment(),
)
