"""`worldtrace bench build|run|score`: AgentWorldBench outside Dagster.

    worldtrace bench build --data DIR --out BENCH_DIR [--per-domain N] [--seed S]
        samples from the bench pool of DIR's trajectory_split, in the official JSONL layout
    worldtrace bench run --bench-dir BENCH_DIR --predictor P [--predictor P2 ...] --out RUN_DIR
                         [--scoring official|strict] [--max-new-tokens N]
                         [--llm-judge URL [--judge-prompts DIR] [--judge-model M]
                          [--judge-max-tokens N] [--judge-attempts N]] [--rollout K]
        any folder of <domain>_test.jsonl files (ours or the official AgentWorldBench), in
        official mode by default: each record's own strings sent, the official extraction,
        empty generations failed and left out, both overalls labelled; judged by the offline
        rubric (an approximation of the LLM judge); writes predictions.jsonl, scores.csv,
        leaderboard.*; --llm-judge: also judge with a model behind an OpenAI-compatible URL
        (llm_scores.csv, llm_unjudged.csv: what it could not grade and why, agreement.csv:
        rubric-vs-LLM Spearman per domain), with --judge-prompts DIR (a checkout's prompts/)
        as the official judge, else with our prompts, labelled not official; --scoring strict:
        our strict checks lower the score; --rollout K: free-running mode, each predictor's own
        predictions fed back for K steps (rollout.csv: score by depth)
    worldtrace bench score --predictions FILE [--out RUN_DIR] [--scoring official|strict]
        judge a predictions.jsonl (official records with `gen`: ours or eval.py's)

A record that cannot be read is reported with its file and line (on stderr) and skipped; the
rest are still run and scored.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.official import OFFICIAL_MAX_TOKENS, REFERENCE_TEMPERATURE
from bench.predictors.base import PredictorSetupError, UnknownPredictor
from bench.scoring import SCORING_MODES
from worldtrace.judge_options import (
    JudgeSetupError,
    add_llm_judge_arguments,
    llm_judge_config,
    start_llm_judge,
)

# A missing bench folder, data table or judge prompt, a misspelt or misconfigured predictor or
# judge: the user's to fix.
USER_ERRORS: tuple[type[Exception], ...] = (FileNotFoundError, UnknownPredictor,
                                            PredictorSetupError, JudgeSetupError)


def _report_problems(problems: list) -> None:
    for problem in problems:
        print(f"skipped {problem}", file=sys.stderr)
    if problems:
        print(f"{len(problems)} record(s) could not be read", file=sys.stderr)


def _print_table(rows: list[dict], own_columns: bool = False) -> None:
    """A leaderboard, or (own_columns) any table with the columns of its first row."""
    from bench.leaderboard import COLUMNS, to_markdown

    if rows:
        print(to_markdown(rows, list(rows[0]) if own_columns else COLUMNS))


def run_build(args: argparse.Namespace) -> int:
    from bench.build import BuildConfig, build_domain
    from bench.official import write_official
    from bench.scoring import OFFICIAL_COUNTS

    counts = ({d: args.per_domain for d in OFFICIAL_COUNTS} if args.per_domain
              else dict(OFFICIAL_COUNTS))
    config = BuildConfig(counts=counts, seed=args.seed)
    samples = []
    for domain in OFFICIAL_COUNTS:
        built, stats = build_domain(Path(args.data), domain, config)
        samples += built
        print(f"{domain}: {stats.built}/{stats.requested} samples from "
              f"{stats.pool_trajectories} bench trajectories ({stats.eligible_turns} judgeable "
              f"turns); shortfall {stats.shortfall}")
    counts_written = write_official(samples, Path(args.out))
    print(f"wrote {sum(counts_written.values())} samples to {args.out} ({config})")
    return 0


def run_run(args: argparse.Namespace) -> int:
    from bench.evaluate import RUBRIC_JUDGE, summarize
    from bench.leaderboard import leaderboard_rows
    from bench.official import read_official
    from bench.predictors.base import PredictorContext
    from bench.runner import run_predictors, write_run

    # A bad --judge-prompts DIR or a judge URL where nothing answers fails before any work.
    judge_config = llm_judge_config(args, Path(args.out) / "cache", args.concurrency,
                                    args.scoring)
    llm = start_llm_judge(judge_config) if judge_config is not None else None
    samples, problems = read_official(Path(args.bench_dir))
    _report_problems(problems)
    print(f"{len(samples)} samples from {args.bench_dir}", file=sys.stderr)
    context = PredictorContext(data_dir=Path(args.data) if args.data else None,
                               model=args.model, max_new_tokens=args.max_new_tokens,
                               max_prompt_tokens=args.max_prompt_tokens,
                               temperature=args.temperature, concurrency=args.concurrency,
                               cache_dir=Path(args.out) / "cache")  # a rerun resumes
    runs = run_predictors(samples, args.predictor, context, scoring=args.scoring,
                          log=lambda line: print(line, file=sys.stderr, flush=True),
                          bar=sys.stderr.isatty())
    paths = write_run(samples, runs, Path(args.out), scoring=args.scoring)
    _print_table(leaderboard_rows(summarize([r for run in runs for r in run.rows]),
                                  RUBRIC_JUDGE, args.scoring))
    paths.update(_diagnostics(args, samples, runs, context, llm))
    print(f"wrote {', '.join(str(p) for p in paths.values())}", file=sys.stderr)
    return 0


def _diagnostics(args: argparse.Namespace, samples: list, runs: list, context, llm) -> dict:
    """The LLM judge and its agreement with the rubric, and free-running decay, when asked."""
    from bench.diagnostics import (
        agreement_rows,
        llm_judge_rows,
        rollout_steps,
        write_diagnostics,
    )
    from bench.rollout import decay_table

    llm_rows: list = []
    unjudged: list = []
    agreement: list = []
    rollout: dict = {}
    if llm is not None:
        from bench.evaluate import summarize
        from bench.leaderboard import leaderboard_rows
        from bench.progress import Progress

        for run in runs:
            progress = Progress(f"{llm.name} on {run.name}", len(samples),
                                lambda line: print(line, file=sys.stderr, flush=True),
                                bar=sys.stderr.isatty())
            llm.on_done = progress.update
            rows, failed = llm_judge_rows(llm, samples, run.outputs, run.name, run.failures)
            progress.close()
            llm_rows += rows
            unjudged += failed
            for row in failed:
                print(f"llm judge could not grade {row['predictor']} {row['id']}: "
                      f"{row['reason']}", file=sys.stderr)
        graded = sum(not row["failed"] for row in llm_rows)
        print(f"{llm.name} graded {graded} of {len(llm_rows)} predictions "
              f"({len(unjudged)} never answered readably, {llm.unparseable_answers} unreadable "
              "answers)", file=sys.stderr)
        agreement = agreement_rows([row for run in runs for row in run.rows], llm_rows)
        if llm_rows:
            _print_table(leaderboard_rows(summarize(llm_rows), llm.name, args.scoring))
        _print_table(agreement, own_columns=True)
    if args.rollout:
        from bench.predictors.base import build_predictor

        for spec in args.predictor:
            predictor = build_predictor(spec, context)
            rollout[predictor.name] = rollout_steps(
                predictor, samples, args.rollout, Path(args.data) if args.data else None)
            _print_table([{"predictor": predictor.name, **row}
                          for row in decay_table(rollout[predictor.name])], own_columns=True)
    return write_diagnostics(Path(args.out), llm_rows, agreement, rollout, unjudged)


def run_score(args: argparse.Namespace) -> int:
    from bench.evaluate import RUBRIC_JUDGE, summarize
    from bench.leaderboard import leaderboard_rows, write_leaderboard
    from bench.runner import score_predictions

    rows, problems = score_predictions(Path(args.predictions), args.scoring)
    _report_problems(problems)
    if not rows:
        print("no predictions could be scored", file=sys.stderr)
        return 1
    table = leaderboard_rows(summarize(rows), RUBRIC_JUDGE, args.scoring)
    _print_table(table)
    if args.out:
        write_leaderboard(table, Path(args.out))
    return 0


def _scoring_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scoring", choices=SCORING_MODES, default="official",
                        help="official (default): the released evaluation's semantics, our "
                             "strict checks only as diagnostic columns; strict: malformed "
                             "output, echoes of the history and the GUI caps lower the score "
                             "(not comparable with the published table)")


def register(commands: argparse._SubParsersAction) -> None:
    bench = commands.add_parser("bench", help="AgentWorldBench: build, run predictors, score")
    tools = bench.add_subparsers(dest="tool", required=True)
    build = tools.add_parser("build", help="build the bench from DIR's bench pool")
    build.add_argument("--data", required=True, help="worldtrace data directory")
    build.add_argument("--out", required=True, help="folder for <domain>_test.jsonl")
    build.add_argument("--per-domain", type=int, default=0,
                       help="samples per domain (default: the official counts)")
    build.add_argument("--seed", type=int, default=0)
    build.set_defaults(run=run_build)
    run = tools.add_parser("run", help="run predictors on a folder in the official layout")
    run.add_argument("--bench-dir", required=True, help="folder of <domain>_test.jsonl files")
    run.add_argument("--predictor", action="append", required=True,
                     help="copy_last, empty, retrieval[:DATA], hf_local:MODEL_DIR, "
                          "openai_compatible:URL (repeatable)")
    run.add_argument("--out", required=True, help="run folder to write")
    run.add_argument("--data", help="data directory (retrieval's train pool, models)")
    run.add_argument("--model", help="model name sent to an OpenAI-compatible endpoint")
    run.add_argument("--max-new-tokens", type=int, default=OFFICIAL_MAX_TOKENS,
                     help=f"the most tokens of one answer (default {OFFICIAL_MAX_TOKENS}, the "
                          "official setting; capped by what the model's context leaves)")
    run.add_argument("--max-prompt-tokens", type=int, default=None, metavar="N",
                     help="local models: fit each prompt to N tokens, oldest turns first (not "
                          "the official setting, which sends the whole prompt and fails a "
                          "sample over the model's context)")
    run.add_argument("--temperature", type=float, default=REFERENCE_TEMPERATURE,
                     help=f"model sampling temperature (default {REFERENCE_TEMPERATURE}, the "
                          "official setting; 0: greedy)")
    run.add_argument("--concurrency", type=int, default=4)
    add_llm_judge_arguments(run)
    run.add_argument("--rollout", type=int, default=0, metavar="K",
                     help="free-running mode: feed each predictor's predictions back for K "
                          "steps and report the score by depth")
    _scoring_argument(run)
    run.set_defaults(run=run_run)
    score = tools.add_parser("score", help="judge a predictions.jsonl")
    score.add_argument("--predictions", required=True)
    _scoring_argument(score)
    score.add_argument("--out", help="write leaderboard.csv/.md/.png here")
    score.set_defaults(run=run_score)
