"""`worldtrace validate --model DIR TRAJECTORIES`: score each turn by how surprising its real
observation is to a world model, and flag the outliers.

    worldtrace validate --model data/models/sft_model data            (a data directory)
    worldtrace validate --model data/models/sft_model traces/ [--domain terminal] [--format F]
                        [--out scores.parquet] [--max-tokens 2048] [--z 3.0] [--top 20]
                        [--score contrast|nll] [--observation-tokens 32]

TRAJECTORIES is a worldtrace data directory (both pools, scrubbed) or trace files in any
native format `worldtrace ingest` reads. Each turn gets the mean token NLL of its observation
given the history and action (training/validate.py); with --score contrast also given neither,
ranked by the difference (how little the context explains the observation). The score is
normalised per domain (z); turns with z >= --z are outliers. Prints a per-domain table and
the most surprising turns; writes every row to --out (Parquet, atomic).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

USER_ERRORS: tuple[type[Exception], ...] = (FileNotFoundError,)


def run(args: argparse.Namespace) -> int:
    import pyarrow as pa
    import torch
    from tqdm import tqdm

    from bench.local_model import LocalChatModel
    from sources.markdown import markdown_table
    from sources.storage import write_parquet
    from training.episode_sources import EpisodeSourceStats, episodes
    from training.validate import (
        SCORE_SCHEMA,
        ValidateConfig,
        ValidateStats,
        domain_table,
        validate,
    )

    if not args.trajectories.exists() and not any(c in str(args.trajectories) for c in "*?["):
        raise FileNotFoundError(f"{args.trajectories}: no such file or folder")
    if args.threads:
        torch.set_num_threads(args.threads)
    chat = LocalChatModel.load(args.model, dtype="float32", device=args.device)
    config = ValidateConfig(max_tokens=args.max_tokens, z_threshold=args.z,
                            score=args.score or ValidateConfig.score,
                            observation_tokens=args.observation_tokens or None)
    read, stats = EpisodeSourceStats(), ValidateStats()
    source = tqdm(episodes(args.trajectories, read, args.domain, args.format),
                  desc=f"validate {args.model.name}", unit=" traj", disable=args.quiet)
    rows = validate(chat.model, chat.tokenizer, source, config, stats)
    out = args.out or Path(f"validate-{args.model.name}.parquet")
    write_parquet(pa.Table.from_pylist(rows, schema=SCORE_SCHEMA), out)
    print(markdown_table(domain_table(rows), cell=_cell))
    top = [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}
           for row in rows[:args.top]]
    print(f"\nmost surprising {len(top)} turns (z >= {args.z:g} is an outlier):")
    print(markdown_table(top, cell=_cell))
    print(f"\n{read.trajectories} trajectories, {stats.turns} turns, {len(rows)} scored "
          f"({stats.empty_observations} without an observation), {stats.tokens:,} tokens in "
          f"{stats.windows} windows; {sum(r['outlier'] for r in rows)} outliers; wrote {out}")
    if read.quarantined:
        print(f"{len(read.quarantined)} records could not be read:", file=sys.stderr)
        for line in read.quarantined[:10]:
            print(f"  {line}", file=sys.stderr)
    return 0


def _cell(value: object) -> str:
    """A table cell: empty for a missing value (a domain with no scored turn)."""
    return "" if value is None else str(value)


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("validate", help="score each turn's observation by its "
                                                  "surprise to a world model; flag outliers",
                                 description=__doc__)
    parser.add_argument("trajectories", type=Path,
                        help="a worldtrace data directory, or trace files (file, folder, glob)")
    parser.add_argument("--model", type=Path, required=True, help="a model folder")
    parser.add_argument("--out", type=Path, help="Parquet of every scored turn (default: "
                                                 "validate-<model>.parquet)")
    parser.add_argument("--domain", help="domain of the trace files (default: the reader's)")
    parser.add_argument("--format", default="auto", help="reader name, or auto-detect")
    parser.add_argument("--max-tokens", type=int, default=2048, help="tokens per forward pass")
    parser.add_argument("--z", type=float, default=3.0, help="outlier threshold (z per domain)")
    # choices: training.validate.SCORES (not imported here: it loads torch)
    parser.add_argument("--score", choices=("contrast", "nll"),
                        help="rank by the NLL in context (the default) or by the contrast "
                             "(NLL in context minus out of context)")
    parser.add_argument("--observation-tokens", type=int, default=32,
                        help="score each observation's first N tokens (default 32, measured "
                             "best on held-out planted swaps; 0: every token)")
    parser.add_argument("--top", type=int, default=20, help="most surprising turns to print")
    parser.add_argument("--device", help="cpu, cuda (default: cuda when available)")
    parser.add_argument("--threads", type=int, help="CPU threads for torch")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)
