"""The line shares of a turn (action_line_share, seen_line_share, prev_line_share; see
line_shares), in plain Python: the definition that quality/line_shares_kernel.py compiles and
that the tests compare the compiled loop against (tests/test_line_shares.py).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

import numpy as np

MIN_VALUE_CHARS = 3  # shorter argument values ("1", "id") match by accident
MIN_ECHO_LINE = 8  # an action line shorter than this restates nothing when found in a line
LINE_MAX_CHARS = 12_000  # line shares are computed for observations up to this long
_NOT_CONTENT = string.punctuation + string.whitespace  # a line of only these is no content
HAS_CONTENT = re.compile(f"[^{re.escape(_NOT_CONTENT)}]")
# A GUI tree's element number at the start of a line ("[12] SPAN 'Orders'"), after any stray
# markup in front of it: the numbering changes when the page is pruned or re-rendered, the
# element does not (prev_line_share).
# (one match for both: the stray markup, then an element number right after it, if any)
LINE_HEAD = re.compile(r"[^\w\[]*(\[\d+\])?")


def _line_keys(masked: str) -> list[str]:
    """The distinct content lines of a masked text (masked_texts), stripped, in no order."""
    return list(filter(HAS_CONTENT.search, set(map(str.strip, masked.splitlines()))))


def lines_of_action(action: str, values: list[str]) -> set[str]:
    """The stripped lines of the action and of its values, of MIN_VALUE_CHARS or more."""
    lines = {line.strip() for value in values for line in value.splitlines()}
    lines |= {line.strip() for line in action.splitlines()}
    return {line for line in lines if len(line) >= MIN_VALUE_CHARS}


def _lines_holding(joined: str, needle: str, whole_word: bool) -> Iterable[tuple[int, int]]:
    """(line number, line length) of each line of `joined` (lines joined by "\n", none holding
    another line break) that holds `needle` (where a match starts). The line is found around
    each match, so a text without one costs a single `find`."""
    at = joined.find(needle)
    while at >= 0:
        end = at + len(needle)
        if not whole_word or ((at == 0 or not joined[at - 1].isalnum())
                              and (end == len(joined) or not joined[end].isalnum())):
            line_end = joined.find("\n", at)
            line_end = len(joined) if line_end < 0 else line_end
            yield joined.count("\n", 0, at), line_end - (joined.rfind("\n", 0, at) + 1)
        at = joined.find(needle, at + 1)


def _element_lines(observation: str) -> set[str]:
    """The distinct content lines of an observation as they are (a moved bounding box or a
    new clock time is a new line), element numbers and stray markup in front masked."""
    elements = set()
    for line in set(map(str.strip, observation.splitlines())):
        first = line[:1]
        if first.isalnum():  # most lines: nothing in front to mask, and content
            elements.add(line)
            continue
        if first == "[":  # (the next most: "[12] SPAN ...", without a regex)
            close = line.find("]")
            if close > 1 and line[1:close].isdecimal():  # isdecimal: what \d matches
                elements.add("[0]" + line[close + 1:])
            elif HAS_CONTENT.search(line):
                elements.add(line)
            continue
        head = LINE_HEAD.match(line)
        line = ("[0]" if head.group(1) else "") + line[head.end():]
        if HAS_CONTENT.search(line):
            elements.add(line)
    return elements


def line_shares(actions: list[str], action_args: list[list[str]], observations: list[str],
                lined: list[str], turn: np.ndarray
                ) -> tuple[list[float | None], list[float | None], list[float | None]]:
    """Per turn, over the observation's distinct content lines (a letter or digit):
    action_line_share, the share that restate the action (a line of it, or a line that is
    mostly one of its lines: a terminal echoing the command, a view of the lines just
    inserted), seen_line_share, the share shown by an earlier observation of the trajectory
    or holding one of the action's values as a whole word (a file view again with only the
    edited line changed), and prev_line_share, the share the previous observation showed once
    element numbers are masked (a screen again, reordered or cut down; NULL on the first turn;
    lines as they are otherwise: a moved bounding box or a new clock time is a change).
    NULL when the observation has no content line or is longer than LINE_MAX_CHARS. `lined`
    holds the masked texts without line marks (masked_texts)."""
    action_share: list[float | None] = []
    seen_share: list[float | None] = []
    prev_share: list[float | None] = []
    seen: set[str] = set()
    previous: set[str] | None = None
    # An observation repeats the one before (a screen shown again): its lines are read once.
    # Actions repeat (the same command): their lines too (the values lists are shared per
    # action: reply_columns).
    last: tuple[str | None, list[str], set[str]] = (None, [], set())
    action_lines: dict[tuple[str, int], tuple[set[str], list[str], bool]] = {}
    for row, (action, values, observation) in enumerate(
            zip(actions, action_args, observations, strict=True)):
        if turn[row] == 0:
            seen, previous = set(), None
        observation = observation or ""
        if observation == last[0]:  # (lined is a function of the observation)
            keys, elements = last[1], last[2]
        else:
            keys = [] if len(observation) > LINE_MAX_CHARS else _line_keys(lined[row])
            elements = _element_lines(observation) if keys else set()
            last = (observation, keys, elements)
        # (no element line: "😀" is content to _line_keys, but stray markup to LINE_HEAD)
        prev_share.append(None if previous is None or not elements
                          else len(elements & previous) / len(elements))
        # (an observation too long to read line by line leaves nothing to compare with)
        previous = elements if len(observation) <= LINE_MAX_CHARS else set()
        if not keys:
            action_share.append(None)
            seen_share.append(None)
            continue
        said_key = (action or "", id(values))
        if (said_lines := action_lines.get(said_key)) is None:
            said = lines_of_action(action or "", values)
            said_lines = action_lines[said_key] = (
                said, [line for line in said if len(line) >= MIN_ECHO_LINE],
                any("\n" in value for value in values))
        said, echo_lines, multiline = said_lines
        if multiline:
            keys = sorted(keys)  # (a value over two lines matches where they are adjacent)
        joined = "\n".join(keys)
        restating = [key in said for key in keys]
        for line in echo_lines:
            if line in joined:  # (rarely: a generator costs more than the test)
                for number, length in _lines_holding(joined, line, whole_word=False):
                    restating[number] |= len(line) * 2 >= length
        known = [r or key in seen for key, r in zip(keys, restating, strict=True)]
        for value in values:
            if value in joined:
                for number, _ in _lines_holding(joined, value, whole_word=True):
                    known[number] = True
        action_share.append(sum(restating) / len(keys))
        seen_share.append(sum(known) / len(keys))
        seen.update(keys)
    return action_share, seen_share, prev_share

