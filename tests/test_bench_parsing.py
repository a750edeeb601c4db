"""Prediction extraction with the released evaluation's semantics (issue 16).

The expected texts below were derived by reading the released parser
(`eval/lwm_eval_utils/output_parser.py`: `_remove_thinking_tags`, `parse_model_output`,
`clean_response_marker`); each case asserts our extraction. Where the released checkout is
beside the repository (../shared/official-agentworld), the same table is also run through its
parser, so a misreading of it fails here too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.parsing import (
    NO_OUTPUT,
    extract_observation,
    format_prediction,
    parse_prediction,
    remove_thinking,
)
from tests.released_code import released_module

P, C, M = "<predicted_observation>", "</predicted_observation>", "**Environment Observation:**"

# (case, generation, what the judge sees, strict diagnostic: malformed)
CASES = [
    ("closed think, then the block", f"<think>plan</think>{P}\nls out\n{C}", "ls out", False),
    ("no tags: the whole text", "total 0\n", "total 0", True),
    ("empty generation", "", NO_OUTPUT, True),
    ("only whitespace", "  \n\t ", NO_OUTPUT, True),
    ("only a closed think block", "<think>x</think>", NO_OUTPUT, True),
    ("cut off while thinking", "<think>still going", NO_OUTPUT, True),
    ("unclosed think stops at the block", f"<think>reasoning {P}a{C}", "a", False),
    ("unclosed think, draft then final block",
     f"<think>plan {P}draft{C} more {P}final{C}", "final", False),
    ("lone </think>: everything before it goes", f"reasoning</think>\n{P}x{C}", "x", False),
    ("lone </think> without a block", "reasoning here</think>answer", "answer", True),
    ("nested think blocks", f"<think>a<think>b</think>c</think>{P}ok{C}", "ok", False),
    ("fake block inside thinking is ignored", f"<think>{P}fake{C}</think>{P}real{C}", "real",
     False),
    ("several blocks: the last wins", f"{P}one{C} wait {P}two{C}", "two", False),
    ("unclosed last block runs to the end", f"{P}one{C} again {P}two cut", "two cut", True),
    ("a single unclosed block", f"{P}\nstarted but cut", "started but cut", True),
    ("upper-case observation tags", "<PREDICTED_OBSERVATION>X</Predicted_Observation>", "X",
     False),
    ("upper-case think tags", f"<THINK>t</THINK>{P}y{C}", "y", False),
    ("mixed-case think pair", "<Think>a</think>b", "b", True),
    ("marker at the start of the block", f"{P}\n{M}\nhello\n{C}", "hello", False),
    ("marker in the middle: removed there", f"{P}line1\n{M} line2{C}", "line1\n line2", False),
    ("marker first: only the prefix goes", f"{M}\na {M} b", f"a {M} b", True),
    ("whitespace around the content", f"{P}\n\n  a  \n\n{C}", "a", False),
    ("empty block stays empty", f"{P}{C}", "", False),
    ("closing tag alone: the whole text", f"text {C}", f"text {C}", True),
    ("think after the block, unclosed", f"{P}x{C}<think>more", "x", False),
    ("first <think> pairs with a later </think>, eating the block",
     f"<think>a {P}b{C}<think>c</think>", NO_OUTPUT, True),
    ("chatter around the block", f"Sure! {P}x{C} done", "x", False),
    ("only the marker", M, "", True),
    ("tag with attributes is not a tag", f"<predicted_observation id=1>x{C}",
     f"<predicted_observation id=1>x{C}", True),
]


@pytest.mark.parametrize(("generation", "seen", "malformed"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_extraction_table(generation: str, seen: str, malformed: bool) -> None:
    parsed = parse_prediction(generation)
    assert parsed.observation == seen
    assert parsed.malformed is malformed


def test_table_is_large_enough_and_covers_the_kinds() -> None:
    assert len(CASES) >= 20
    names = " ".join(case[0] for case in CASES)
    for kind in ("think", "nested", "several", "unclosed", "upper", "marker", "whitespace",
                 "empty"):
        assert kind in names


def test_table_agrees_with_the_released_parser(official_dir: Path) -> None:
    released = released_module(official_dir, "lwm_eval_utils.output_parser")
    for name, generation, seen, _ in CASES:
        theirs = released.clean_response_marker(
            released.parse_model_output(generation, "predicted_observation"), "terminal")
        assert theirs == seen, name
        assert extract_observation(generation) == released.parse_model_output(
            generation, "predicted_observation"), name


def test_thinking_removal_alone() -> None:
    assert remove_thinking("no tags \n") == "no tags \n"  # untouched without thinking
    assert remove_thinking("a</think>b</think>c") == "c"
    assert remove_thinking(f"<think>x {P}y") == f"{P}y"


def test_format_round_trip() -> None:
    for observation in ["a\nb", "\nleading newline", "trailing\n", "  spaced  "]:
        parsed = parse_prediction(format_prediction(observation, thinking="why"))
        assert parsed.observation == observation.strip() and not parsed.malformed
        assert parsed.n_blocks == 1
