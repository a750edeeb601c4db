"""`worldtrace`: the command line, for work outside Dagster.

worldtrace formats                                   list the readers
worldtrace ingest PATH [--format F] [--domain D] --out DIR
worldtrace generate --domains all --trajectories N --seed S --out DIR
worldtrace quality grade --trajectories N --seed S
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from sources.catalog import CatalogError, make_spec
from sources.ingest import IngestStats
from sources.registry import UnknownFormat, all_readers, get_reader
from sources.schema import DOMAINS
from sources.tables import write_tables


def cmd_formats(_: argparse.Namespace) -> int:
    """Print one line per reader: name, default domain, what it maps."""
    for reader in all_readers().values():
        print(f"{reader.name:24} {reader.domain:9} {reader.description}")
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    """Convert PATH into canonical Parquet tables under --out, with a progress bar."""
    path = Path(args.path)
    if args.format != "auto":
        get_reader(args.format)  # fail fast on a misspelt format, listing the known ones
    spec = make_spec(args.source or path.stem or "cli", path, args.domain, args.format)
    bar = tqdm(unit=" traj", desc=f"ingest {path}", disable=args.quiet)

    def advance(_: IngestStats) -> None:
        bar.update(1)

    stats = write_tables([spec], Path(args.out), on_trajectory=advance)
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
    if stats.skipped_docs:
        print(f"skipped {stats.skipped_docs} documentation files (README, LICENSE, *.md)")
    if stats.total("quarantined"):
        print(f"quarantined records: {Path(args.out) / 'ingest_quarantine'}", file=sys.stderr)
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    """Write a seeded synthetic corpus in the native formats, with planted truth."""
    from sources.factory.scale import generate_corpus

    domains = list(DOMAINS) if args.domains == "all" else args.domains.split(",")
    stats = generate_corpus(Path(args.out), domains, args.trajectories, args.seed, progress=True)
    print(stats)
    return 0


def cmd_quality(args: argparse.Namespace) -> int:
    """Quality-stage tools (grading against planted truth)."""
    from quality.grade import main as grade_main

    return grade_main(args.rest)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="worldtrace", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    formats = commands.add_parser("formats", help="list the native-format readers")
    formats.set_defaults(run=cmd_formats)

    ingest = commands.add_parser("ingest", help="convert traces to canonical Parquet")
    ingest.add_argument("path", help="file, folder or glob")
    ingest.add_argument("--format", default="auto", help="reader name, or auto-detect")
    ingest.add_argument("--domain", choices=DOMAINS, help="override the domain")
    ingest.add_argument("--source", help="source name (default: the path's name)")
    ingest.add_argument("--out", required=True, help="output data directory")
    ingest.add_argument("--quiet", action="store_true", help="no progress bar")
    ingest.set_defaults(run=cmd_ingest)

    generate = commands.add_parser("generate", help="write a seeded synthetic corpus")
    generate.add_argument("--domains", default="all", help="'all' or a comma-separated list")
    generate.add_argument("--trajectories", type=int, default=300, help="per domain")
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--out", required=True)
    generate.set_defaults(run=cmd_generate)

    quality = commands.add_parser("quality", help="quality-stage tools (grade ...)")
    quality.add_argument("rest", nargs=argparse.REMAINDER)
    quality.set_defaults(run=cmd_quality)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (UnknownFormat, CatalogError) as error:
        print(f"worldtrace: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
