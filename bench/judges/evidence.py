"""Measurements of a predicted observation against the reference and the history.

All are deterministic functions of text, cheap enough for thousands of samples a second, and
each is reported as evidence by the judges that use it. Volatile bits that no model can know
and no judge should count (hex ids, clock times, timestamps, durations) are masked before lines
are compared, so a terminal line that differs only in its timestamp still matches.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

from quality.patterns import FORMAT_ERRORS, GENERIC_ERRORS
from quality.volatile import EVIDENCE_VOLATILE, mask

CACHE_TEXTS = 4096  # texts whose lines / tokens are memoised (a trajectory's history repeats)
MAX_TOKENS = 2500  # tokens compared per text: long pages are judged on their first part
HEAD_TAIL_CHARS = 2000  # error messages sit at the start or the end (quality/patterns.py)
_TOKEN = re.compile(r"\w+")
# A whole token (no token character before it) that holds a slash, an underscore or a digit, or
# ends in a file extension; the lookahead scans one token, so the search stays linear.
_IDENTIFIER = re.compile(r"(?<![\w./-])(?:(?=[\w./-]*[/_0-9])[\w./-]{2,}+"
                         r"|[\w-]+\.[A-Za-z]{1,5}(?![\w./-]))")
_SHAPE_LETTERS = re.compile(r"[A-Za-z]+")
_SHAPE_DIGITS = re.compile(r"\d+")
# observation format each domain's error patterns follow (beyond the generic ones)
DOMAIN_FORMAT = {"mcp": "tool_result_json", "search": "page_text", "terminal": "stdout",
                 "swe": "text", "android": "ui_elements", "web": "a11y_tree", "os": "a11y_tree"}


@lru_cache(maxsize=CACHE_TEXTS)
def mask_volatile(text: str) -> str:
    """Hex ids, timestamps, clock times and durations as "#" (quality/volatile.py)."""
    return mask(text, EVIDENCE_VOLATILE, "#")


@lru_cache(maxsize=CACHE_TEXTS)
def lines(text: str) -> tuple[str, ...]:
    """Non-empty lines, stripped, volatile bits masked."""
    return tuple(line for raw in mask_volatile(text).splitlines() if (line := raw.strip()))


@lru_cache(maxsize=CACHE_TEXTS)
def tokens(text: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(text[: MAX_TOKENS * 12])[:MAX_TOKENS])


@lru_cache(maxsize=CACHE_TEXTS)
def word_set(text: str) -> frozenset[str]:
    """Lower-cased words of a text."""
    return frozenset(w.lower() for w in tokens(text))


@lru_cache(maxsize=CACHE_TEXTS)
def trigram_set(text: str) -> frozenset[tuple[str, str, str]]:
    """Word 3-grams (volatile bits masked): what two near-identical outputs share."""
    words = tokens(mask_volatile(text))
    if len(words) < 3:
        return frozenset([tuple((*words, "", "")[:3])]) if words else frozenset()
    return frozenset(zip(words, words[1:], words[2:], strict=False))


def multiset_f1(predicted: Sequence[str], reference: Sequence[str]) -> float:
    """F1 of two multisets; 1.0 when both are empty, 0.0 when only one is."""
    if not predicted and not reference:
        return 1.0
    if not predicted or not reference:
        return 0.0
    common = sum((Counter(predicted) & Counter(reference)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(reference)
    return 2 * precision * recall / (precision + recall)


def line_f1(predicted: str, reference: str) -> float:
    return multiset_f1(lines(predicted), lines(reference))


def token_f1(predicted: str, reference: str) -> float:
    return multiset_f1(tokens(mask_volatile(predicted)), tokens(mask_volatile(reference)))


def recall(wanted: set[str], found: set[str]) -> float | None:
    """Share of `wanted` in `found`; None when nothing is wanted (the check does not apply)."""
    return len(wanted & found) / len(wanted) if wanted else None


def jaccard(left: set, right: set) -> float:
    return len(left & right) / len(left | right) if left or right else 1.0


_LEADING_FLAGS = re.compile(r"\A\(\?([aiLmsux]+)\)")


def _scoped(pattern: str) -> str:
    """A pattern's leading global flags as a scoped group, so patterns can be alternated."""
    match = _LEADING_FLAGS.match(pattern)
    if not match:
        return f"(?:{pattern})"
    return f"(?{match.group(1)}:{pattern[match.end():]})"


@cache
def _error_pattern(domain: str) -> re.Pattern[str]:
    """The quality stage's error patterns of the domain's format, as one alternation."""
    extra = FORMAT_ERRORS.get(DOMAIN_FORMAT.get(domain, ""), ())
    return re.compile("|".join(_scoped(p) for p in (*GENERIC_ERRORS, *extra)))


@lru_cache(maxsize=CACHE_TEXTS)
def looks_like_error(text: str, domain: str) -> bool:
    """The quality stage's error patterns, on the head and tail of the text."""
    window = text if len(text) <= 2 * HEAD_TAIL_CHARS else (
        text[:HEAD_TAIL_CHARS] + "\n" + text[-HEAD_TAIL_CHARS:])
    return _error_pattern(domain).search(window) is not None


def parse_json(text: str) -> Any | None:
    """The JSON value of a text that is one object or array, else None."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def key_paths(value: Any, prefix: str = "", depth: int = 5) -> set[str]:
    """Dotted key paths of a JSON value (lists as [], JSON inside strings opened too)."""
    if depth == 0:
        return set()
    if isinstance(value, str) and value[:1] in ("{", "["):
        inner = parse_json(value)
        return key_paths(inner, prefix, depth - 1) if inner is not None else set()
    if isinstance(value, dict):
        paths = set()
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            paths.add(path)
            paths |= key_paths(item, path, depth - 1)
        return paths
    if isinstance(value, list):
        paths = set()
        for item in value[:20]:
            paths |= key_paths(item, prefix + "[]", depth - 1)
        return paths
    return set()


def shapes(text: str) -> set[str]:
    """Line shapes: the first 40 characters with letter runs as `a` and digit runs as `9`."""
    return {_SHAPE_DIGITS.sub("9", _SHAPE_LETTERS.sub("a", line[:40])) for line in lines(text)}


@lru_cache(maxsize=CACHE_TEXTS)
def identifiers(text: str) -> frozenset[str]:
    """Paths, file names, numbers, ids and snake_case names: what a history pins down."""
    return frozenset(_IDENTIFIER.findall(text[: MAX_TOKENS * 12]))


def length_agreement(predicted: str, reference: str) -> float:
    """min/max of the two line counts (1.0 when both are empty)."""
    a, b = len(lines(predicted)), len(lines(reference))
    return min(a, b) / max(a, b) if max(a, b) else 1.0


def clear_caches() -> None:
    """Forget every memoised text measurement (benchmarks time the judges cold)."""
    from bench.judges.gui import parse_screen

    for function in (mask_volatile, lines, tokens, word_set, trigram_set, identifiers,
                     looks_like_error, parse_screen):
        function.cache_clear()
