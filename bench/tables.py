"""The tables AgentWorldBench builds: samples, predictions, scores, free-running rollouts, the
MCP simulation's fidelity, and the leaderboard folder.

Declared once here (sources/tables.py is the registry); the bench's code takes paths from these
objects. The samples' official JSONL layout is exported beside their partitions
({data}/agentworldbench/official/<domain>_test.jsonl, bench/store.py).
"""

from __future__ import annotations

import pyarrow as pa

from bench.evaluate import (
    PREDICTION_COLUMN_DOCS,
    PREDICTION_SCHEMA,
    SCORE_COLUMN_DOCS,
    SCORE_SCHEMA,
)
from bench.rollout import STEP_SCHEMA
from bench.scoring import DOMAIN_COLUMNS
from bench.simulate.columns import (
    FIDELITY_DOCS,
    FIDELITY_SCHEMA,
    REPLAY_STEP_DOCS,
    REPLAY_STEP_SCHEMA,
)
from sources.tables import Table

HISTORY_TYPE = pa.list_(pa.struct([("action", pa.large_string()),
                                   ("observation", pa.large_string())]))
BENCH_SCHEMA = pa.schema([
    ("id", pa.string()), ("domain", pa.string()), ("source", pa.string()),
    ("trajectory_id", pa.string()), ("turn_idx", pa.int32()), ("total_turns", pa.int32()),
    ("category", pa.string()), ("history", HISTORY_TYPE), ("current_action", pa.large_string()),
    ("reference", pa.large_string()), ("system_prompt", pa.large_string()),
    ("task", pa.large_string()), ("initial_state", pa.large_string()),
])
BENCH_COLUMN_DOCS = {
    "domain": "mcp, search, terminal, swe, android, web, os",
    "id": "stable sample id: domain and a hash of (trajectory_id, target turn)",
    "source": "catalog source of the trajectory (samples are stratified by it)",
    "trajectory_id": "the bench-pool trajectory the sample comes from",
    "turn_idx": "1-based index of the predicted turn (history has turn_idx - 1 turns)",
    "total_turns": "turns in the whole trajectory",
    "category": "turn_labels category of the target turn (informative or error)",
    "history": "the real (action, observation) turns before the target, untruncated",
    "current_action": "the action whose observation is predicted",
    "reference": "the real next observation (ground truth)",
    "system_prompt": "our world-model system prompt of the domain (bench/prompts, versioned)",
    "task": "task instruction (GUI domains; empty for text domains)",
    "initial_state": "screen before the first action (GUI domains, when the format has it)",
}

AGENTWORLDBENCH = Table(
    "agentworldbench", "bench",
    "Turn-level samples from the bench pool: the real history before a judgeable target turn "
    "(informative or error), its action and the real next observation; stratified by source, "
    "seeded. Also exported in the official JSONL layout (official/<domain>_test.jsonl).",
    BENCH_SCHEMA, BENCH_COLUMN_DOCS, order=("id",))
BENCH_PREDICTIONS = Table(
    "bench_predictions", "bench",
    "The raw output of every configured predictor for every bench sample.",
    PREDICTION_SCHEMA, PREDICTION_COLUMN_DOCS)
BENCH_SCORES = Table(
    "bench_scores", "bench",
    "Every prediction judged: the five axes, the 0..100 sample score, the rule verifier, the "
    "diagnostics (malformed, echo) and the evidence.",
    SCORE_SCHEMA, SCORE_COLUMN_DOCS)
BENCH_ROLLOUT = Table(
    "bench_rollout", "bench",
    "Free-running rollouts: each predictor's own predictions fed back for `depth` steps, one row "
    "per (predictor, chain, depth), with the teacher-forced score of the same turn beside it.",
    STEP_SCHEMA, {
        "predictor": "predictor spec name (copy_last, hf_local:<model>, ...)",
        "chain": "id of the bench sample the chain starts from",
        "domain": "the chain's domain",
        "depth": "1 = the teacher-forced bench step; d = d-1 own predictions in the history",
        "score": "free-running sample score (0-100, rubric)",
        "teacher_score": "the same turn with the real history (0-100, rubric)",
        "malformed": "the free-running output had no complete <predicted_observation> block",
        "prediction": "the free-running predicted observation fed to the next step",
    })
MCP_SIMULATION_REPORT = Table(
    "mcp_simulation_report", "bench",
    "The world model as an MCP server (`worldtrace simulate-mcp`): bench-pool MCP sessions "
    "replayed free-running (the model answers every call) and anchored (read-only calls "
    "answered by the real server), each simulated observation judged against the real one; "
    "fidelity by depth with bootstrap 95 % intervals, per model (fidelity.png beside it).",
    FIDELITY_SCHEMA, FIDELITY_DOCS, partitioned=False, folder="mcp_simulation",
    file="fidelity.parquet")
MCP_SIMULATION_STEPS = Table(
    "mcp_simulation_steps", "bench",
    "Every replayed call of mcp_simulation_report: who answered it, its score, its prediction.",
    REPLAY_STEP_SCHEMA, REPLAY_STEP_DOCS, partitioned=False, folder="mcp_simulation",
    file="steps.parquet", asset="mcp_simulation_report")
# The leaderboard's rows (leaderboard.csv and .md): the published table's domains and overall,
# then ours. bench/leaderboard.py writes exactly these columns, in this order.
LEADERBOARD_SCHEMA = pa.schema([
    ("kind", pa.string()), ("predictor", pa.string()), ("judge", pa.string()),
    ("scoring", pa.string()), *((column, pa.float64()) for column in DOMAIN_COLUMNS.values()),
    ("overall_macro", pa.float64()), ("overall_pooled", pa.float64()), ("domains", pa.int64()),
    ("samples", pa.int64()), ("failed", pa.int64()), ("failed_by_domain", pa.string()),
    ("malformed_rate", pa.float64()), ("echo_rate", pa.float64()),
])
LEADERBOARD = Table(
    "leaderboard", "bench",
    "Our predictor runs with the published table's columns beside the published rows: "
    "leaderboard.csv, leaderboard.md, leaderboard.png, models_vs_baselines.md, rollout.png.",
    LEADERBOARD_SCHEMA, {
        "kind": "ours (a predictor run here) or published (a row of the official table)",
        "predictor": "predictor spec (copy_last, hf_local:<model>, ...) or the published model",
        "judge": "who judged: our judge, or the official LLM judge for a published row",
        "scoring": "scoring mode: official (the released evaluation's rules) or strict",
        **{column: f"mean sample score on {column} (0-100); empty when not scored"
           for column in DOMAIN_COLUMNS.values()},
        "overall_macro": "plain mean of the seven domain scores: the published table's Overall",
        "overall_pooled": "mean over every valid sample: what the released eval.py prints",
        "domains": "domains scored; an overall over fewer than 7 compares with nothing published",
        "samples": "bench samples asked (ours)",
        "failed": "failed samples (they leave every average), in all (ours)",
        "failed_by_domain": "failed samples per domain, as domain:count (ours)",
        "malformed_rate": "share of outputs with no complete <predicted_observation> block "
                          "(a strict diagnostic, never part of the score)",
        "echo_rate": "share of predictions repeating an earlier observation that the real one "
                     "does not repeat (a strict diagnostic)",
    }, partitioned=False, storage="folder")
