"""`worldtrace release`: a versioned, reproducible dataset release, and its verification.

    worldtrace release --version 0.1.0 [--name worldtrace] [--data DIR] [--out releases]
                       [--license SOURCE=LICENSE ...]
        releases/<name>-<version>/ from the published tables under DIR ($WORLDTRACE_DATA,
        default ./data); never overwrites an existing release
    worldtrace release verify DIR
        re-hash every file against manifest.json; names each file that differs (exit 1)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from release import ReleaseError, default_releases_dir

# An existing release, a bad version string, a secret still found: the user's to fix.
USER_ERRORS: tuple[type[Exception], ...] = (ReleaseError,)


def run_build(args: argparse.Namespace) -> int:
    from release.build import ReleaseConfig, build_release

    if not args.version:
        print("worldtrace release: --version is required (or: worldtrace release verify DIR)",
              file=sys.stderr)
        return 2
    licenses = dict(item.split("=", 1) for item in args.license)
    config = ReleaseConfig(name=args.name, version=args.version, licenses=licenses)
    out = Path(args.out) if args.out else default_releases_dir(args.data)
    stats = build_release(Path(args.data), out, config, log=print)
    for table, splits in stats.rows.items():
        print(f"{table:<16} {sum(splits.values()):>9,} rows  "
              + " ".join(f"{d} {n:,}" for d, n in splits.items()))
    done = "kept (a rebuild is byte-identical)" if stats.kept else "wrote"
    print(f"{done} {stats.path}: {stats.files} files, {stats.bytes / 1e6:.1f} MB; "
          f"check it with: worldtrace release verify {stats.path}")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from release.manifest import verify_release

    problems = verify_release(Path(args.dir))
    for problem in problems:
        print(f"{args.dir}/{problem}")
    print(f"{args.dir}: {'OK, every file matches manifest.json' if not problems else 'DIFFERS'}",
          file=sys.stderr)
    return 1 if problems else 0


def _license(text: str) -> str:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"{text!r}: expected SOURCE=LICENSE")
    return text


def register(commands: argparse._SubParsersAction) -> None:
    release = commands.add_parser("release", help="build or verify a versioned dataset release")
    release.add_argument("--version", help="release version, e.g. 0.1.0")
    release.add_argument("--name", default="worldtrace")
    release.add_argument("--data", default=os.environ.get("WORLDTRACE_DATA", "data"),
                         help="data directory (default $WORLDTRACE_DATA or ./data)")
    release.add_argument("--out", default=None,
                         help="folder of releases (default $WORLDTRACE_RELEASES, else releases/ "
                              "beside the data directory)")
    release.add_argument("--license", action="append", default=[], type=_license,
                         help="SOURCE=LICENSE for the card (repeatable)")
    release.set_defaults(run=run_build)
    actions = release.add_subparsers(dest="action")
    verify = actions.add_parser("verify", help="re-hash a release against its manifest")
    verify.add_argument("dir", help="a release folder, e.g. releases/worldtrace-0.1.0")
    verify.set_defaults(run=run_verify)
