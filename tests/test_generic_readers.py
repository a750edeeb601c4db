"""Tests of the generic readers: chat JSONL, AgentWorldBench JSONL, Parquet / datasets tables."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from reader_checks import claimed_fixtures, split_items

from sources.readers.agentworldbench import AgentWorldBenchReader, split_prompt, strip_observation
from sources.readers.base import FormatError, Reader, read_head
from sources.readers.chat_jsonl import ChatJsonlReader
from sources.readers.search_r1 import SearchR1Reader
from sources.readers.table_rows import TableRowsReader
from sources.readers.toolathlon import ToolathlonReader


def _assert_rejects_all_fixtures(reader: Reader, traces_dir: Path) -> None:
    assert claimed_fixtures(reader, traces_dir) == set()


def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


CHAT_WEATHER = {
    "messages": [
        {"role": "system", "content": "You are a travel assistant with MCP tools."},
        {"role": "user", "content": "Should I pack an umbrella for Paris tomorrow?"},
        {"role": "assistant", "content": None, "tool_calls": [
            _call("call_1", "weather-get_forecast", '{"city": "Paris", "days": 1}')]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": '{"city": "Paris", "forecast": [{"day": "tomorrow", "rain_mm": 6.5}]}'},
        {"role": "assistant", "content": "Yes: 6.5 mm of rain is forecast."},
    ],
    "domain": "mcp", "outcome": "success", "model": "gpt-4.1",
}
CHAT_FILES = {
    "messages": [
        {"role": "user", "content": "List the repo root."},
        {"role": "assistant", "content": "Listing.", "tool_calls": [
            _call("c1", "filesystem-list_directory", '{"path": "."}'),
            _call("c2", "git-status", "{}")]},
        {"role": "tool", "tool_call_id": "c1", "content": "[FILE] README.md\n[DIR] src"},
        {"role": "tool", "tool_call_id": "c2",
         "content": "Error executing tool git-status: not a git repository"},
    ],
    "task": "Show what is in the repository", "domain": "terminal", "success": False,
}


# --- chat JSONL ------------------------------------------------------------------------------

def _write_chat_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "chats.jsonl"
    lines = [
        json.dumps(CHAT_WEATHER).encode(),
        b'{"messages": [{"role": "user", "content": "trunc',
        b'{"messages": [{"role": "user", "content": "caf\xe9"}]}',  # Latin-1, not UTF-8
        json.dumps({"messages": "not a list"}).encode(),
        b"",
        json.dumps(CHAT_FILES).encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_chat_jsonl_reads_good_lines_and_quarantines_bad_ones(tmp_path: Path) -> None:
    items = list(ChatJsonlReader().read(_write_chat_jsonl(tmp_path)))
    trajectories, quarantined = split_items(items)
    assert [t.position for t in trajectories] == ["line 1", "line 6"]
    weather, files = trajectories
    assert weather.task == "Should I pack an umbrella for Paris tomorrow?"
    assert weather.system_prompt == "You are a travel assistant with MCP tools."
    assert weather.outcome == "success"
    assert weather.turns[0].action == 'weather-get_forecast({"city": "Paris", "days": 1})'
    assert weather.turns[0].observation_format == "tool_result_json"
    assert weather.metadata == {"domain": "mcp", "model": "gpt-4.1",
                                "final_response": "Yes: 6.5 mm of rain is forecast."}
    assert files.task == "Show what is in the repository"
    assert files.metadata["first_user_message"] == "List the repo root."
    assert files.metadata["domain"] == "terminal"
    assert files.outcome == "failure"
    assert [t.tool_name for t in files.turns] == ["filesystem-list_directory", "git-status"]
    assert "[DIR] src" in files.turns[0].observation.splitlines()
    assert [t.is_error for t in files.turns] == [None, True]
    assert [q.position for q in quarantined] == [
        "line 2 column 49", "line 3 byte 46", "line 4 $.messages"]
    assert quarantined[1].reason.startswith("invalid UTF-8")


def test_chat_jsonl_sniff(traces_dir: Path, tmp_path: Path) -> None:
    reader = ChatJsonlReader()
    _assert_rejects_all_fixtures(reader, traces_dir)
    sample = _write_chat_jsonl(tmp_path)
    assert reader.sniff(sample, read_head(sample))
    assert not ToolathlonReader().sniff(sample, read_head(sample))
    assert not SearchR1Reader().sniff(sample, read_head(sample))
    # A one-object file with a boolean `pass` is Toolathlon's, even named .jsonl.
    single = tmp_path / "one.jsonl"
    single.write_text(json.dumps({"pass": True, **CHAT_WEATHER}), "utf-8")
    assert not reader.sniff(single, read_head(single))
    assert ToolathlonReader().sniff(single, read_head(single))


# --- AgentWorldBench -------------------------------------------------------------------------

MCP_SYSTEM = "# Role and Objective\n\nYou are a **Tool World Model** that simulates MCP servers."
MCP_PROMPTS = [
    ("### Turn 1\n**Action:**\n```json\n"
    '{"name": "filesystem.list_directory", "arguments": {"path": "/workspace"}}\n```'),
    ("### Turn 2\n**Action:**\n```json\n"
    '{"name": "filesystem.read_file", "arguments": {"path": "/workspace/notes.md"}}\n```'),
    ("### Turn 3\n**Action:**\n```json\n"
    '{"name": "filesystem.write_file", "arguments": {"path": "/workspace/todo.md", '
    '"content": "- ship v2"}}\n```'),
]
MCP_RESPONSES = [
    "**Environment Observation:**\n[FILE] notes.md\n[FILE] plan.txt\n[DIR] archive",
    "**Environment Observation:**\n# Notes\n- ship v2 on Friday\n- ask Dana about the release",
    ('**Environment Observation:**\n{"content": [{"type": "text", "text": "Successfully wrote '
    'to /workspace/todo.md"}], "isError": false}'),
]
ANDROID_PROMPTS = [
    ("### Turn 1\n**Task Instruction:**\nAdd a contact named Ada Lovelace with phone 555-0100.\n\n"
    "**Current State:**\n[0] TextView 'Contacts' (0,0,1080,120)\n[1] Button 'Create contact' "
    "clickable (900,2000,1040,2140)\n\n**Action:**\n{\"action_type\": \"click\", \"index\": 1}"),
    ("### Turn 2\n**Task Instruction:**\nAdd a contact named Ada Lovelace with phone 555-0100.\n\n"
    "**Current State:**\n[0] EditText 'First name' editable (40,300,1040,420)\n[1] EditText "
    "'Phone' editable (40,700,1040,820)\n\n**Action:**\n"
    "{\"action_type\": \"input_text\", \"text\": \"Ada\", \"index\": 0}"),
]
ANDROID_RESPONSES = [
    ("**Environment Observation:**\n[0] EditText 'First name' editable (40,300,1040,420)\n"
    "[1] EditText 'Phone' editable (40,700,1040,820)"),
]


def _write_agentworldbench(tmp_path: Path) -> Path:
    records = [
        {"task": "mcp", "id": 145256090131919, "prompt": MCP_PROMPTS, "response": MCP_RESPONSES,
         "current_prompt": MCP_PROMPTS[1], "system_str": MCP_SYSTEM, "turn_idx": 2,
         "total_turns": 3},
        {"task": "agentworldbench/android", "id": 99120, "prompt": ANDROID_PROMPTS,
         "response": ANDROID_RESPONSES, "current_prompt": ANDROID_PROMPTS[1],
         "system_str": "You are an **Android World Model**.", "turn_idx": 2, "total_turns": 6},
        {"task": "terminal", "id": 7, "prompt": "### Turn 1\n**Action:**\n[\"ls -la\\n\"]",
         "response": ("**Environment Observation:**\nroot@4f2a:/app# ls -la\ntotal 0\n"
                      "root@4f2a:/app# "),
         "current_prompt": "### Turn 1\n**Action:**\n[\"ls -la\\n\"]", "system_str": "Terminal",
         "turn_idx": 1, "total_turns": 1},
    ]
    lines = [json.dumps(record).encode() for record in records]
    lines.insert(1, json.dumps({"task": "mcp", "id": 1, "prompt": ["a"], "response": ["b", "c"],
                                "current_prompt": "a", "system_str": "", "turn_idx": 1}).encode())
    lines.insert(2, json.dumps({"task": "mcp", "id": 2, "prompt": ["a"], "response": ["b"],
                                "current_prompt": "a", "system_str": "", "turn_idx": "1"}).encode())
    lines.insert(3, b'{"task": "web", "id": 3, "prompt": ["### Turn 1\\n**Act')
    path = tmp_path / "mcp_test.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_agentworldbench_samples(tmp_path: Path) -> None:
    path = _write_agentworldbench(tmp_path)
    trajectories, quarantined = split_items(list(AgentWorldBenchReader().read(path)))
    assert [t.position for t in trajectories] == ["line 1", "line 5", "line 6"]
    mcp, android, terminal = trajectories

    assert mcp.task == "" and mcp.outcome == "unknown" and mcp.system_prompt is None
    assert len(mcp.turns) == 3
    assert mcp.turns[0].action == (
        '```json\n{"name": "filesystem.list_directory", "arguments": {"path": "/workspace"}}\n```')
    assert mcp.turns[0].observation == "[FILE] notes.md\n[FILE] plan.txt\n[DIR] archive"
    assert "- ask Dana about the release" in mcp.turns[1].observation.splitlines()
    assert [t.observation_format for t in mcp.turns] == [
        "tool_result_text", "tool_result_text", "tool_result_json"]
    assert {t.action_kind for t in mcp.turns} == {"tool_call"}
    assert mcp.metadata["domain"] == "mcp"
    assert (mcp.metadata["id"], mcp.metadata["turn_idx"], mcp.metadata["total_turns"]) == (
        145256090131919, 2, 3)
    assert mcp.metadata["target_action"] == mcp.turns[1].action
    assert mcp.metadata["target_turn_index"] == 1
    assert mcp.metadata["system_str"] == MCP_SYSTEM

    # GUI: the task is the Task Instruction; the target (turn 2) has no observation here.
    assert android.task == "Add a contact named Ada Lovelace with phone 555-0100."
    assert android.metadata["domain"] == "android"
    assert len(android.turns) == 1
    assert android.turns[0].action == '{"action_type": "click", "index": 1}'
    assert (android.turns[0].action_kind, android.turns[0].observation_format) == (
        "click", "ui_elements")
    assert android.metadata["initial_state"].startswith("[0] TextView 'Contacts'")
    assert "current_states" not in android.metadata  # turn 2's state is turn 1's observation
    assert android.metadata["target_action"] == (
        '{"action_type": "input_text", "text": "Ada", "index": 0}')
    assert android.metadata["target_turn_index"] is None
    assert "calls_without_observation" not in android.metadata

    assert terminal.turns[0].action == '["ls -la\\n"]'
    assert terminal.turns[0].observation == "root@4f2a:/app# ls -la\ntotal 0\nroot@4f2a:/app# "
    assert (terminal.turns[0].action_kind, terminal.turns[0].observation_format) == (
        "shell", "terminal_screen")

    assert [q.position for q in quarantined] == [
        "line 2 $.response", "line 3 $.turn_idx", "line 4 column 55"]


def test_agentworldbench_prompt_parts() -> None:
    action, sections = split_prompt("### Turn 4\n**Action:**\nsearch[\"tallest building\"]")
    assert (action, sections) == ('search["tallest building"]', {})
    action, sections = split_prompt("### Turn 1\n**Historical Context:**\nTurn 0 ...\n\n"
                                    "**Action:**\nclick(12)")
    assert action == "click(12)"
    assert sections == {"Historical Context": "Turn 0 ..."}
    assert strip_observation("**Environment Observation:**\n  indented") == "  indented"
    assert strip_observation("no marker") == "no marker"


def test_agentworldbench_sniff(traces_dir: Path, tmp_path: Path) -> None:
    reader = AgentWorldBenchReader()
    _assert_rejects_all_fixtures(reader, traces_dir)
    sample = _write_agentworldbench(tmp_path)
    assert reader.sniff(sample, read_head(sample))
    assert not ChatJsonlReader().sniff(sample, read_head(sample))
    assert not SearchR1Reader().sniff(sample, read_head(sample))


# --- Parquet / datasets tables ---------------------------------------------------------------

TURN_ROWS = [
    {"trajectory_id": "t-001", "turn_index": 0, "action": "ls /app",
     "observation": "main.py\nREADME.md", "action_kind": "shell", "observation_format": "stdout",
     "tool_name": None, "exit_code": 0, "is_error": False, "task": "Fix the build",
     "outcome": "success", "domain": "terminal", "metadata": '{"model": "m1"}'},
    {"trajectory_id": "t-001", "turn_index": 1, "action": "python main.py",
     "observation": "Traceback (most recent call last):\nImportError: no module named yaml",
     "action_kind": "shell", "observation_format": "stdout", "tool_name": None, "exit_code": 1,
     "is_error": True, "task": "Fix the build", "outcome": "success", "domain": "terminal",
     "metadata": '{"model": "m1"}'},
    {"trajectory_id": "t-002", "turn_index": 0, "action": "search[\"yaml\"]",
     "observation": "PyYAML 6.0", "action_kind": None, "observation_format": None,
     "tool_name": "search", "exit_code": None, "is_error": None, "task": "Find yaml",
     "outcome": "bogus", "domain": "search", "metadata": None},
    {"trajectory_id": "t-003", "turn_index": 1, "action": "x", "observation": "y",
     "action_kind": "shell", "observation_format": "stdout", "tool_name": None, "exit_code": 0,
     "is_error": False, "task": "skips turn 0", "outcome": "unknown", "domain": "os",
     "metadata": None},
    {"trajectory_id": "t-001", "turn_index": 2, "action": "late", "observation": "row",
     "action_kind": "shell", "observation_format": "stdout", "tool_name": None, "exit_code": 0,
     "is_error": False, "task": "Fix the build", "outcome": "success", "domain": "terminal",
     "metadata": None},
]


def _check_turn_rows(items: list, prefix: str = "") -> None:
    trajectories, quarantined = split_items(items)
    assert [t.position for t in trajectories] == [f"{prefix}row 0", f"{prefix}row 2"]
    build, search = trajectories
    assert (build.task, build.outcome, len(build.turns)) == ("Fix the build", "success", 2)
    assert build.turns[1].action == "python main.py"
    assert "ImportError: no module named yaml" in build.turns[1].observation.splitlines()
    assert (build.turns[1].exit_code, build.turns[1].is_error) == (1, True)
    assert build.metadata == {"model": "m1", "domain": "terminal"}
    assert (search.outcome, search.turns[0].action_kind, search.turns[0].observation_format) == (
        "unknown", "other", "text")
    assert search.turns[0].tool_name == "search"
    assert [(q.position, q.reason.split(":")[0]) for q in quarantined] == [
        (f"{prefix}row 3", "turn_index 1 at row offset 0"),
        (f"{prefix}row 4", "trajectory_id 't-001' appears again after other rows"),
    ]


def test_parquet_turn_rows_streamed_in_small_batches(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "turns.parquet"
    pq.write_table(pa.Table.from_pylist(TURN_ROWS), path, row_group_size=2)
    monkeypatch.setattr("sources.readers.table_rows.BATCH_ROWS", 1)  # a trajectory spans batches
    reader = TableRowsReader()
    assert reader.sniff(path, read_head(path))
    _check_turn_rows(list(reader.read(path)))


def test_parquet_chat_rows(tmp_path: Path) -> None:
    path = tmp_path / "chats.parquet"
    table = pa.Table.from_pylist([CHAT_WEATHER, CHAT_FILES])
    created = pa.array([datetime(2025, 3, 1, 12, 30), None], pa.timestamp("s"))
    pq.write_table(table.append_column("created", created), path)
    trajectories, quarantined = split_items(list(TableRowsReader().read(path)))
    assert quarantined == []
    weather, files = trajectories
    assert weather.position == "row 0"
    assert weather.turns[0].action == 'weather-get_forecast({"city": "Paris", "days": 1})'
    assert weather.metadata["domain"] == "mcp"
    assert weather.metadata["created"] == "2025-03-01 12:30:00"  # JSON-safe, not a datetime
    assert files.metadata["domain"] == "terminal"
    assert [t.is_error for t in files.turns] == [None, True]


def test_datasets_folders(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    chat_folder = tmp_path / "chat_ds"
    # from_list takes its columns from the first row: give every row every key.
    keys = dict.fromkeys([*CHAT_WEATHER, *CHAT_FILES])
    rows = [{**keys, **CHAT_WEATHER}, {**keys, **CHAT_FILES}]
    datasets.Dataset.from_list(rows).save_to_disk(str(chat_folder))
    turns_folder = tmp_path / "turns_dd"
    datasets.DatasetDict({"train": datasets.Dataset.from_list(TURN_ROWS)}).save_to_disk(
        str(turns_folder))
    reader = TableRowsReader()
    assert reader.sniff(chat_folder, read_head(chat_folder))
    assert reader.sniff(turns_folder, read_head(turns_folder))
    trajectories, quarantined = split_items(list(reader.read(chat_folder)))
    assert quarantined == []
    assert [t.turns[0].tool_name for t in trajectories] == [
        "weather-get_forecast", "filesystem-list_directory"]
    assert trajectories[1].task == "Show what is in the repository"
    assert trajectories[1].outcome == "failure"
    assert trajectories[0].metadata == {"domain": "mcp", "model": "gpt-4.1",
                                        "final_response": "Yes: 6.5 mm of rain is forecast."}
    _check_turn_rows(list(reader.read(turns_folder)), prefix="train ")


def test_folder_of_parquet_shards_is_one_table(tmp_path: Path) -> None:
    folder = tmp_path / "shards"
    (folder / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(TURN_ROWS[:1]), folder / "data" / "part-0.parquet")
    pq.write_table(pa.Table.from_pylist(TURN_ROWS[1:]), folder / "data" / "part-1.parquet")
    reader = TableRowsReader()
    assert not reader.sniff(folder, read_head(folder))  # auto-detection reads each file alone
    trajectories, quarantined = split_items(list(reader.read(folder)))
    assert [t.position for t in trajectories] == ["data/part-0.parquet row 0",
                                                  "data/part-1.parquet row 1"]
    assert len(trajectories[0].turns) == 2  # t-001 continues into the next shard
    assert [q.position for q in quarantined] == ["data/part-1.parquet row 2",
                                                 "data/part-1.parquet row 3"]


def test_table_rows_malformed_and_sniff(traces_dir: Path, tmp_path: Path) -> None:
    reader = TableRowsReader()
    _assert_rejects_all_fixtures(reader, traces_dir)
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": [1, 2]}), other)
    assert not reader.sniff(other, read_head(other))
    with pytest.raises(FormatError):
        list(reader.read(other))
    broken = tmp_path / "broken.parquet"
    good = tmp_path / "good.parquet"
    pq.write_table(pa.Table.from_pylist(TURN_ROWS), good)
    broken.write_bytes(good.read_bytes()[:-40])  # footer cut off
    assert not reader.sniff(broken, read_head(broken))
    with pytest.raises(FormatError):
        list(reader.read(broken))
    plain = tmp_path / "not_a_dataset"
    plain.mkdir()
    (plain / "notes.txt").write_text("hi", "utf-8")
    assert not reader.sniff(plain, read_head(plain))
