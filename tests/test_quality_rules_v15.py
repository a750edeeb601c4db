"""Policy v15 on real turns of ../shared/realdev2 and ../shared/realdev: bare frames (empty), a
refusal naming what is missing and the browser's own error page (error), a screen cut down to
elements of the previous one (unchanged.screen_subset), the empty view of a file just created
(echo.empty_view). Each turn is run through the readers, the features and the rules as the
pipeline runs them, and the rule that named it is checked against what is really in the trace.
Skips without ../shared/realdev2 and ../shared/realdev.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO_ROOT

from grading.hand_labels import LabelledTurn, label_labelled_files
from quality.line_shares import line_shares
from quality.reply_features import blank_view, masked_texts

SHARED = REPO_ROOT.parent / "shared"
OSWORLD = "realdev2/os/osworld/expose_credentials/20250226@160531-failed"
SWEAGENT = "realdev2/swe/sweagent/commit0_portalocker_madeup_cmd_97af1e.traj"
WEB = "realdev2/web/webarena/render_{}_86af567.html"
SWE_VIEW = "realdev2/swe/sweagent/6e44b9__sweagenttestrepo-1c2844_2024-07.traj"
REPLAY = "realdev2/swe/sweagent/replay_{}.traj"
CREATED = "realdev/swe/sweagent/{}.traj"

# (file, turn_index, rule, what the observation is)
TURNS = [
    # "Executed a translation of your issued tool call: []" + "Here is the next screenshot."
    # + an image stand-in: nothing was run, nothing came back
    (OSWORLD, 10, "empty.no_content", "empty call list, screenshot removed"),
    (OSWORLD, 14, "empty.no_content", "the same frame again: empty before unchanged"),
    (OSWORLD, 17, "empty.no_content", "empty call list, [image]"),
    # a pruned page with only a tab bar, a nameless root element or a "no elements" note
    (WEB.format(5), 3, "empty.no_content", "`` Tab 0 (current): ... / [0] IMG '' / ..."),
    (WEB.format(8), 1, "empty.no_content", "Tab 1 (current): / [0] ? / ..."),
    (WEB.format(8), 2, "empty.no_content", "tab bar and [NO relevant elements]"),
    # a page that keeps a nameless element other than the root, under a new title: content
    (WEB.format(12), 4, "informative.new_content", "new title, [16] A ''"),
    # "No file open. Use the `open` command first." -- also when it repeats the previous turn
    (SWEAGENT, 0, "error.failed", "No file open"),
    (SWEAGENT, 1, "error.failed", "No file open, again"),
    (WEB.format(9), 3, "error.failed", "Tab 0 | chrome-error: //chromewebdata/"),
    # the previous screen reordered, or cut down to some of its elements
    (WEB.format(12), 1, "unchanged.screen_subset", "the same three elements, reordered"),
    (WEB.format(12), 2, "unchanged.screen_subset", "one of the previous three elements"),
    (WEB.format(12), 11, "unchanged.screen_subset", "three elements of the full menu before"),
    (WEB.format(1), 3, "unchanged.screen_subset", "three elements, one renumbered (8 -> 9)"),
    (WEB.format(6), 1, "unchanged.screen_subset", "behind a stray backtick in the previous"),
    # a screen with an element the previous one did not show is new
    (WEB.format(1), 4, "informative.new_content", "a new tab in the tab bar"),
    (WEB.format(12), 8, "informative.new_content", "an element with another role than before"),
    # `create reproduce.py` -> "[File: reproduce.py (1 lines total)]" and a blank "1:"
    (REPLAY.format("function_calling_replace_2024-11"), 0, "echo.empty_view", "new empty file"),
    (REPLAY.format("default_sys-env_window100"), 0, "echo.empty_view", "absolute path"),
    (CREATED.format("BabyEncryption"), 1, "echo.empty_view", "realdev: new decrypt.py"),
    (CREATED.format("replay__marshmallow-code__marshmallow-1867__default_sys-env_cursors_"
                    "window100__t"), 0, "echo.empty_view", "realdev: with cursor marks"),
    # a file view with content is not empty
    (SWE_VIEW, 1, "informative.new_content", "a 10-line file opened"),
]


@pytest.fixture(scope="module")
def labelled(tmp_path_factory) -> dict[tuple[str, int], dict]:
    if not (SHARED / "realdev2").is_dir() or not (SHARED / "realdev").is_dir():
        pytest.skip(f"real trajectories not found at {SHARED / 'realdev2'} / realdev")
    turns = [LabelledTurn(n, file, "$", index, "informative", str(Path(file).parent))
             for n, (file, index, _, _) in enumerate(TURNS, 1)]
    rows = label_labelled_files(turns, SHARED, tmp_path_factory.mktemp("v15"))
    return {(r["file"], r["turn_index"]): r for r in rows.to_pylist()}


@pytest.mark.parametrize(("file", "turn_index", "rule", "what"), TURNS,
                         ids=[f"{Path(f).name}:{i}" for f, i, _, _ in TURNS])
def test_real_turn_rule(labelled, file, turn_index, rule, what):
    row = labelled[file, turn_index]
    assert row["rule"] == rule, (what, row["rule"], row)


def test_blank_view_is_numbered_lines_with_nothing_after_them():
    assert blank_view("[File: reproduce.py (1 lines total)]\n1:")
    assert blank_view("[File: a.py (2 lines total)]\n<<<<< START CURSOR >>>>>\n1:\n2:  \n")
    assert not blank_view("[File: a.py (2 lines total)]\n1:import os\n2:")
    assert not blank_view("status: ok") and not blank_view("")


def test_screen_subset_feature_reads_lines_as_they_are():
    """prev_line_share masks element numbers and stray markup in front, nothing else: a moved
    bounding box or a new clock time is a new line."""
    observations = ["`Tab 0 (current): Shop\n\t[20] SPAN 'Orders'\n\t[21] SPAN 'Amounts'",
                    "Tab 0 (current): Shop\n\t\t[7] SPAN 'Amounts'",
                    "Tab 0 (current): Shop\n\t\t[7] SPAN 'Amounts'\n\t\t[8] SPAN 'New'",
                    "[1] Button \"OK\" bbox=(0,296,1080,1362)",
                    "[1] Button \"OK\" bbox=(0,296,1080,2182)"]
    turn = [0, 1, 2, 0, 1]
    _, lined = masked_texts(observations)
    _, _, prev = line_shares(["none"] * 5, [[] for _ in observations], observations,
                             lined.to_pylist(), turn)
    assert prev == [None, 1.0, 2 / 3, None, 0.0]


def test_a_line_that_is_only_stray_markup_has_no_previous_share():
    """An emoji alone is a content line to the other shares but stray markup in front of an
    element to prev_line_share, which has no line left to divide by: NULL, not a crash
    (ZeroDivisionError before)."""
    observations = ["Tab 0 (current): Shop", "\U0001F600", "Tab 0 (current): Shop\n\U0001F600"]
    _, lined = masked_texts(observations)
    action, seen, prev = line_shares(["wait"] * 3, [[] for _ in observations], observations,
                                     lined.to_pylist(), [0, 1, 2])
    assert prev == [None, None, 0.0]  # (the emoji screen showed no element line)
    assert action[1] == 0.0 and seen[1] == 0.0
