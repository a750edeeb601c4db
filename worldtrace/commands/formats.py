"""`worldtrace formats`: list the readers, built-in and installed through entry points."""

from __future__ import annotations

import argparse

from sources.readers import all_readers


def run(_: argparse.Namespace) -> int:
    """Print one line per reader: name, default domain, what it maps."""
    for reader in all_readers().values():
        print(f"{reader.name:24} {reader.domain:9} {reader.description}")
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("formats", help="list the native-format readers")
    parser.set_defaults(run=run)
