"""Features of short replies: acknowledgements, the action's argument values in them, and
observations that repeat an earlier one once volatile parts are masked.

A tool's acknowledgement tells a world model little, and what it tells depends on whether it
restates the call (echo: "Successfully wrote to /w/report.md", "Email sent successfully to
ana@x.com", "Data written to Sheet1") or not (boilerplate: "Range formatted successfully",
"Command completed with return code: 0", "[{'number of rows inserted': 1}]"). Both are found
here the same way for every tool: the action's argument values (the leaves of its JSON
arguments, or the lines and path-like tokens of a plain command) are looked up verbatim in the
observation, and what is left is checked for a generic acknowledgement with nothing
step-specific in it (quality/short_replies.py).

Columns (REPLY_COLUMN_DOCS):
- arg_chars_found: characters of the action's argument values found verbatim in the
  observation (each value at most once, longest first);
- ack_words: words left once those values, the harness's exit-status sentence and numbers are
  taken out (NULL when the observation is too long to be a short reply);
- ack_phrase: what is left is a generic acknowledgement (a word of ACK_WORDS) or nothing;
- confirm_prompt: the observation asks the agent to confirm ("Are you sure you want to ...");
- foreign_ids: identifier-like tokens (paths, e-mail addresses, dotted or mixed letter-digit
  names) left that the action did not contain (counted for acknowledgements only, else 0);
- action_line_share, seen_line_share, prev_line_share: see quality/line_shares.py;
- blank_view: a file view whose numbered lines are all blank (a new or emptied file);
- repeat_masked: 1 when the observation equals the previous one once timestamps, clock
  times, hex ids and long numbers are masked and whitespace collapsed, 2 when it equals an
  earlier one, else 0 (a match that differs where the action's arguments are quoted does not
  count: that is an acknowledgement with other arguments);
- fields_sent, fields_mirrored, write_call: the call's JSON fields, those a JSON reply returns
  under the same key, and whether the tool's name says it writes (quality/mirrored_fields.py).
The keys of a JSON or YAML reply ("status":, data_id:) are the tool's schema, not words of its
message: they are dropped before ack_words and foreign_ids are counted.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from quality.batch_actions import batch_actions, call_arguments
from quality.collector import collector_paused
from quality.flat_texts import flat_arrow_texts
from quality.line_marks import drop_line_marks
from quality.line_shares import HAS_CONTENT, LINE_MAX_CHARS, MIN_VALUE_CHARS
from quality.line_shares_compiled import encoded_line_shares
from quality.mirrored_fields import MIRRORED_COLUMN_DOCS, leaves_and_pairs, mirrored_columns
from quality.nested import strings_in
from quality.short_replies import _IDENTIFIER
from quality.short_reply_columns import reply_rows
from quality.volatile import REPEAT_ASCII_UNSAFE, REPEAT_VOLATILE, mask_column

REPEAT_HEAD_CHARS = 20_000  # repeat_masked compares this much of each observation

_TWO_LETTERS = re.compile(r"[A-Za-z].*?[A-Za-z]", re.DOTALL)
# Line marks dropped before lines are compared: a view's line numbers, a diff's or a quote's
# marker, and a shell prompt in front of a command (root@0:/app# ls) -- so that a terminal
# showing only the typed command is a line of the action.
_LINE_PREFIX = re.compile(r"(?m)^[ \t]*(\d+:|[+>] |[\w.-]+@[\w.-]+:[~/\w.-]*[#$] ?)")
# A file view's numbered line ("12:    return a / b") and what follows the number.
_VIEW_LINE = re.compile(r"(?m)^[ \t]*\d+:(.*)$")
_VIEW_LINE_START = r"(?m)^[ \t]*\d+:"  # (what _VIEW_LINE needs, for polars)

REPLY_COLUMN_DOCS: dict[str, str] = {
    "action_line_share": "share of the observation's content lines that restate the action "
                         "(the typed command on a terminal, the lines just inserted in a view)",
    "seen_line_share": "share of its content lines shown by an earlier observation of the "
                       "trajectory or holding one of the action's values",
    "prev_line_share": "share of its content lines (element numbers masked) that the previous "
                       "observation showed: 1.0 for the previous screen again, reordered or "
                       "cut down (NULL on a trajectory's first turn)",
    "blank_view": "a file view whose every numbered line ('1:', '2:', ...) is blank: a new or "
                  "emptied file shown by the tool that made it",
    "arg_chars_found": "characters of the action's argument values found verbatim in the "
                       "observation (echo evidence)",
    "ack_words": "words of a short observation once argument values, the exit-status sentence "
                 "and numbers are taken out (NULL: not a short reply)",
    "ack_lines": "lines of text (a letter or digit, no JSON / YAML key) left in a short "
                 "observation once argument values and the exit-status statement are taken "
                 "out (NULL: not a short reply): an acknowledgement is one sentence, a "
                 "program's report has several lines",
    "ack_phrase": "what is left is a generic acknowledgement ('created', 'successfully', "
                  "'done', ...) or nothing",
    "confirm_prompt": "the observation asks the agent to confirm ('Are you sure ...')",
    "foreign_ids": "identifier-like tokens (paths, addresses, ids) left that the action did "
                   "not contain (acknowledgements only, else 0)",
    "repeat_masked": "1: the previous observation again once timestamps, hex ids and long "
                     "numbers are masked; "
                     "2: an earlier one; 0: neither",
    **MIRRORED_COLUMN_DOCS,
}


def _kept(value: str) -> bool:
    """A value needs two letters: "2.0" (a JSON-RPC version) or "1" is in every reply."""
    return len(value) >= MIN_VALUE_CHARS and _TWO_LETTERS.search(value) is not None


_UNPARSED = object()


def action_values(action: str, parsed: Any = _UNPARSED,
                  lines_seen: dict[str, tuple[str, ...]] | None = None,
                  leaves: list[str] | None = None) -> list[str]:
    """The action's argument values, longest first: the leaves of `name({...})` JSON
    arguments (or of a bare JSON object), else its lines and its path-like tokens. `parsed`:
    its `call_arguments` (None: not a JSON call), when the caller has them; `lines_seen`:
    the values of each command line seen so far (kept by a caller across its actions:
    commands share lines, a tool call's template or a `cd` in front); `leaves`: the strings in
    `parsed` (mirrored_fields.leaves_and_pairs), when the caller has them."""
    if parsed is _UNPARSED:  # (not `is None`: a command's None would be parsed again)
        parsed = call_arguments(action)
    if isinstance(parsed, (dict, list)):
        strings = strings_in(parsed) if leaves is None else leaves
        kept = {value for text in strings if _kept(value := text.strip())}
    else:
        # (a line break is whitespace to split(): the tokens are those of each line)
        lines_seen = {} if lines_seen is None else lines_seen
        kept = set()
        for line in action.splitlines():
            if (found := lines_seen.get(line)) is None:
                found = lines_seen[line] = _line_values(line)
            kept.update(found)
    # (longest first, then in order: a stable sort by length of the sorted values)
    return sorted(sorted(kept), key=len, reverse=True)


def _line_values(line: str) -> tuple[str, ...]:
    """A command line's kept values: the line, and its tokens that are identifiers."""
    values = set(map(_identifier, line.split()))
    values.discard("")
    if _kept(stripped := line.strip()):
        values.add(stripped)
    return tuple(values)


@lru_cache(maxsize=65536)
def _identifier(token: str) -> str:
    """The token without the quotes around it if that is an _IDENTIFIER and kept, else ""
    (tokens repeat across commands: cached)."""
    stripped = token.strip("'\"")
    return stripped if _IDENTIFIER.fullmatch(stripped) and _kept(stripped) else ""


def masked_texts(observations: list[str] | pa.ChunkedArray
                 ) -> tuple[pa.LargeStringArray, pa.LargeStringArray]:
    """Each observation's head with volatile parts masked, (whitespace collapsed, line marks
    dropped): vectorised in polars, whose regex engine is far faster on long texts, and
    compiled scans. (An Arrow column is taken as it is: no copy through Python strings; the
    masked texts stay Arrow columns: repeat_masked compares them by Arrow's hashes,
    line_shares reads them as bytes.)"""
    heads = pl.Series(observations, dtype=pl.String).fill_null("").str.slice(0, REPEAT_HEAD_CHARS)
    masked = mask_column(heads, REPEAT_VOLATILE, "0", REPEAT_ASCII_UNSAFE)
    column = masked.to_arrow(compat_level=pl.CompatLevel.oldest())  # (large_string: one copy)
    # (whitespace runs as one space, none at the ends, and the line marks out: compiled scans,
    # 3x and 8x less CPU than polars' regex, which stopped at every line)
    return flat_arrow_texts(column), drop_line_marks(column, _LINE_PREFIX.pattern)


def repeat_masked(observations: list[str | None], flat: pa.Array, turn: np.ndarray,
                  quotes_action: np.ndarray) -> np.ndarray:
    """Per turn: 1 if equal (masked) to the previous observation of its trajectory, 2 if to an
    earlier one, else 0. `flat` holds the masked texts (masked_texts), `turn` each row's
    position in its trajectory (0 starts one). A
    masked match whose text differs and quotes the action's arguments does not count: that is
    an acknowledgement with other arguments (echo), not the same state."""
    # (the masked texts told apart by polars' 64-bit hash, 4x faster than Arrow's dictionary
    # encoding; a hash shared by two texts shows as a pair whose texts differ: then by codes)
    hashes = pl.Series(flat).hash().to_numpy()
    found = _repeats(observations, flat, _last_same(hashes, turn), quotes_action)
    if found is None:
        codes = pc.dictionary_encode(flat).indices.to_numpy()
        found = _repeats(observations, flat, _last_same(codes, turn), quotes_action)
    return found


def _last_same(keys: np.ndarray, turn: np.ndarray) -> np.ndarray:
    """Per row, the latest earlier row of its trajectory with the same key, else -1."""
    trajectory = np.cumsum(np.asarray(turn) == 0)
    order = np.lexsort((np.arange(len(keys)), keys, trajectory))  # (a group in row order)
    same = (trajectory[order[1:]] == trajectory[order[:-1]]) & (keys[order[1:]] == keys[order[:-1]])
    earlier = np.full(len(keys), -1, np.int64)
    earlier[order[1:][same]] = order[:-1][same]
    return earlier


def _repeats(observations: list[str | None], flat: pa.Array, earlier: np.ndarray,
             quotes_action: np.ndarray) -> np.ndarray | None:
    """repeat_masked when `earlier` holds each row's latest earlier row of its trajectory with
    the same masked text (_last_same by a hash of it); None where a pair's masked texts differ
    (a hash collision: `earlier` may have missed a row)."""
    out = np.zeros(len(observations), dtype=np.int8)
    # (only a row whose masked text came earlier in its trajectory can be a repeat: each
    # compared with that latest earlier row, as a walk keeping each text's latest would)
    for row, before in zip(np.flatnonzero(earlier >= 0).tolist(),
                           earlier[earlier >= 0].tolist(), strict=True):
        text, shown = observations[row] or "", observations[before] or ""
        # (equal texts have equal masked ones: only a differing pair is checked)
        if text != shown and flat[row].as_py() != flat[before].as_py():
            return None
        if text.strip() and (text == shown or not quotes_action[row]):
            out[row] = 1 if before == row - 1 else 2
    return out


def blank_view(observation: str) -> bool:
    """The observation shows numbered lines, and nothing after any of their numbers."""
    if len(observation) > LINE_MAX_CHARS or ":" not in observation:
        return False
    # (lazily: a view's first numbered line with content settles it, most often near the top)
    shown = False
    for line in _VIEW_LINE.finditer(observation):
        if HAS_CONTENT.search(line[1]):
            return False
        shown = True
    return shown


def _numbered_lines(observations: list[str] | pa.ChunkedArray) -> list[bool]:
    """Per observation: has it a line that opens like a file view's ("12:")? Only those can
    be a blank view; polars (Rust's regex) tells them apart in one pass, far faster than
    Python's re, whose multi-line `^` is tried at every character. (Its \\d is every Nd digit,
    as Python's: the same lines, or a newer Unicode's few more, which blank_view then reads.)"""
    found = pl.Series(observations, dtype=pl.String).str.contains(_VIEW_LINE_START)
    return found.fill_null(False).to_list()


@collector_paused()  # (its containers hold no cycle: quality/collector.py)
def reply_columns(batch: pa.Table, turn: np.ndarray) -> dict[str, pa.Array]:
    """The REPLY_COLUMN_DOCS columns of a batch of whole trajectories, in row order."""
    observations = batch["observation"].to_pylist()
    # Each distinct action parsed once (commands repeat), its arguments used twice.
    actions = batch_actions(batch["action"])
    lines_seen: dict[str, tuple[str, ...]] = {}
    # (a JSON call's strings and field pairs found in one walk of its arguments)
    walks = [leaves_and_pairs(parsed) if isinstance(parsed, (dict, list)) else (None, None)
             for parsed in actions.arguments]
    values = [action_values(text, parsed, lines_seen, leaves)
              for text, parsed, (leaves, _) in zip(actions.texts, actions.arguments, walks,
                                                   strict=True)]
    replies = reply_rows([values[k] for k in actions.index.tolist()], batch["observation"],
                         observations)
    flat, lined = masked_texts(batch["observation"])
    # (the actions as batch_actions encoded them: not dictionary-encoded a second time)
    action_share, seen_share, prev_share = encoded_line_shares(
        actions.texts, actions.index, values, batch["observation"], lined, turn)
    return {
        **mirrored_columns(actions, observations, batch["tool_name"],
                           [pairs for _, pairs in walks]),
        "action_line_share": action_share,
        "seen_line_share": seen_share,
        "prev_line_share": prev_share,
        "blank_view": pa.array([v and blank_view(o) for v, o in zip(
            _numbered_lines(batch["observation"]), observations, strict=True)], pa.bool_()),
        **replies,
        "repeat_masked": pa.array(repeat_masked(
            observations, flat, turn, replies["arg_chars_found"].to_numpy() > 0), pa.int8()),
    }
