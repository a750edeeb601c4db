"""`worldtrace`: the command line, for work outside Dagster.

    worldtrace formats                                   list the readers
    worldtrace ingest PATH [--format F] [--domain D] --out DIR
    worldtrace generate --domains all --trajectories N --seed S --out DIR
    worldtrace quality grade --trajectories N --seed S
    worldtrace quality explain TRAJECTORY_ID TURN_INDEX [--data DIR]

Every module in `worldtrace/commands/` is a command group, found by name (see
worldtrace/commands/__init__.py): adding a command is adding a module, nothing else changes.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType

import worldtrace.commands
from sources.catalog import CatalogError
from sources.readers import UnknownFormat
from sources.registry import UnknownName

# Mistakes in what the user typed or configured: a message and exit status 2, no traceback.
# A command module adds its own in USER_ERRORS; anything else is a bug and raises.
USER_ERRORS: tuple[type[Exception], ...] = (UnknownFormat, UnknownName, CatalogError)


def command_modules() -> list[ModuleType]:
    """The command-group modules of worldtrace.commands, in name order."""
    package = worldtrace.commands
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__)
                   if not info.name.startswith("_"))
    return [importlib.import_module(f"{package.__name__}.{name}") for name in names]


def build_parser(modules: Sequence[ModuleType]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="worldtrace", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for module in modules:
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    modules = command_modules()
    args = build_parser(modules).parse_args(argv)
    user_errors = USER_ERRORS + tuple(
        error for module in modules for error in getattr(module, "USER_ERRORS", ()))
    try:
        return args.run(args)
    except user_errors as error:
        print(f"worldtrace: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
