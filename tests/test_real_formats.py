"""Real-format gaps found on ../shared/realdev: ATIF system steps and message-written calls,
OpenHands orphan observations and containers, terminal-bench runs without results.json, MCP
client session logs; and the whole real corpora ingesting with nothing quarantined but the
terminal-bench runs whose agent left no step in the folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
from reader_checks import read_checked

from sources.catalog import make_spec
from sources.ingest import IngestStats, ingest_source, write_tables
from sources.readers import detect
from sources.readers.atif import AtifReader
from sources.readers.mcp_client_log import McpClientLogReader
from sources.readers.openhands import OpenHandsReader
from sources.readers.tbench import HARNESS_ONLY, TerminalBenchReader
from sources.tables import INGEST_QUARANTINE

ATIF_DIR = "terminal/atif"
LINEAR = "terminus_2__hello-world-context-summarization-linear-history.trajectory"
OPENHANDS_GUI = "swe/openhands/basic_gui_mode.json"
TBENCH_NO_RESULTS = (
    "terminal/tbench/20250902_orchestrator_qwen-3-coder-480B__swe-bench-fsspec.5-of-5"
)
EXPLORE_MCP = "mcp/explore-mcp/session_20251023_230007.jsonl"


# --- ATIF ------------------------------------------------------------------------------------


def test_atif_late_system_step_goes_to_metadata(realdev_dir: Path) -> None:
    (trajectory,), quarantined = read_checked(
        AtifReader(), realdev_dir / ATIF_DIR / f"{LINEAR}.json"
    )
    assert quarantined == []
    assert trajectory.system_prompt is None  # the hand-off notice is not the prompt
    (note,) = trajectory.metadata["system_steps"]
    assert note["message"] == "Performed context summarization and handoff to continue task."
    assert len(note["observation"]["results"][0]["subagent_trajectory_ref"]) == 3
    # Terminus JSON replies without tool_calls: the keystrokes are read from the message.
    assert [turn.action for turn in trajectory.turns] == [
        "mkdir test_dir\n",
        "echo 'test1' > test_dir/file1.txt\n",
        "echo 'test2' > test_dir/file2.txt\n",
    ]
    assert all(turn.action_kind == "shell" for turn in trajectory.turns)
    assert trajectory.turns[0].observation.startswith("New Terminal Output:")


def test_atif_continuation_skips_copied_context(realdev_dir: Path) -> None:
    path = realdev_dir / ATIF_DIR / f"{LINEAR}.cont-1.json"
    (trajectory,), quarantined = read_checked(AtifReader(), path)
    assert quarantined == []
    assert trajectory.metadata["copied_context_steps"] == 1
    assert [turn.action for turn in trajectory.turns[:2]] == [
        "printf 'Hello, world!\\n' > hello.txt\n",
        "cat hello.txt\n",
    ]
    assert [turn.action_kind for turn in trajectory.turns[2:]] == ["submit", "submit"]


def test_atif_openhands_without_function_calling(realdev_dir: Path) -> None:
    path = realdev_dir / ATIF_DIR / "openhands__hello-world.trajectory.no_function_calling.json"
    (trajectory,), quarantined = read_checked(AtifReader(), path)
    assert quarantined == []
    assert trajectory.system_prompt.startswith("You are OpenHands agent")
    (turn,) = trajectory.turns  # <function=execute_bash><parameter=command>...
    assert turn.action == "cat > /app/hello.txt << 'EOF'\nHello, world!\nEOF"
    assert (turn.action_kind, turn.tool_name) == ("shell", "execute_bash")
    assert "[Command finished with exit code 0]" in turn.observation
    # the final <function=finish> got no observation: recorded, not a turn
    assert trajectory.metadata["steps_not_turns"] == [
        {"step_id": 4, "reason": "message without tool calls"}
    ]


def test_atif_unknown_step_source_costs_nothing(realdev_dir: Path, tmp_path: Path) -> None:
    document = json.loads((realdev_dir / ATIF_DIR / f"{LINEAR}.json").read_text())
    document["steps"].insert(1, {"step_id": 99, "source": "environment", "message": "tick"})
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    (trajectory,), quarantined = read_checked(AtifReader(), path)
    assert quarantined == []
    assert trajectory.metadata["steps_of_unknown_source"] == {"environment": 1}
    assert len(trajectory.turns) == 3


# --- OpenHands -------------------------------------------------------------------------------


def test_openhands_gui_mode_reads_whole(realdev_dir: Path) -> None:
    (trajectory,), quarantined = read_checked(OpenHandsReader(), realdev_dir / OPENHANDS_GUI)
    assert quarantined == []  # the "null" answer to the task message is bookkeeping
    assert trajectory.task.startswith("I want to create a VueJS app")
    assert trajectory.metadata["skipped_events"]["observation_of_message:null"] == 1
    assert trajectory.turns[0].action == "mkdir -p /workspace/todo-app"
    assert trajectory.turns[0].exit_code == 0
    assert trajectory.turns[-1].exit_code == -1  # the server that never returned
    assert [turn.tool_name for turn in trajectory.turns[1:3]] == ["str_replace_editor"] * 2
    assert trajectory.turns[1].action.startswith("str_replace_editor(")


def test_openhands_orphan_is_one_record_and_counts_reconcile(
    realdev_dir: Path, tmp_path: Path
) -> None:
    events = json.loads((realdev_dir / OPENHANDS_GUI).read_text())
    orphan = {"id": "99", "source": "agent", "observation": "run", "cause": "77", "content": "?"}
    (tmp_path / "gui.json").write_text(json.dumps([*events, orphan]))
    stats = IngestStats()
    rows = list(ingest_source(make_spec("oh", tmp_path / "gui.json"), stats))
    quarantine = [row.row for row in rows if not hasattr(row, "turns")]
    assert [(q["position"], q["reason"]) for q in quarantine] == [
        (f"$[{len(events)}]", "observation 'run' has cause '77', matching no action")
    ]
    counts = stats.counts("oh")
    assert (counts.trajectories, counts.turns, counts.quarantined) == (1, 4, 1)
    assert counts.records_read == counts.turns + counts.quarantined


def test_openhands_history_wrapper_and_evaluation_output(realdev_dir: Path, tmp_path: Path) -> None:
    events = json.loads((realdev_dir / OPENHANDS_GUI).read_text())
    wrapper = tmp_path / "history.json"
    wrapper.write_text(json.dumps({"history": events}))
    assert detect(wrapper).name == "openhands_events"
    (wrapped,), quarantined = read_checked(OpenHandsReader(), wrapper)
    assert quarantined == [] and len(wrapped.turns) == 4

    # output.jsonl: one instance a line; the second line keeps the old [action, observation] pairs
    run, answer = events[7], events[8]
    lines = [
        {
            "instance_id": "todo-1",
            "instruction": "unused: the history has the task",
            "history": events,
            "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": "claude"}},
            "test_result": {"report": {"resolved": True}},
        },
        {"instance_id": "todo-2", "instruction": "make a dir", "history": [[run, answer]]},
    ]
    output = tmp_path / "output.jsonl"
    output.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert detect(output).name == "openhands_events"
    (first, second), quarantined = read_checked(OpenHandsReader(), output)
    assert quarantined == []
    assert (first.position, first.outcome, first.metadata["instance_id"]) == (
        "line 1",
        "success",
        "todo-1",
    )
    assert (first.metadata["agent_class"], first.metadata["model"]) == ("CodeActAgent", "claude")
    assert first.task.startswith("I want to create a VueJS app")
    assert (second.task, second.outcome) == ("make a dir", "unknown")
    assert [turn.action for turn in second.turns] == ["mkdir -p /workspace/todo-app"]


# --- terminal-bench --------------------------------------------------------------------------


def test_tbench_run_without_results_is_still_read(realdev_dir: Path) -> None:
    folder = realdev_dir / TBENCH_NO_RESULTS
    assert not (folder / "results.json").exists()
    assert detect(folder).name == "tbench_run"
    # Read without results.json: the recording alone decides, and it holds only the harness's
    # clear and C-d (the orchestrator agent works outside the recorded terminal).
    trajectories, (quarantined,) = read_checked(TerminalBenchReader(), folder)
    assert trajectories == [] and quarantined.reason == HARNESS_ONLY


# --- MCP client session logs -----------------------------------------------------------------


def test_mcp_client_log_real_sample(realdev_dir: Path) -> None:
    path = realdev_dir / EXPLORE_MCP
    assert detect(path).name == "mcp_client_log"
    (trajectory,), quarantined = read_checked(McpClientLogReader(), path)
    assert quarantined == []
    assert [(t.action, t.tool_name) for t in trajectory.turns] == [
        ("initialize()", "initialize"),
        ("list_tools()", "list_tools"),
    ]
    assert trajectory.metadata["serverInfo"]["name"] == "secure-filesystem-server"
    assert trajectory.metadata["protocolVersion"] == "2025-06-18"
    tools = json.loads(trajectory.turns[1].observation)["tools"]
    assert "read_file" in [tool["name"] for tool in tools]
    assert "_type" not in trajectory.turns[1].observation  # interceptor class tags dropped


def _session(calls: list[dict]) -> dict:
    return {"session_id": "s-1", "server_info": {"transport": "stdio"}, "calls": calls}


def _call(method: str, args: list, result: object = None, error: str | None = None) -> dict:
    return {
        "request": {"method": method, "args": args, "kwargs": {}},
        "response": {"success": error is None, "result": result, "error": error},
        "duration_ms": 1.5,
    }


def test_mcp_client_log_sessions_calls_and_errors(realdev_dir: Path, tmp_path: Path) -> None:
    real = [json.loads(line) for line in (realdev_dir / EXPLORE_MCP).read_text().splitlines()]
    text = {"_type": "TextContent", "type": "text", "text": "hello", "annotations": None}
    image = {"_type": "ImageContent", "type": "image", "data": "iVBO", "mimeType": "image/png"}
    calls = [
        _call("initialize", [], real[1]["result"]),
        _call(
            "call_tool",
            ["read_file", {"path": "/tmp/a"}],
            {"content": [text, image], "isError": False},
        ),
        _call("call_tool", ["read_file", {"path": "/nope"}], error="ENOENT: /nope"),
    ]
    path = tmp_path / "sessions.jsonl"
    path.write_text(json.dumps(_session(calls)) + "\n" + json.dumps(_session(calls[:1])) + "\n")
    assert detect(path).name == "mcp_client_log"
    (first, second), quarantined = read_checked(McpClientLogReader(), path)
    assert quarantined == [] and (first.position, second.position) == ("line 1", "line 2")
    call, failed = first.turns[1:]
    assert (call.action, call.observation, call.tool_name) == (
        'read_file({"path": "/tmp/a"})',
        "hello",
        "read_file",
    )
    assert (call.action_kind, call.observation_format, call.is_error) == (
        "tool_call",
        "tool_result_text",
        False,
    )
    assert (failed.observation, failed.is_error) == ("ENOENT: /nope", True)
    assert first.metadata["session_id"] == "s-1"
    assert first.metadata["content_extras"] == [
        {
            "turn_index": 1,
            "extras": [{"block": 1, "type": "image", "data": "iVBO", "mimeType": "image/png"}],
        }
    ]


def test_mcp_client_log_orphans_and_new_sessions(realdev_dir: Path, tmp_path: Path) -> None:
    lines = (realdev_dir / EXPLORE_MCP).read_text().splitlines()
    orphan = json.dumps({"type": "response", "method": "call_tool", "result": {}, "error": None})
    unanswered = json.dumps({"type": "request", "method": "list_prompts", "args": [], "kwargs": {}})
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([*lines, orphan, *lines, unanswered]) + "\n")
    items = list(McpClientLogReader().read(path))
    reasons = [(i.position, i.reason) for i in items if not hasattr(i, "turns")]
    assert reasons == [
        ("line 5", "call_tool response to no open request"),
        ("line 10", "list_prompts request has no response"),
    ]
    sessions = [i for i in items if hasattr(i, "turns")]
    assert [(s.position, len(s.turns)) for s in sessions] == [("line 1", 2), ("line 6", 2)]


# --- whole corpora ---------------------------------------------------------------------------


def test_real_corpora_ingest_with_only_unreadable_agent_runs_quarantined(
    realdev_dir: Path, traces_dir: Path, tmp_path: Path
) -> None:
    """Everything is read except terminal-bench runs whose agent left no step in the folder
    (tests/test_tbench_installed_agents.py): each of those is one quarantine row with why."""
    expected = {"realdev": 21, "traces": 1}  # realdev: 25 runs, 4 read from mini's console
    for corpus in (realdev_dir, traces_dir):
        out = tmp_path / corpus.name
        stats = write_tables([make_spec(corpus.name, corpus)], out)
        counts = stats.counts(corpus.name)
        rows = [row for part in INGEST_QUARANTINE.paths(out)
                for row in pq.read_table(part).to_pylist()]
        assert counts.quarantined == len(rows) == expected[corpus.name], rows
        assert {row["source_format"] for row in rows} == {"tbench_run"}
        assert all(row["source_path"].startswith("terminal/tbench/") for row in rows)
        assert all(row["reason"] == HARNESS_ONLY or row["reason"].startswith(
            "installed-agent run: ") for row in rows)
        assert "unknown" not in counts.formats
        assert stats.skipped_docs == 1  # README.md / SOURCES.md


def test_broken_json_is_still_quarantined_with_its_reason(
    realdev_dir: Path, tmp_path: Path
) -> None:
    source = realdev_dir / OPENHANDS_GUI
    broken = tmp_path / "broken.json"
    shutil.copy(source, broken)
    broken.write_bytes(source.read_bytes()[:5000])
    stats = IngestStats()
    rows = [row.row for row in ingest_source(make_spec("b", broken), stats) if hasattr(row, "row")]
    assert len(rows) == 1 and "invalid JSON" in rows[0]["reason"], rows
