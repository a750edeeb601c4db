"""Model output -> the observation a judge sees, with the released evaluation's semantics.

Read from the released parser (`eval/lwm_eval_utils/output_parser.py`, the AgentWorldBench
repository), written here in our own code:

1. Thinking goes first. Each `<think>` pairs with the next unused `</think>` after it (so nested
   and repeated blocks all go); a `</think>` left over removes everything before it (a chat
   template that opened the block in the prompt); a `<think>` left over removes text up to the
   next `<predicted_observation>` opening tag, or to the end when there is none. Tags match in
   any letter case.
2. The LAST opening `<predicted_observation>` tag wins; its content runs to the next closing tag,
   or to the end of the text when there is none. Without any opening tag the whole cleaned text
   is the prediction. Both are stripped of surrounding whitespace; a generation with nothing
   left (only thinking, only blanks) becomes the official text "No output".
3. The "**Environment Observation:**" marker is removed: the prefix when the text starts with it,
   else every occurrence (what the judge is shown, `extracted_observation`).

No output is malformed officially: every generation gives a text to judge. An empty generation
is a *failed* sample (it leaves every average), decided by the caller, not here. Our stricter
reading is kept as a diagnostic: `malformed` says the block the judge sees has no closing
tag, or that there is no `<predicted_observation>` block at all after thinking (the
`--scoring strict` mode and the RL reward use it; the official score never does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sources.readers.agentworldbench import OBSERVATION_MARKER

OBSERVATION_TAG = "predicted_observation"
OPEN_TAG = f"<{OBSERVATION_TAG}>"
CLOSE_TAG = f"</{OBSERVATION_TAG}>"
NO_OUTPUT = "No output"  # the released parser's text for a generation with nothing left
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_THINK_CLOSE_LEN = len("</think>")


@dataclass(frozen=True)
class ParsedPrediction:
    """What the judge sees (`observation`) and the strict diagnostics of the same output."""

    observation: str
    malformed: bool
    n_blocks: int = 0

    @property
    def judged_text(self) -> str:
        """What the judges score (the official extraction)."""
        return self.observation


def _think_ranges(text: str, stop_tag: str) -> list[tuple[int, int]]:
    """Spans of `text` that are thinking (unmerged), by the pairing rules of step 1."""
    tags = sorted([(m.start(), "open") for m in _THINK_OPEN.finditer(text)]
                  + [(m.start(), "close") for m in _THINK_CLOSE.finditer(text)])
    used: set[int] = set()
    ranges = []
    for i, (position, kind) in enumerate(tags):
        if kind != "open":
            continue
        partner = next((j for j in range(i + 1, len(tags))
                        if j not in used and tags[j][1] == "close"), None)
        if partner is not None:
            used.update((i, partner))
            ranges.append((position, tags[partner][0] + _THINK_CLOSE_LEN))
    for i, (position, kind) in enumerate(tags):
        if i not in used and kind == "close":
            used.add(i)
            ranges.append((0, position + _THINK_CLOSE_LEN))
    stop = re.compile(re.escape(f"<{stop_tag}>"), re.IGNORECASE) if stop_tag else None
    for i, (position, kind) in enumerate(tags):
        if i not in used and kind == "open":
            found = stop.search(text, position) if stop else None
            ranges.append((position, found.start() if found else len(text)))
    return ranges


def remove_thinking(text: str, stop_tag: str = OBSERVATION_TAG) -> str:
    """The text without its thinking (step 1); stripped when anything was removed, as the
    released parser does, untouched otherwise."""
    ranges = sorted(_think_ranges(text or "", stop_tag))
    if not ranges:
        return text or ""
    kept, end = [], 0
    for start, stop in ranges:
        if start > end:
            kept.append(text[end:start])
        end = max(end, stop)
    kept.append(text[end:])
    return "".join(kept).strip()


def last_tagged_block(text: str, tag: str) -> str | None:
    """The content after the last opening `<tag>` (any case) up to the next closing tag or the
    end, stripped; None when the text has no opening tag."""
    opens = list(re.finditer(re.escape(f"<{tag}>"), text, re.IGNORECASE))
    if not opens:
        return None
    start = opens[-1].end()
    close = re.compile(re.escape(f"</{tag}>"), re.IGNORECASE).search(text, start)
    return text[start:close.start() if close else len(text)].strip()


def remove_marker(text: str, marker: str = OBSERVATION_MARKER) -> str:
    """Step 3: the marker off the start, else out of the whole text; stripped."""
    if text.startswith(marker):
        return text[len(marker):].strip()
    return text.replace(marker, "").strip()


def extract_observation(generation: str) -> str:
    """The released parser's prediction text, before the marker is removed (steps 1 and 2)."""
    if not generation:
        return NO_OUTPUT
    cleaned = remove_thinking(generation)
    block = last_tagged_block(cleaned, OBSERVATION_TAG)
    if block is not None:
        return block
    return cleaned.strip() or NO_OUTPUT


_COMPLETE_BLOCK = re.compile(re.escape(OPEN_TAG) + r".*?" + re.escape(CLOSE_TAG),
                             re.DOTALL | re.IGNORECASE)


def parse_prediction(generation: str) -> ParsedPrediction:
    """What the judge sees (steps 1-3), and the strict diagnostic of the same generation:
    malformed when the block the judge sees has no closing tag, or there is no block at all."""
    cleaned = remove_thinking(generation or "")
    opens = list(re.finditer(re.escape(OPEN_TAG), cleaned, re.IGNORECASE))
    closed = bool(opens) and re.search(re.escape(CLOSE_TAG), cleaned[opens[-1].end():],
                                       re.IGNORECASE) is not None
    return ParsedPrediction(remove_marker(extract_observation(generation or "")),
                            malformed=not closed,
                            n_blocks=len(_COMPLETE_BLOCK.findall(cleaned)))


def format_prediction(observation: str, thinking: str = "") -> str:
    """The target text a world model emits: optional thinking, then one observation block."""
    think = f"<think>\n{thinking}\n</think>\n" if thinking else ""
    return f"{think}{OPEN_TAG}\n{observation}\n{CLOSE_TAG}"
