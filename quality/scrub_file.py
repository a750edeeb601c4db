"""Scrub a text or JSONL file the way the pipeline scrubs a trace, so a user can check a trace
before sharing it (`worldtrace scrub`).

The rule is the pipeline's (quality.secrets finds, quality.scrub replaces): the same value gets
the same typed placeholder throughout the file, as within one trajectory. Text is scrubbed a
paragraph at a time (blank lines split it, so a private-key block stays whole and a long file
streams); a JSONL line is parsed and each string in it scrubbed, so an escaped newline or quote
never hides a value or breaks the JSON, and a line with nothing to replace is written unchanged.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from quality.nested import map_strings, strings_in
from quality.scrub import Placeholders, Replacement, replace_findings
from quality.secrets import find_sensitive, gated_kinds

JSONL_SUFFIXES = (".jsonl", ".ndjson")


class ScrubInputError(ValueError):
    """Input that cannot be scrubbed as asked: names the file and line."""


@dataclass(frozen=True)
class LineFinding:
    """One replaced value: the line it starts on, its kind and its placeholder (never itself)."""

    line: int
    kind: str
    placeholder: str


@dataclass
class FileScrubStats:
    """What a scrub of one input read and replaced."""

    lines: int = 0
    findings: list[LineFinding] = field(default_factory=list)

    @property
    def kinds(self) -> Counter[str]:
        return Counter(finding.kind for finding in self.findings)


def looks_like_jsonl(name: str, first_line: str | None) -> bool:
    """JSONL when the name says so, or when the first non-blank line is a JSON object."""
    if name.endswith(JSONL_SUFFIXES):
        return True
    if first_line is None or not first_line.lstrip().startswith("{"):
        return False
    try:
        return isinstance(json.loads(first_line), dict)
    except json.JSONDecodeError:
        return False


def scrub_lines(lines: Iterable[str], source: str, jsonl: bool, stats: FileScrubStats
                ) -> Iterator[str]:
    """The scrubbed text of `lines` (each with its line ending), streamed; what was replaced
    goes to `stats`. `source` names the input in errors."""
    placeholders = Placeholders()
    if jsonl:
        yield from _scrub_jsonl(lines, source, placeholders, stats)
    else:
        yield from _scrub_text(lines, placeholders, stats)


def _scrub_text(lines: Iterable[str], placeholders: Placeholders, stats: FileScrubStats
                ) -> Iterator[str]:
    paragraph: list[str] = []
    for line in lines:
        stats.lines += 1
        paragraph.append(line)
        if not line.strip():
            yield _scrub_paragraph("".join(paragraph), stats.lines - len(paragraph) + 1,
                                   placeholders, stats)
            paragraph = []
    if paragraph:
        yield _scrub_paragraph("".join(paragraph), stats.lines - len(paragraph) + 1,
                               placeholders, stats)


def _scrub_paragraph(text: str, first_line: int, placeholders: Placeholders,
                     stats: FileScrubStats) -> str:
    findings = find_sensitive(text)
    scrubbed, replaced = replace_findings(text, findings, placeholders)
    stats.findings += [LineFinding(first_line + text.count("\n", 0, finding.start), kind,
                                   placeholder)
                       for finding, (kind, placeholder) in zip(findings, replaced, strict=True)]
    return scrubbed


def _scrub_jsonl(lines: Iterable[str], source: str, placeholders: Placeholders,
                 stats: FileScrubStats) -> Iterator[str]:
    for line in lines:
        stats.lines += 1
        if not line.strip():
            yield line
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ScrubInputError(f"{source}: line {stats.lines} is not JSON ({error.msg} at "
                                  f"column {error.colno}); scrub it as text with --format text"
                                  ) from None
        record, replaced_here = _scrub_record(record, placeholders)
        if not replaced_here:
            yield line
            continue
        stats.findings += [LineFinding(stats.lines, kind, placeholder)
                           for kind, placeholder in replaced_here]
        ending = line[len(line.rstrip("\r\n")):]
        yield json.dumps(record, ensure_ascii=False) + ending


def _scrub_record(record: Any, placeholders: Placeholders) -> tuple[Any, list[Replacement]]:
    """A parsed JSON record with each string in it scrubbed (gates over all its strings at once),
    and what was replaced, in order."""
    strings = list(strings_in(record))
    gates = dict(zip(strings, gated_kinds(strings), strict=True))
    replaced_here: list[Replacement] = []

    def scrub(value: str) -> str:
        scrubbed, replaced = replace_findings(value, find_sensitive(value, gates[value]),
                                              placeholders)
        replaced_here.extend(replaced)
        return scrubbed

    return map_strings(record, scrub), replaced_here
