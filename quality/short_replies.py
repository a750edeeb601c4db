"""A short reply's words once the action's argument values are out: what is left of an
acknowledgement ("File written successfully", "Email sent to ana@x.com" less the address), and
whether the observation asks the agent to confirm (quality/reply_features.py's columns
arg_chars_found, ack_words, ack_lines, ack_phrase, confirm_prompt and foreign_ids, whose
meaning its docstring gives).

What costs is Python's `re` on every turn; it runs only where it can change the answer: the
confirmation prompt only on observations holding one of its words (a batch is tested at once
by polars' literal search), and a short reply's words once per distinct text (replies repeat).
The stage runs these for a whole batch at once (quality/short_reply_columns.py's reply_rows,
polars passes over the ASCII texts); reply_row and _short_reply stay the plain definitions.
"""

from __future__ import annotations

import re
from functools import lru_cache

import polars as pl
import pyarrow as pa

SHORT_REPLY_CHARS = 600  # longer observations are not short replies

# A harness's sentence saying how the command ended: "Command completed with return code: 0",
# "[Command finished with exit code 0]", "exit status 0".
EXIT_STATUS = re.compile(r"(?i)\[?\s*(the )?(command )?(completed|finished|exited)? ?with "
                         r"(return|exit) (code|status):? ?-?\d+\.?\s*\]?"
                         # OpenHands' frame line naming the shell's folder
                         r"|\[(current working directory|python interpreter): [^\]\n]*\]"
                         # mini-swe-agent's exit status and the (empty) output tags around it
                         r"|<returncode>\s*-?\d+\s*</returncode>|</?output>")
ACK_WORDS = frozenset(
    "success successful successfully succeeded complete completed done ok okay created updated"
    " deleted inserted removed saved written wrote sent moved copied renamed formatted applied"
    " executed claimed added uploaded replaced cleared submitted scheduled started".split())
CONFIRM_PROMPT = re.compile(r"\b([Aa]re you sure|[Dd]o you want to (continue|proceed)"
                            r"|[Cc]onfirm (that|to|you))\b")
CONFIRM_TAIL_CHARS = 600  # a confirmation prompt ends the screen
_CONFIRM_HINTS = ("sure", "want to", "onfirm")  # (plain words: a regex of them as they are)
# Volatile or generic values: ISO timestamps, clock times, dates, numbers.
# (= \d{4}-\d\d-\d\d([T ][\d:.]+Z?)?|\d+([:.,]\d+)* with the first digit taken out in front:
# the same matches, but a pattern that opens with a class lets re skip to the next digit
# in C, at a third of the time; _WORD likewise)
_NUMBERISH = re.compile(r"\d(?:\d{3}-\d\d-\d\d(?:[T ][\d:.]+Z?)?|\d*(?:[:.,]\d+)*)")
_ADDRESS = r"[\w.+-]+@[\w-]+\.[\w.]+"
_PATH = r"(?:[\w.-]*/[\w.-]+)+"
_NAME = r"\b[A-Za-z_]+\d[\w]*|\b\w+[._-]\w+[\w.-]*"
_IDENTIFIER = re.compile(f"{_ADDRESS}|{_PATH}|{_NAME}")
# _IDENTIFIER for a text that holds an "@" or not, a "/" or not: without the address or path
# part where it cannot match (the same matches), whose run over each word then backtracks
# (findall in 35% less time on the short replies).
_IDENTIFIER_HOLDING = {(at, slash): re.compile("|".join([_ADDRESS] * at + [_PATH] * slash
                                                        + [_NAME]))
                       for at in (False, True) for slash in (False, True)}
_WORD = re.compile(r"[A-Za-z][A-Za-z]+")  # (= [A-Za-z]{2,})
_PAST_TENSE = re.compile(r"[A-Z][a-z]{2,}ed")  # "Scaled", "Switched", "Encrypted"
_ALNUM = re.compile(r"[^\W_]")
# A key of a JSON object ("status":) or of a YAML line (data_id:, - status:).
_REPLY_KEY = re.compile(r'(?m)"[\w .-]{1,40}"\s*:|^[ \t]*-?[ \t]*[a-z_][a-z0-9_]*:(?=\s|$)')


def reply_row(values: list[str], observation: str, hinted: bool = True
              ) -> tuple[int, int | None, int | None, bool, bool, int]:
    """(arg_chars_found, ack_words, ack_lines, ack_phrase, confirm_prompt, foreign_ids) of one
    turn whose action has the argument `values` (action_values). `hinted`: False when the
    observation holds none of _CONFIRM_HINTS (confirm_hints tells a whole batch at once)."""
    head = observation[:SHORT_REPLY_CHARS * 4]
    rest, found = head, 0
    for value in values:
        if value in rest:
            found += len(value)
            rest = rest.replace(value, " ")
    # (cheap substring tests first: regexes are the cost of this function)
    confirm = hinted and _confirms(observation[-CONFIRM_TAIL_CHARS:])
    if len(observation) > SHORT_REPLY_CHARS and not confirm:
        return found, None, None, False, False, 0
    words, lines, ack, foreign = _short_reply(rest)
    return found, words, lines, ack, confirm, foreign


def _confirms(tail: str) -> bool:
    return any(hint in tail for hint in _CONFIRM_HINTS) and bool(CONFIRM_PROMPT.search(tail))


def confirm_hints(observations: pa.ChunkedArray) -> list[bool]:
    """Per observation: does it hold one of _CONFIRM_HINTS (where its tail could; polars finds
    these plain words by a literal search, 8x faster than Python's tests of each tail)?"""
    found = pl.Series(observations, dtype=pl.String).str.contains("|".join(_CONFIRM_HINTS))
    return found.fill_null(False).to_list()


@lru_cache(maxsize=16384)
def _short_reply(rest: str) -> tuple[int, int, bool, int]:
    """(ack_words, ack_lines, ack_phrase, foreign_ids) of a short reply once the argument
    values are out: a function of that text alone, which repeats ("File written
    successfully"; 37k distinct of 64k short replies in the 148k corpus), so cached."""
    if "with" in rest.lower() or "<returncode>" in rest:
        rest = EXIT_STATUS.sub(" ", rest)
    # The keys of a JSON or YAML reply ("status":, data_id:) are the tool's schema, the same in
    # every reply: they are neither words of its message nor identifiers it names.
    # Lines of text besides the fields of a JSON / YAML reply: a sentence is one, a program's
    # report or a test run has several ("Test 1: [0, 1]", "Tests completed successfully!").
    # (a key has a colon: a line without one needs no regex)
    lines = sum(1 for line in rest.splitlines()
                if _ALNUM.search(line) and not (":" in line and _REPLY_KEY.search(line)))
    if ":" in rest:
        rest = _REPLY_KEY.sub(" ", rest)
    plain = _NUMBERISH.sub(" ", rest)
    words = _WORD.findall(plain)
    # Nothing left but punctuation ("Command completed with return code: 0" alone) counts as
    # generic; a bare number left ("33") is the command's output, not an acknowledgement.
    # ... or a reply that opens with a verb in the past tense: a report of what was just done
    # ("Scaled deployment X to 0 replicas", "Switched to a new branch 'X'"), whatever the verb.
    ack = (not _ALNUM.search(rest) or not ACK_WORDS.isdisjoint(map(str.lower, words))
           or bool(words and _PAST_TENSE.fullmatch(words[0])))
    foreign = len(_IDENTIFIER_HOLDING["@" in plain, "/" in plain].findall(plain)) if ack else 0
    return len(words), lines, ack, foreign
