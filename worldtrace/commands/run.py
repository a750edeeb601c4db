"""`worldtrace run`: the whole pipeline on the built-in default data, as `make run` runs it.

    worldtrace run [--domains all] [--workers 2] [--release-version 0.1.0]
                   [--bench-per-domain 10] [--max-new-tokens 128] [--full]

Runs main_job for every domain (two at a time by default), then every cross-domain asset
(dedup, split, corpora, models, bench, release) once, printing one line per run, and ends with
a summary. Needs $DAGSTER_HOME (make sets it); the runs show in `make ui`. By default the bench
is a sample (--bench-per-domain per domain, --max-new-tokens per prediction) so the whole run
fits in minutes on a laptop CPU; --full uses the assets' own settings (the official counts).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from release import default_releases_dir
from sources.schema import DOMAINS


def run(args: argparse.Namespace) -> int:
    from worldtrace.launch import run_pipeline
    from worldtrace.summary import summary

    if not os.environ.get("DAGSTER_HOME"):
        print("worldtrace run: set DAGSTER_HOME (a folder with a dagster.yaml; `make run` "
              "does this)", file=sys.stderr)
        return 2
    domains = list(DOMAINS) if args.domains == "all" else args.domains.split(",")
    log_path = Path(os.environ["DAGSTER_HOME"]) / "worldtrace-run.log"
    print(f"worldtrace run: the steps' own output goes to {log_path}")
    started = time.perf_counter()
    op_config: dict[str, dict] = {"dataset_release": {"version": args.release_version}}
    if not args.full:
        op_config |= {"agentworldbench": {"per_domain": args.bench_per_domain},
                      "bench_predictions": {"max_new_tokens": args.max_new_tokens}}
    outcomes = run_pipeline(domains, args.workers, op_config, log_path)
    data_dir = Path(os.environ.get("WORLDTRACE_DATA", "data")).resolve()
    releases_dir = default_releases_dir(data_dir)
    release = releases_dir / f"worldtrace-{args.release_version}"
    print(summary(data_dir, [release] if release.exists() else [],
                  sum(o.checks_passed for o in outcomes),
                  sum(len(o.checks_failed) for o in outcomes),
                  time.perf_counter() - started, os.environ["DAGSTER_HOME"]))
    failed = [o.name for o in outcomes if not o.success]
    if failed:
        print(f"\nFAILED: {', '.join(failed)} (details: make ui -> Runs)", file=sys.stderr)
    return 1 if failed else 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("run", help="the whole pipeline on the default data, with a "
                                             "summary (what make run runs)")
    parser.add_argument("--domains", default="all", help="'all' or a comma-separated list")
    parser.add_argument("--workers", type=int, default=2,
                        help="domain runs at a time (default 2: both cores)")
    parser.add_argument("--release-version", default="0.1.0")
    parser.add_argument("--bench-per-domain", type=int, default=10,
                        help="bench samples per domain (default 10; --full: official counts)")
    parser.add_argument("--max-new-tokens", type=int, default=128,
                        help="tokens per bench prediction (default 128)")
    parser.add_argument("--full", action="store_true",
                        help="the assets' own settings: the official bench counts")
    parser.set_defaults(run=run)
