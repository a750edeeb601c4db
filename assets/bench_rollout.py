"""Free-running decay: agentworldbench -> bench_rollout.

The bench is teacher-forced; a world model used as a simulator is not. From bench samples whose
trajectory goes on, each configured predictor (copy_last and the trained models by default)
runs `depth` steps on its own predictions along the real actions, every step judged by the
rubric free-running and teacher-forced (bench/rollout.py). A deterministic subset of chains
per domain keeps it affordable: a chain costs 2 x depth - 1 predictions.
"""

import base64

import dagster as dg

from assets.resources import WorldtraceStorage
from assets.table_metadata import reads, records_table, table_metadata
from bench.compare import model_specs
from bench.diagnostics import rollout_chains, write_decay_chart
from bench.judges.rubric import judge
from bench.official import REFERENCE_TEMPERATURE
from bench.predictors.base import PredictorContext, build_predictor
from bench.rollout import decay_table, free_run, pick_chains
from bench.store import read_samples, write_rows
from bench.tables import AGENTWORLDBENCH, BENCH_ROLLOUT, LEADERBOARD
from quality.tables import SCRUBBED_TURNS
from training.sft_split import TINY_BUDGETS
from training.tables import MODELS, RL_MODEL, UNTRAINED_MODEL, model_folders


class RolloutSettings(dg.Config):
    """Depth K, chains per domain, predictors, the model folders under {data}/models to run
    (by default the floor and the end of the training chain: each model costs a CPU minute),
    and a new-token cap that keeps CPU runs short."""

    depth: int = 3
    chains_per_domain: int = 3
    predictors: list[str] = ["copy_last"]
    models: list[str] = [UNTRAINED_MODEL.name, RL_MODEL.name]
    max_new_tokens: int = 128
    model_max_prompt_tokens: int = TINY_BUDGETS.prompt_tokens  # the budget it trained on
    model_temperature: float = REFERENCE_TEMPERATURE


@dg.asset(group_name="bench", deps=reads(AGENTWORLDBENCH, SCRUBBED_TURNS, *MODELS))
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
    for spec in [*config.predictors, *model_specs(model_folders(data, config.models))]:
        predictor = build_predictor(spec, predictor_context)
        steps = free_run(predictor, chains, config.depth, judge,
                         on_step=lambda d, n, name=predictor.name:
                         context.log.info(f"{name}: depth {d}, {n} chains"))
        steps_rows += [{"predictor": predictor.name, **vars(step)} for step in steps]
        decay_rows += [{"predictor": predictor.name, **row} for row in decay_table(steps)]
    write_rows(steps_rows, data, BENCH_ROLLOUT)
    chart = write_decay_chart(decay_rows, LEADERBOARD.dir(data) / "rollout.png")
    encoded = base64.b64encode(chart.read_bytes()).decode()
    return dg.MaterializeResult(metadata={
        **table_metadata(BENCH_ROLLOUT, data, None,
                         ["chain", "predictor", "depth", "score", "teacher_score"]),
        "chains": len(chains),
        "decay": dg.MetadataValue.md(records_table([r for r in decay_rows
                                                    if r["domain"] == "all"])),
        "decay_per_domain": dg.MetadataValue.md(records_table(decay_rows)),
        "chart": dg.MetadataValue.md(f"![decay](data:image/png;base64,{encoded})"),
    })
