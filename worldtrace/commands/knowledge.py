"""`worldtrace knowledge-corpus --out DIR`: a knowledge corpus for CPT, built here without a
download: the documentation (README / long description) of every installed Python package,
one document each (training/knowledge.py). Mix it into CPT with the cpt_corpus run config
`knowledge_path: DIR/package_docs.parquet`, `knowledge_ratio: 0.2`."""

from __future__ import annotations

import argparse
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    from training.knowledge import PackageDocsConfig, build_package_docs

    path, stats = build_package_docs(args.out, PackageDocsConfig(min_chars=args.min_chars))
    print(f"{stats.documents} documents ({stats.chars:,} characters) from {stats.packages} "
          f"installed packages ({stats.too_short} with a description under {args.min_chars} "
          f"characters left out): {path}")
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("knowledge-corpus", help="the installed packages' "
                                 "documentation as a text dataset for the CPT knowledge mix",
                                 description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="folder for package_docs.parquet")
    parser.add_argument("--min-chars", type=int, default=200)
    parser.set_defaults(run=run)
