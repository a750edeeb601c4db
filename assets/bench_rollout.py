"""Free-running decay: agentworldbench -> bench_rollout.

The bench is teacher-forced; a world model used as a simulator is not. From bench samples whose
trajectory goes on, each configured predictor (copy_last and the trained models by default)
runs `depth` steps on its own predictions along the real actions, every step judged by the
rubric free-running and teacher-forced (bench/rollout.py). A deterministic subset of chains
per domain keeps it affordable: a chain costs 2 x depth - 1 predictions.
"""

import base64

import dagster as dg

from assets.bench import model_specs
from assets.resources import WorldtraceStorage
from assets.splits import domain_tables_metadata
from assets.table_metadata import records_table
from bench.diagnostics import rollout_chains, write_decay_chart
from bench.judges.rubric import judge
from bench.official import REFERENCE_TEMPERATURE
from bench.predictors.base import PredictorContext, build_predictor
from bench.rollout import STEP_SCHEMA, decay_table, free_run, pick_chains
from bench.store import BENCH_TABLE, read_samples, write_rows

ROLLOUT = "bench_rollout"
ROLLOUT_SCHEMA_DOCS = {
    "chain": "id of the bench sample the chain starts from",
    "depth": "1 = the teacher-forced bench step; d = d-1 own predictions in the history",
    "score": "free-running sample score (0-100, rubric)",
    "teacher_score": "the same turn with the real history (0-100, rubric)",
    "prediction": "the free-running predicted observation fed to the next step",
}


class RolloutSettings(dg.Config):
    """Depth K, chains per domain, predictors, the model folders under {data}/models to run
    (by default the floor and the end of the training chain: each model costs a CPU minute),
    and a new-token cap that keeps CPU runs short."""

    depth: int = 3
    chains_per_domain: int = 3
    predictors: list[str] = ["copy_last"]
    models: list[str] = ["untrained_model", "rl_model"]
    max_new_tokens: int = 128
    model_max_prompt_tokens: int = 640  # as bench_predictions: the prompt budget trained on
    model_temperature: float = REFERENCE_TEMPERATURE


@dg.asset(group_name="bench", deps=[BENCH_TABLE, "raw_turns", "untrained_model", "cpt_model",
                                     "sft_model", "rl_model"])
def bench_rollout(context: dg.AssetExecutionContext, config: RolloutSettings,
                  storage: WorldtraceStorage) -> dg.MaterializeResult:
    """Free-running mode: each predictor's own predictions fed back for `depth` steps; the score
    by depth beside teacher forcing (their gap is what compounding errors cost), per domain."""
    data = storage.data_path
    chains = pick_chains(rollout_chains(read_samples(data), data), config.chains_per_domain)
    predictor_context = PredictorContext(data_dir=data, max_new_tokens=config.max_new_tokens,
                                         max_prompt_tokens=config.model_max_prompt_tokens or None,
                                         temperature=config.model_temperature)
    steps_rows, decay_rows = [], []
    for spec in [*config.predictors, *model_specs(data, config.models)]:
        predictor = build_predictor(spec, predictor_context)
        steps = free_run(predictor, chains, config.depth, judge,
                         on_step=lambda d, n, name=predictor.name:
                         context.log.info(f"{name}: depth {d}, {n} chains"))
        steps_rows += [{"predictor": predictor.name, **vars(step)} for step in steps]
        decay_rows += [{"predictor": predictor.name, **row} for row in decay_table(steps)]
    write_rows(steps_rows, data, ROLLOUT, STEP_SCHEMA)
    chart = write_decay_chart(decay_rows, data / "leaderboard" / "rollout.png")
    encoded = base64.b64encode(chart.read_bytes()).decode()
    return dg.MaterializeResult(metadata={
        **domain_tables_metadata(data, ROLLOUT, ROLLOUT_SCHEMA_DOCS,
                                 ["chain", "predictor", "depth", "score", "teacher_score"]),
        "chains": len(chains),
        "decay": dg.MetadataValue.md(records_table([r for r in decay_rows
                                                    if r["domain"] == "all"])),
        "decay_per_domain": dg.MetadataValue.md(records_table(decay_rows)),
        "chart": dg.MetadataValue.md(f"![decay](data:image/png;base64,{encoded})"),
    })
