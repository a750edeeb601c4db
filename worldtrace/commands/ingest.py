"""`worldtrace ingest PATH --out DIR`: convert traces to the canonical Parquet tables."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tqdm import tqdm

from sources.catalog import make_spec
from sources.ingest import IngestStats, write_tables
from sources.readers import get_reader
from sources.schema import DOMAINS
from sources.shards import DEFAULT_SHARDS, ShardConfig
from sources.source_merge import SourceConflict

USER_ERRORS = (SourceConflict,)  # a source name already in --out from another path


def run(args: argparse.Namespace) -> int:
    """Convert PATH into canonical Parquet tables under --out, with a progress bar."""
    path = Path(args.path)
    if args.format != "auto":
        get_reader(args.format)  # fail fast on a misspelt format, listing the known ones
    spec = make_spec(args.source or path.stem or "cli", path, args.domain, args.format)
    bar = tqdm(unit=" traj", desc=f"ingest {path}", disable=args.quiet)

    def advance(stats: IngestStats) -> None:  # a trajectory, or a partition's at once
        bar.update(stats.total("trajectories") - bar.n)

    stats = write_tables([spec], Path(args.out), on_trajectory=advance, replace=args.replace,
                         workers=args.workers, shards=ShardConfig(args.shards))
    bar.close()
    for row in stats.as_table():
        print(
            f"{row['source']}: {row['inputs']} inputs ({row['formats']}), "
            f"{row['trajectories']} trajectories, {row['turns']} turns, "
            f"{row['quarantined']} quarantined; records read {row['records_read']}"
            f" = turns kept {row['turns']} + quarantined {row['quarantined']}"
        )
    if stats.skipped_hidden:
        print(f"skipped {stats.skipped_hidden} hidden files or folders (names starting with '.')")
    if stats.skipped_repeats:
        print(f"skipped {stats.skipped_repeats} links to files or folders already visited")
    if stats.skipped_docs:
        print(f"skipped {stats.skipped_docs} documentation files (README, LICENSE, *.md)")
    if stats.total("quarantined"):
        print(f"quarantined records: {Path(args.out) / 'ingest_quarantine'}", file=sys.stderr)
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("ingest", help="convert traces to canonical Parquet")
    parser.add_argument("path", help="file, folder or glob")
    parser.add_argument("--format", default="auto", help="reader name, or auto-detect")
    parser.add_argument("--domain", choices=DOMAINS, help="override the domain")
    parser.add_argument("--source", help="source name (default: the path's name)")
    parser.add_argument("--out", required=True, help="output data directory")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes reading the inputs (the output is the same bytes)")
    parser.add_argument("--shards", type=int,
                        default=int(os.environ.get("WORLDTRACE_SHARDS") or DEFAULT_SHARDS),
                        help="shards per domain: a file goes to the shard its path hashes to "
                             "(default $WORLDTRACE_SHARDS, else 1)")
    parser.add_argument(
        "--replace",
        action="store_true",
        help="replace the rows of a source of the same name read from another path",
    )
    parser.set_defaults(run=run)
