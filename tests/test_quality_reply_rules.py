"""Policy v2's tool-independent evidence on hand-built turns: acknowledgements that restate the
call (echo) or nothing (boilerplate), refusal phrasing (error), a blank browser tab (empty), a
screen again with only its clock changed (unchanged)."""

from __future__ import annotations

import pyarrow.parquet as pq
from quality_rows import trajectory, write_partition

from quality.features import compute_turn_features
from quality.labels import label_turns
from quality.reply_features import action_values

TOOL = {"action_kind": "tool_call", "observation_format": "tool_result_text"}
TREE = {"action_kind": "click", "observation_format": "a11y_tree"}
SCREEN = "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True\n\t[5] StaticText '{}'"


def test_action_values_are_the_arguments():
    assert action_values('fs-write_file({"path": "/w/a.md", "content": "x"})') == ["/w/a.md"]
    assert action_values("rpc({\"jsonrpc\": \"2.0\", \"method\": \"tools/call\"})") == [
        "tools/call"]  # "2.0" is in every reply: not a value
    assert "notes/today.txt" in action_values("cat notes/today.txt")


def test_v2_rules_on_hand_built_turns(tmp_path):
    steps = [
        ("fs-list_directory({\"path\": \"/w\"})", "[FILE] a.md\n[FILE] b.csv", TOOL),
        ("fs-write_file({\"path\": \"/w/report.md\", \"content\": \"# Report\"})",
         "Successfully wrote to /w/report.md", TOOL),
        ("xl-format_range({\"sheet\": \"Sheet1\", \"range\": \"B6:B9\"})",
         "Range formatted successfully", TOOL),
        ("mail-search({\"query\": \"kaiming\"})", "No emails found matching query: kaiming", TOOL),
        ("term-run({\"command\": \"mkdir -p /w/out\"})",
         "\nCommand completed with return code: 0", TOOL),
        ("click [12]", "Tab 0 (current): New Tab\n\n[1] RootWebArea '' focused: True", TREE),
        ("click [5]", SCREEN.format("Cart updated at 10:41:07"), TREE),
        ("hover [5]", SCREEN.format("Cart updated at 10:41:09"), TREE),
    ]
    turns, _ = write_partition(tmp_path, "mcp", {"t.json": trajectory("task", steps)})
    compute_turn_features(turns, tmp_path / "f.parquet")
    label_turns(tmp_path / "f.parquet", tmp_path / "l.parquet")
    categories = pq.read_table(tmp_path / "l.parquet")["category"].to_pylist()
    assert categories == ["informative", "echo", "boilerplate", "error", "boilerplate",
                          "empty", "informative", "unchanged"]
