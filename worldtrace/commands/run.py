"""`worldtrace run`: the whole pipeline on the built-in default data, as `make run` runs it.

    worldtrace run [--domains all] [--workers 2] [--release-version 0.1.0]
                   [--bench-per-domain 10] [--max-new-tokens 128] [--full] [--base DIR]

Runs domain_job for every domain, registers the shards their files hash to, runs main_job
(ingest, scrub) for every domain x shard partition, then shard_features_job (the staged turn
features) for every domain x shard partition, then domain_quality_job (features, labels) for
every domain (two runs at a time by default), then every cross-domain asset
(dedup, split, corpora, models, bench, release) once, printing one line per run, and ends with
a summary. Needs $DAGSTER_HOME (make sets it); the runs show in `make ui`. By default the bench
is a sample (--bench-per-domain per domain, --max-new-tokens per prediction) so the whole run
fits in minutes on a laptop CPU; --full uses the assets' own settings (the official counts).

--base DIR (e.g. data/base_models/smollm2 from `worldtrace base-model smollm2`) trains on that
pretrained base instead of the tiny model: its tokenizer builds cpt_corpus and the splits, the
real-base budgets (training.sft_split.REAL_BASE_BUDGETS) size prompts, targets and answers, CPT
starts from it, and the untrained model on the bench is the base itself. Use its own data
directory (WORLDTRACE_DATA), since the tables it writes are the base's.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from release import default_releases_dir
from sources.schema import DOMAINS

# Step counts of the real-base run on two CPU cores (a 135M model trains at ~50-150 tokens/s
# there): enough to learn the answer format, not to converge. LoRA is left off: full
# fine-tuning measured as fast per token on this CPU (README, "A real pretrained base").
REAL_BASE_STEPS = {"cpt_model": {"max_steps": 10, "batch_size": 4, "learning_rate": 5e-5},
                   "sft_model": {"max_steps": 30, "batch_size": 4, "learning_rate": 5e-5},
                   "rl_model": {"max_steps": 2, "batch_size": 4, "learning_rate": 1e-6}}


def real_base_config(base: Path) -> dict[str, dict]:
    """Run config of the phase-5 (corpus) assets that trains and benches on a pretrained base."""
    from bench.model_folder import NotAModelFolder, check_model_folder
    from training.sft_split import REAL_BASE_BUDGETS as budgets

    try:
        check_model_folder(base)
    except NotAModelFolder as error:
        raise NotAModelFolder(f"{error} (run `worldtrace base-model smollm2` first)") from None
    folder = str(base.resolve())
    training = {"budgets": "real_base", "cpu_threads": 2}
    return {
        "cpt_corpus": {"base": folder},
        "sft_split": {"base": folder, "max_prompt_tokens": budgets.prompt_tokens,
                      "max_target_observation_tokens": budgets.target_observation_tokens or 0,
                      "rationale": budgets.rationale},
        "rl_split": {"base": folder}, "rl_split_all_turns": {"base": folder},
        "untrained_model": {"base": folder},
        "cpt_model": {**training, **REAL_BASE_STEPS["cpt_model"], "checkpoint": folder},
        "sft_model": {**training, **REAL_BASE_STEPS["sft_model"]},
        "rl_model": {**training, **REAL_BASE_STEPS["rl_model"]},
        "bench_predictions": {"model_max_prompt_tokens": budgets.prompt_tokens,
                              "max_new_tokens": budgets.answer_tokens},
        "bench_rollout": {"model_max_prompt_tokens": budgets.prompt_tokens},
        "mcp_simulation_report": {"model_max_prompt_tokens": budgets.prompt_tokens,
                                  "max_new_tokens": budgets.answer_tokens},
    }


USER_ERRORS: tuple[type[Exception], ...] = (FileNotFoundError,)


def run(args: argparse.Namespace) -> int:
    from assets.executors import EXECUTOR_VARIABLE
    from worldtrace.launch import run_pipeline
    from worldtrace.summary import summary

    if not os.environ.get("DAGSTER_HOME"):
        print("worldtrace run: set DAGSTER_HOME (a folder with a dagster.yaml; `make run` "
              "does this)", file=sys.stderr)
        return 2
    if os.environ.get(EXECUTOR_VARIABLE):
        # Its runs execute in its own worker processes (in-process run config), which the
        # Dask executor's config does not take; a cluster runs the jobs (README: Executors).
        print(f"worldtrace run: runs each domain in its own local process; unset "
              f"{EXECUTOR_VARIABLE} (={os.environ[EXECUTOR_VARIABLE]}), or launch the jobs on "
              "the cluster with `dagster job execute` or from the UI (README: Executors and "
              "partitions at scale)", file=sys.stderr)
        return 2
    domains = list(DOMAINS) if args.domains == "all" else args.domains.split(",")
    log_path = Path(os.environ["DAGSTER_HOME"]) / "worldtrace-run.log"
    print(f"worldtrace run: the steps' own output goes to {log_path}")
    started = time.perf_counter()
    op_config: dict[str, dict] = {"dataset_release": {"version": args.release_version}}
    if not args.full:
        op_config |= {"agentworldbench": {"per_domain": args.bench_per_domain},
                      "bench_predictions": {"max_new_tokens": args.max_new_tokens}}
    if args.base:
        op_config |= real_base_config(args.base)
    outcomes = run_pipeline(domains, args.workers, op_config, log_path)
    data_dir = Path(os.environ.get("WORLDTRACE_DATA", "data")).resolve()
    releases_dir = default_releases_dir(data_dir)
    release = releases_dir / f"worldtrace-{args.release_version}"
    print(summary(data_dir, [release] if release.exists() else [],
                  sum(o.checks_passed for o in outcomes),
                  sum(len(o.checks_failed) for o in outcomes),
                  time.perf_counter() - started, os.environ["DAGSTER_HOME"], domains))
    failed = [o.name for o in outcomes if not o.success]
    if failed:
        print(f"\nFAILED: {', '.join(failed)} (details: make ui -> Runs)", file=sys.stderr)
    return 1 if failed else 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("run", help="the whole pipeline on the default data, with a "
                                             "summary (what make run runs)")
    parser.add_argument("--domains", default="all", help="'all' or a comma-separated list")
    parser.add_argument("--workers", type=int, default=2,
                        help="domain and shard runs at a time (default 2: both cores)")
    parser.add_argument("--release-version", default="0.1.0")
    parser.add_argument("--bench-per-domain", type=int, default=10,
                        help="bench samples per domain (default 10; --full: official counts)")
    parser.add_argument("--max-new-tokens", type=int, default=128,
                        help="tokens per bench prediction (default 128)")
    parser.add_argument("--full", action="store_true",
                        help="the assets' own settings: the official bench counts")
    parser.add_argument("--base", type=Path,
                        help="train and bench on this pretrained base folder (worldtrace "
                             "base-model smollm2) instead of the tiny model")
    parser.set_defaults(run=run)
