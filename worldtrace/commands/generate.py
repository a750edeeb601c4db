"""`worldtrace generate`: a seeded synthetic corpus in the native formats, with planted truth."""

from __future__ import annotations

import argparse
from pathlib import Path

from sources.schema import DOMAINS


def run(args: argparse.Namespace) -> int:
    """Write the corpus and print its summary."""
    from sources.factory.scale import generate_corpus

    domains = list(DOMAINS) if args.domains == "all" else args.domains.split(",")
    stats = generate_corpus(Path(args.out), domains, args.trajectories, args.seed, progress=True)
    print(stats)
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("generate", help="write a seeded synthetic corpus")
    parser.add_argument("--domains", default="all", help="'all' or a comma-separated list")
    parser.add_argument("--trajectories", type=int, default=300, help="per domain")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.set_defaults(run=run)
