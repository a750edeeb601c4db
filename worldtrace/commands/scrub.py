"""`worldtrace scrub PATH|-`: scrub a text or JSONL file the way the pipeline does, to stdout;
`--check` lists what would be replaced (kind and line, never the value) and exits 1 if anything."""

from __future__ import annotations

import argparse
import io
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from quality.scrub_file import ScrubInputError

USER_ERRORS: tuple[type[Exception], ...] = (ScrubInputError,)


def run(args: argparse.Namespace) -> int:
    from quality.scrub_file import FileScrubStats, looks_like_jsonl, scrub_lines

    source = "<stdin>" if args.path == "-" else args.path
    with _open(args.path) as stream:
        lines = _decoded(stream, source)
        head: list[str] = []  # blank lines up to the first line with text, read ahead
        for line in lines:
            head.append(line)
            if line.strip():
                break
        first = head[-1] if head and head[-1].strip() else None
        lines = itertools.chain(head, lines)
        jsonl = (args.format == "jsonl" or args.format == "auto"
                 and looks_like_jsonl(source, first))
        stats = FileScrubStats()
        scrubbed = scrub_lines(lines, source, jsonl, stats)
        if args.check:
            for _ in scrubbed:
                pass
        else:
            sys.stdout.writelines(scrubbed)
            sys.stdout.flush()
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(stats.kinds.items()))
    summary = (f"{len(stats.findings)} finding(s) in {source} ({stats.lines} lines, "
               f"{'jsonl' if jsonl else 'text'})" + (f": {kinds}" if kinds else ""))
    if args.check:
        for finding in sorted(stats.findings, key=lambda f: (f.kind, f.line)):
            print(f"{source}:{finding.line}: {finding.kind} -> {finding.placeholder}")
        print(summary)
        return 1 if stats.findings else 0
    print(f"worldtrace scrub: {summary}", file=sys.stderr)
    return 0


def _open(path: str) -> TextIO:
    """The input as UTF-8 text with its line endings kept; a missing file is the user's error."""
    if path == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", newline="")
    file = Path(path)
    if not file.is_file():
        raise ScrubInputError(f"{path}: no such file" if not file.exists()
                              else f"{path}: not a file")
    return file.open(encoding="utf-8", newline="")


def _decoded(stream: TextIO, source: str) -> Iterator[str]:
    number = 0
    try:
        for number, line in enumerate(stream, 1):  # noqa: B007 (read in the except)
            yield line
    except UnicodeDecodeError as error:
        raise ScrubInputError(f"{source}: line {number + 1} is not UTF-8 text ({error.reason})"
                              ) from None


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "scrub", help="replace secrets and personal data in a text or JSONL file (to stdout)",
        description="Replace credentials, e-mail addresses, phone numbers and IP addresses with "
                    "typed placeholders (<SECRET_1>, <EMAIL_1>, ...), as the pipeline's "
                    "scrubbed tables do; the same value keeps its placeholder in the file.")
    parser.add_argument("path", help="a text or JSONL file, or - for stdin")
    parser.add_argument("--check", action="store_true",
                        help="print nothing scrubbed: list each finding (file:line: kind), "
                             "exit 1 if there is any, 0 if none")
    parser.add_argument("--format", choices=("auto", "text", "jsonl"), default="auto",
                        help="auto: JSONL for .jsonl/.ndjson or a first line that is a JSON "
                             "object, else text")
    parser.set_defaults(run=run)
