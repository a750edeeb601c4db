"""AgentWorldBench: bench pool -> agentworldbench -> bench_predictions -> bench_scores ->
leaderboard.

Turn-level samples from the bench pool only (real prefix, real action, real next observation;
official layout exported beside the Parquet), every configured predictor asked for every
sample, every output judged by the offline rubric and the rule verifiers, and a leaderboard
with the published table's columns beside the published rows. Not partitioned: the
leaderboard's Overall is a mean over all seven domains, so each asset runs over all of them.
"""

import base64
import importlib.util
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg

from assets.resources import WorldtraceStorage
from assets.splits import domain_tables_metadata
from assets.table_metadata import check_result, records_table
from bench import checks
from bench.build import BuildConfig, build_domain
from bench.evaluate import (
    PREDICTION_COLUMN_DOCS,
    PREDICTION_SCHEMA,
    RUBRIC_JUDGE,
    SCORE_COLUMN_DOCS,
    SCORE_SCHEMA,
    judge_outputs,
    predict,
    summarize,
)
from bench.leaderboard import leaderboard_rows, to_markdown, write_leaderboard
from bench.official import write_official
from bench.predictors.base import PredictorContext, build_predictor
from bench.prompts import PROMPT_VERSION
from bench.scoring import AXES, OFFICIAL_COUNTS
from bench.store import (
    BENCH_COLUMN_DOCS,
    BENCH_TABLE,
    official_dir,
    read_rows,
    read_samples,
    write_rows,
    write_samples,
)
from sources.schema import DOMAINS

GROUP = "bench"
PREDICTIONS, SCORES = "bench_predictions", "bench_scores"


class BenchSettings(dg.Config):
    """Samples per domain (0: the official counts, MCP 286 ... OS 200), per-domain overrides
    (e.g. {"swe": 100}) and the draw's seed."""

    per_domain: int = 0
    counts: dict[str, int] = {}
    seed: int = 0

    def domain_counts(self) -> dict[str, int]:
        unknown = sorted(set(self.counts) - set(DOMAINS))
        if unknown:
            raise ValueError(f"counts names unknown domains {unknown}; known: {DOMAINS}")
        base = ({d: self.per_domain for d in DOMAINS} if self.per_domain
                else dict(OFFICIAL_COUNTS))
        return {**base, **self.counts}


class PredictorSettings(dg.Config):
    """Predictor specs to run; with include_models, every {data}/models/<name>/ folder that
    holds a config.json also runs as hf_local:<folder>."""

    predictors: list[str] = ["copy_last", "empty", "retrieval"]
    include_models: bool = True
    max_new_tokens: int = 256


@dg.asset(group_name=GROUP, deps=["trajectory_split", "turn_labels", "scrubbed_turns"],
          check_specs=[
              dg.AssetCheckSpec("samples_in_bench_pool", asset=BENCH_TABLE,
                                description="Every bench sample comes from a trajectory of "
                                            "the bench pool of trajectory_split."),
              dg.AssetCheckSpec("no_near_duplicate_in_train", asset=BENCH_TABLE,
                                description="No bench sample's trajectory has a near "
                                            "duplicate left in the train pool.")])
def agentworldbench(context: dg.AssetExecutionContext, config: BenchSettings,
                    storage: WorldtraceStorage) -> Iterator[dg.MaterializeResult
                                                            | dg.AssetCheckResult]:
    """Turn-level samples from the bench pool: the real history before a judgeable target turn
    (informative or error), its action and the real next observation; stratified by source,
    seeded; the official per-domain counts when the pool allows (the shortfall is reported).
    Also exported in the official JSONL layout (agentworldbench/official/<domain>_test.jsonl)."""
    build = BuildConfig(counts=config.domain_counts(), seed=config.seed)
    samples, stats_rows = [], []
    for domain in DOMAINS:
        built, stats = build_domain(storage.data_path, domain, build)
        write_samples(built, storage.data_path, domain)
        samples += built
        stats_rows.append({"domain": domain, "requested": stats.requested, "built": stats.built,
                           "shortfall": stats.shortfall, "bench_trajectories":
                           stats.pool_trajectories, "judgeable_turns": stats.eligible_turns,
                           "sources": dict(sorted(stats.per_source.items())),
                           "categories": dict(sorted(stats.per_category.items()))})
        context.log.info(f"{domain}: {stats.built}/{stats.requested} samples "
                         f"(shortfall {stats.shortfall})")
    write_official(samples, official_dir(storage.data_path))
    yield dg.MaterializeResult(metadata={
        **domain_tables_metadata(storage.data_path, BENCH_TABLE, BENCH_COLUMN_DOCS,
                                 ["id", "source", "turn_idx", "category", "current_action",
                                  "reference"]),
        "config": str(build), "prompt_version": PROMPT_VERSION,
        "per_domain": dg.MetadataValue.md(records_table(stats_rows)),
        "shortfall": sum(r["shortfall"] for r in stats_rows),
        "official_layout": dg.MetadataValue.path(str(official_dir(storage.data_path))),
    })
    yield check_result("samples_in_bench_pool",
                       checks.samples_in_bench_pool(storage.data_path, samples))
    yield check_result("no_near_duplicate_in_train",
                       checks.no_near_duplicate_in_train(storage.data_path, samples))


def predictor_specs(settings: PredictorSettings, data_dir: Path) -> list[str]:
    """The configured specs, plus hf_local for each trained model folder once hf_local exists."""
    specs = list(settings.predictors)
    has_hf_local = importlib.util.find_spec("bench.predictors.hf_local") is not None
    if settings.include_models and has_hf_local:
        specs += [f"hf_local:{folder}" for folder in sorted((data_dir / "models").glob("*"))
                  if (folder / "config.json").exists()]
    return specs


@dg.asset(group_name=GROUP, deps=[BENCH_TABLE, "cpt_model", "sft_model", "rl_model"])
def bench_predictions(context: dg.AssetExecutionContext, config: PredictorSettings,
                      storage: WorldtraceStorage) -> dg.MaterializeResult:
    """The raw output of every configured predictor for every bench sample (baselines
    copy_last, empty, retrieval; the trained models in {data}/models via hf_local)."""
    samples = read_samples(storage.data_path)
    predictor_context = PredictorContext(data_dir=storage.data_path,
                                         max_new_tokens=config.max_new_tokens)
    rows, speed = [], []
    for spec in predictor_specs(config, storage.data_path):
        predictor = build_predictor(spec, predictor_context)
        started = time.perf_counter()
        outputs = predict(predictor, samples)
        seconds = time.perf_counter() - started
        rows += [{"id": s.id, "domain": s.domain, "source": s.source, "predictor": predictor.name,
                  "output": output} for s, output in zip(samples, outputs, strict=True)]
        speed.append({"predictor": predictor.name, "samples": len(samples),
                      "seconds": round(seconds, 2),
                      "samples_per_s": round(len(samples) / max(seconds, 1e-9), 1)})
        context.log.info(f"{predictor.name}: {len(samples)} samples in {seconds:.1f}s")
    write_rows(rows, storage.data_path, PREDICTIONS, PREDICTION_SCHEMA)
    return dg.MaterializeResult(metadata={
        **domain_tables_metadata(storage.data_path, PREDICTIONS, PREDICTION_COLUMN_DOCS,
                                 ["id", "predictor", "output"]),
        "predictors": dg.MetadataValue.md(records_table(speed)),
    })


@dg.asset(group_name=GROUP, deps=[PREDICTIONS])
def bench_scores(context: dg.AssetExecutionContext, storage: WorldtraceStorage
                 ) -> dg.MaterializeResult:
    """Every prediction judged by the offline reference-grounded rubric (five axes 1..5, GUI
    caps) and the domain's rule verifier, with the official 0..100 sample score, the malformed
    flag and the echo flag (a prediction that repeats the history while the real one did not)."""
    samples = {s.id: s for s in read_samples(storage.data_path)}
    predictions = read_rows(storage.data_path, PREDICTIONS)
    started = time.perf_counter()
    rows = []
    for name in sorted({p["predictor"] for p in predictions}):
        mine = [p for p in predictions if p["predictor"] == name]
        rows += judge_outputs([samples[p["id"]] for p in mine], [p["output"] for p in mine], name)
    seconds = time.perf_counter() - started
    write_rows(rows, storage.data_path, SCORES, SCORE_SCHEMA)
    context.log.info(f"judged {len(rows)} predictions in {seconds:.1f}s")
    axes_rows = [{"predictor": s.predictor, "domain": domain,
                  **{axis: round(value, 1) for axis, value in axes.items()}}
                 for s in summarize(rows) for domain, axes in s.axes.items()]
    return dg.MaterializeResult(metadata={
        **domain_tables_metadata(storage.data_path, SCORES, SCORE_COLUMN_DOCS,
                                 ["id", "predictor", *AXES, "score", "malformed"]),
        "judge": RUBRIC_JUDGE,
        "judge_samples_per_s": round(len(rows) / max(seconds, 1e-9), 1),
        "per_axis": dg.MetadataValue.md(records_table(axes_rows)),
    })


@dg.asset(group_name=GROUP, deps=[SCORES])
def leaderboard(context: dg.AssetExecutionContext, storage: WorldtraceStorage
                ) -> dg.MaterializeResult:
    """Our predictor runs with the published table's columns (MCP, Search, Terminal, SWE,
    Android, Web, OS, Overall = macro mean), plus micro mean, malformed and echo rates, beside
    the published rows (marked published): CSV, Markdown and a PNG chart in {data}/leaderboard."""
    summaries = summarize(read_rows(storage.data_path, SCORES))
    rows = leaderboard_rows(summaries, RUBRIC_JUDGE)
    paths = write_leaderboard(rows, storage.data_path / "leaderboard")
    chart = base64.b64encode(paths["png"].read_bytes()).decode()
    for summary in summaries:
        context.log.info(f"{summary.predictor}: overall {summary.overall.macro:.2f}")
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(rows),
        "leaderboard": dg.MetadataValue.md(to_markdown(rows)),
        "chart": dg.MetadataValue.md(f"![leaderboard](data:image/png;base64,{chart})"),
        "csv": dg.MetadataValue.path(str(paths["csv"])),
        "png": dg.MetadataValue.path(str(paths["png"])),
        **{f"overall_{s.predictor}": round(s.overall.macro, 2) for s in summaries},
    })
