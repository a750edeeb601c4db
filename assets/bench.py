"""AgentWorldBench: bench pool -> agentworldbench -> bench_predictions -> bench_scores ->
leaderboard.

Turn-level samples from the bench pool only (real prefix, real action, real next observation;
official layout exported beside the Parquet), every configured predictor asked for every
sample, every output judged by the offline rubric and the rule verifiers, and a leaderboard
with the published table's columns beside the published rows. Not partitioned: the
leaderboard's Overall is a mean over the domains, so each asset runs over all of them (every
domain that has a trajectory_split: a run over a subset of the domains benches that subset).
"""

import base64
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg

from assets.resources import WorldtraceStorage
from assets.table_metadata import (
    check_result,
    column_schema,
    reads,
    records_table,
    table_metadata,
)
from bench import checks
from bench.build import BuildConfig, build_domain
from bench.compare import MODEL_PREFIX, compare_models, model_specs
from bench.evaluate import (
    RUBRIC_JUDGE,
    judge_outputs,
    predict,
    sent_fields,
    summarize,
)
from bench.leaderboard import leaderboard_rows, to_markdown, write_leaderboard
from bench.official import REFERENCE_TEMPERATURE, write_official
from bench.predictors.base import PredictorContext, build_predictor
from bench.progress import Progress
from bench.prompts import PROMPT_VERSION
from bench.sample import first_per_domain
from bench.scoring import AXES, OFFICIAL_COUNTS
from bench.store import (
    official_dir,
    read_rows,
    read_samples,
    remove_samples,
    write_rows,
    write_samples,
)
from bench.tables import AGENTWORLDBENCH, BENCH_PREDICTIONS, BENCH_SCORES, LEADERBOARD
from quality.tables import (
    DEDUP_SIGNATURES,
    SCRUBBED_TRAJECTORIES,
    SCRUBBED_TURNS,
    TRAJECTORY_SPLIT,
    TURN_LABELS,
)
from sources.schema import DOMAINS
from training.sft_split import TINY_BUDGETS
from training.tables import MODELS, UNTRAINED_MODEL, model_folders

GROUP = "bench"


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
    holds a config.json (the trained models and untrained_model) also runs as
    hf_local:<folder>, on the first model_samples_per_domain samples of each domain by id
    (0: all; generation is slow on a CPU), with at most max_new_tokens tokens per answer and
    prompts fitted to model_max_prompt_tokens (oldest turns first; 0: the model's context),
    sampled at model_temperature (the official 0.6, seeded). The default 640 is the prompt
    budget SFT and GSPO train the default tiny model on: it has never seen a later position
    and gains nothing from a longer prompt; raise it for a real checkpoint."""

    predictors: list[str] = ["copy_last", "empty", "retrieval"]
    include_models: bool = True
    max_new_tokens: int = 256
    model_samples_per_domain: int = 10
    model_max_prompt_tokens: int = TINY_BUDGETS.prompt_tokens
    model_temperature: float = REFERENCE_TEMPERATURE


@dg.asset(group_name=GROUP,
          deps=reads(TRAJECTORY_SPLIT, SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS, TURN_LABELS,
                     DEDUP_SIGNATURES),
          check_specs=[
              dg.AssetCheckSpec("samples_in_bench_pool", asset=AGENTWORLDBENCH.name,
                                description="Every bench sample comes from a trajectory of "
                                            "the bench pool of trajectory_split."),
              dg.AssetCheckSpec("no_near_duplicate_in_train", asset=AGENTWORLDBENCH.name,
                                description="No bench sample's trajectory has a near "
                                            "duplicate left in the train pool.")])
def agentworldbench(context: dg.AssetExecutionContext, config: BenchSettings,
                    storage: WorldtraceStorage) -> Iterator[dg.MaterializeResult
                                                            | dg.AssetCheckResult]:
    """Turn-level samples from the bench pool: the real history before a judgeable target turn
    (informative or error), its action and the real next observation; stratified by source,
    seeded; the official per-domain counts when the pool allows (the shortfall is reported).
    Every domain that has a trajectory_split (a run over a subset of the domains has split only
    those; the metadata names the domains left out, and those whose earlier samples it
    removed, since the predictors read every domain on disk). Also exported in the official
    JSONL layout (`agentworldbench/official/<domain>_test.jsonl`)."""
    build = BuildConfig(counts=config.domain_counts(), seed=config.seed)
    # A run over a subset of the domains has split only those (the raw tables present).
    domains = TRAJECTORY_SPLIT.domains_present(storage.data_path)
    if not domains:
        raise FileNotFoundError(f"{storage.data_path}: no trajectory_split partition (build "
                                "trajectory_split first)")
    left_out = [domain for domain in DOMAINS if domain not in domains]
    removed = remove_samples(storage.data_path, left_out)
    if left_out:
        context.log.warning(f"no trajectory_split for {', '.join(left_out)}: the bench is "
                            f"built over {', '.join(domains)} only; earlier samples removed: "
                            f"{', '.join(removed) or 'none'}")
    samples, stats_rows = [], []
    for domain in domains:
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
    write_official(samples, official_dir(storage.data_path), domains)
    yield dg.MaterializeResult(metadata={
        **table_metadata(AGENTWORLDBENCH, storage.data_path, None,
                                 ["id", "source", "turn_idx", "category", "current_action",
                                  "reference"]),
        "config": str(build), "prompt_version": PROMPT_VERSION,
        "per_domain": dg.MetadataValue.md(records_table(stats_rows)),
        "shortfall": sum(r["shortfall"] for r in stats_rows),
        "domains": ", ".join(domains),
        "domains_left_out": ", ".join(left_out) or "none",
        "domains_removed": ", ".join(removed) or "none",
        "official_layout": dg.MetadataValue.path(str(official_dir(storage.data_path))),
    })
    yield check_result("samples_in_bench_pool",
                       checks.samples_in_bench_pool(storage.data_path, samples))
    yield check_result("no_near_duplicate_in_train",
                       checks.no_near_duplicate_in_train(storage.data_path, samples))


def predictor_specs(settings: PredictorSettings, data_dir: Path) -> list[str]:
    """The configured specs, plus hf_local for each model folder with include_models."""
    return [*settings.predictors,
            *(model_specs(model_folders(data_dir)) if settings.include_models else [])]


def model_stats(predictor: object) -> dict[str, int]:
    """A local model's prompt fitting counts (samples trimmed, cut, failed), else nothing."""
    stats = getattr(predictor, "stats", None)
    return {k: getattr(stats, k) for k in ("trimmed_samples", "cut_samples", "failed_samples")
            if hasattr(stats, k)}


@dg.asset(group_name=GROUP, deps=reads(AGENTWORLDBENCH, TRAJECTORY_SPLIT, SCRUBBED_TURNS,
                                       *MODELS))
def bench_predictions(context: dg.AssetExecutionContext, config: PredictorSettings,
                      storage: WorldtraceStorage) -> dg.MaterializeResult:
    """The raw output of every configured predictor for every bench sample (baselines
    copy_last, empty, retrieval), and of every model folder in the data directory's `models/`
    via hf_local (the
    trained cpt_model, sft_model, rl_model and the untrained floor) on a stable per-domain
    subset."""
    samples = read_samples(storage.data_path)
    subset = (first_per_domain(samples, config.model_samples_per_domain)
              if config.model_samples_per_domain else samples)
    predictor_context = PredictorContext(
        data_dir=storage.data_path, max_new_tokens=config.max_new_tokens,
        max_prompt_tokens=config.model_max_prompt_tokens or None,
        temperature=config.model_temperature)
    rows, speed = [], []
    for spec in predictor_specs(config, storage.data_path):
        predictor = build_predictor(spec, predictor_context)
        asked = subset if spec.startswith(MODEL_PREFIX) else samples
        started = time.perf_counter()
        progress = Progress(predictor.name, len(asked), context.log.info)
        outputs = predict(predictor, asked, on_batch=progress.update)
        seconds = time.perf_counter() - started
        sent = sent_fields(predictor, asked, outputs)
        rows += [{"id": s.id, "domain": s.domain, "source": s.source, "predictor": predictor.name,
                  "output": output, **fields}
                 for s, output, fields in zip(asked, outputs, sent, strict=True)]
        speed.append({"predictor": predictor.name, "samples": len(asked),
                      "seconds": round(seconds, 2),
                      "samples_per_s": round(len(asked) / max(seconds, 1e-9), 1),
                      **model_stats(predictor)})
        context.log.info(f"{predictor.name}: {len(asked)} samples in {seconds:.1f}s")
    write_rows(rows, storage.data_path, BENCH_PREDICTIONS)
    return dg.MaterializeResult(metadata={
        **table_metadata(BENCH_PREDICTIONS, storage.data_path, None,
                                 ["id", "predictor", "output"]),
        "predictors": dg.MetadataValue.md(records_table(speed)),
        "model_samples_per_domain": config.model_samples_per_domain,
        "model_samples": len(subset),
        "max_new_tokens": config.max_new_tokens,
        "model_max_prompt_tokens": config.model_max_prompt_tokens,
        "model_temperature": config.model_temperature,
    })


@dg.asset(group_name=GROUP, deps=reads(AGENTWORLDBENCH, BENCH_PREDICTIONS))
def bench_scores(context: dg.AssetExecutionContext, storage: WorldtraceStorage
                 ) -> dg.MaterializeResult:
    """Every prediction judged by the offline reference-grounded rubric (an approximation of
    the LLM judge: five axes 1..5, the GUI caps the official prompts ask for) and the domain's
    rule verifier, under official scoring: the 0..100 sample score, empty generations failed
    (no score, with the reason), and the strict diagnostics as columns only: the malformed flag
    and the echo flag (a prediction that repeats the history while the real one did not)."""
    samples = {s.id: s for s in read_samples(storage.data_path)}
    predictions = read_rows(storage.data_path, BENCH_PREDICTIONS)
    started = time.perf_counter()
    rows = []
    for name in sorted({p["predictor"] for p in predictions}):
        mine = [p for p in predictions if p["predictor"] == name]
        rows += judge_outputs([samples[p["id"]] for p in mine], [p["output"] for p in mine], name,
                              {p["id"]: p["failure_reason"] for p in mine})
    seconds = time.perf_counter() - started
    write_rows(rows, storage.data_path, BENCH_SCORES)
    context.log.info(f"judged {len(rows)} predictions in {seconds:.1f}s")
    axes_rows = [{"predictor": s.predictor, "domain": domain,
                  **{axis: round(axes[axis], 1) if axis in axes else None for axis in AXES}}
                 for s in summarize(rows) for domain, axes in s.axes.items()]
    return dg.MaterializeResult(metadata={
        **table_metadata(BENCH_SCORES, storage.data_path, None,
                                 ["id", "predictor", *AXES, "score", "malformed"]),
        "judge": RUBRIC_JUDGE,
        "judge_samples_per_s": round(len(rows) / max(seconds, 1e-9), 1),
        "per_axis": dg.MetadataValue.md(records_table(axes_rows)),
    })


@dg.asset(group_name=GROUP, deps=reads(BENCH_SCORES),
          kinds={"csv", "markdown"},  # CSV, Markdown and PNG files, no Parquet
          metadata={"dagster/column_schema": column_schema(LEADERBOARD)})
def leaderboard(context: dg.AssetExecutionContext, storage: WorldtraceStorage
                ) -> dg.MaterializeResult:
    """Our predictor runs with the published table's columns (MCP, Search, Terminal, SWE,
    Android, Web, OS), overall_macro (the published Overall's rule) and overall_pooled (what
    the released eval.py prints), failed samples per domain, malformed and echo rates, beside
    the published rows (marked published, drawn in their own panel): CSV, Markdown and a PNG
    chart in the data directory's `leaderboard/` folder."""
    data = storage.data_path
    scores = read_rows(data, BENCH_SCORES)
    summaries = summarize(scores)
    rows = leaderboard_rows(summaries, RUBRIC_JUDGE)
    paths = write_leaderboard(rows, LEADERBOARD.dir(data))
    text, comparison = compare_models(scores, f"{MODEL_PREFIX}{UNTRAINED_MODEL.name}",
                                      LEADERBOARD.dir(data) / "models_vs_baselines.md")
    chart = base64.b64encode(paths["png"].read_bytes()).decode()
    for summary in summaries:
        context.log.info(f"{summary.predictor}: overall_macro {summary.overall.macro}, "
                         f"overall_pooled {summary.overall.pooled}, "
                         f"failed {sum(summary.overall.failed.values())}")
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(rows),
        "dagster/column_schema": column_schema(LEADERBOARD),
        "leaderboard": dg.MetadataValue.md(to_markdown(rows)),
        "chart": dg.MetadataValue.md(f"![leaderboard](data:image/png;base64,{chart})"),
        "csv": dg.MetadataValue.path(str(paths["csv"])),
        "png": dg.MetadataValue.path(str(paths["png"])),
        **{f"overall_{s.predictor}": round(s.overall.macro, 2) for s in summaries
           if s.overall.macro is not None},
        **({"models_vs_baselines": dg.MetadataValue.md(text)} if text else {}),
        **comparison,
    })
