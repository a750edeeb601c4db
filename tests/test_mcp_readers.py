"""Tests of the MCP readers: shared chat-message logic, Toolathlon runs, JSON-RPC transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reader_checks import claimed_fixtures, split_items

from sources.readers.base import FormatError, Reader, is_single_json_object
from sources.readers.chat_messages import ChatFormatError, convert_messages, tool_error_flag
from sources.readers.content_blocks import unwrap_content
from sources.readers.mcp_jsonrpc import McpJsonRpcReader
from sources.readers.toolathlon import ToolathlonReader
from sources.schema import Quarantine

TOOLATHLON_TURNS = {
    "claude-4.5-sonnet_apply-phd-email.json": 22,
    "claude-4.5-sonnet_set-conf-cr-ddl.json": 6,
    "claude-4.5-sonnet_sla-timeout-monitor.json": 27,
    "deepseek-v3.2-exp_sales-accounting.json": 0,
}


def _assert_sniffs_exactly(reader: Reader, traces_dir: Path, own: set[Path]) -> None:
    """The reader claims its own fixtures and no other file or folder under the traces dir."""
    assert claimed_fixtures(reader, traces_dir) == {
        path.relative_to(traces_dir).as_posix() for path in own
    }


# --- chat_messages ---------------------------------------------------------------------------

def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_parallel_calls_become_one_turn_each_matched_by_id() -> None:
    messages = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Compare the weather in Paris and Oslo."},
        {"role": "assistant", "content": "Checking both.", "tool_calls": [
            _call("a", "weather-get", '{"city": "Paris"}'),
            _call("b", "weather-get", '{"city": "Oslo"}'),
        ]},
        # Answers arrive in the other order: matching is by id, turns keep the call order.
        {"role": "tool", "tool_call_id": "b", "content": '{"temp_c": 4}'},
        {"role": "tool", "tool_call_id": "a", "content": "18 degrees"},
        {"role": "assistant", "content": "Paris is warmer."},
    ]
    chat = convert_messages(messages, "$")
    assert chat.task == "Compare the weather in Paris and Oslo."
    assert chat.system_prompt == "You are an agent."
    assert [t.action for t in chat.turns] == [
        'weather-get({"city": "Paris"})', 'weather-get({"city": "Oslo"})']
    assert [t.observation for t in chat.turns] == ["18 degrees", '{"temp_c": 4}']
    assert [t.observation_format for t in chat.turns] == ["tool_result_text", "tool_result_json"]
    assert all(t.action_kind == "tool_call" and t.tool_name == "weather-get" for t in chat.turns)
    assert chat.metadata == {"final_response": "Paris is warmer."}
    assert chat.problems == []


def test_orphan_answer_and_unanswered_call_are_problems_with_positions() -> None:
    messages = [
        {"role": "user", "content": "Do it."},
        {"role": "assistant", "content": None, "tool_calls": [_call("x", "fs-read", "{}")]},
        {"role": "tool", "tool_call_id": "x", "content": "ok"},
        {"role": "tool", "tool_call_id": "nobody", "content": "stray"},
        {"role": "assistant", "content": None, "tool_calls": [_call("y", "fs-write", "{}")]},
    ]
    chat = convert_messages(messages, "line 7")
    assert [t.action for t in chat.turns] == ["fs-read({})"]
    assert chat.problems == [
        ("line 7 $.messages[3]", "observation answers no open call (tool_call_id 'nobody')"),
        ("line 7 $.messages[4]", "call 'fs-write' has no observation"),
    ]


def test_answers_without_ids_match_by_name_then_order() -> None:
    messages = [
        {"role": "user", "content": "Weather then time."},
        {"role": "assistant", "content": None,
         "function_call": {"name": "get_weather", "arguments": '{"city": "Rome"}'}},
        {"role": "function", "name": "get_weather", "content": "sunny"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "clock-now", "arguments": "{}"}},
            {"type": "function", "function": {"name": "clock-zone", "arguments": "{}"}}]},
        {"role": "tool", "name": "clock-zone", "content": "CET"},
        {"role": "tool", "content": "12:00"},
    ]
    chat = convert_messages(messages, "$")
    assert [(t.action, t.observation) for t in chat.turns] == [
        ('get_weather({"city": "Rome"})', "sunny"), ("clock-now({})", "12:00"),
        ("clock-zone({})", "CET")]
    assert chat.problems == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"content": [{"type": "text", "text": "boom"}], "isError": true}', True),
        ('{"content": [{"type": "text", "text": "fine"}], "isError": false}', False),
        ('{"type":"text","text":"Security violation","annotations":null,"error":true}', True),
        ('[{"type": "text", "text": "x", "error": true}, {"type": "text", "text": "y"}]', True),
        ('{"type":"text","text":"Email sent","annotations":null}', False),
        ("Error executing tool search: timeout", True),
        ("An error occurred somewhere", None),
        ('{"rows": 3}', None),
    ],
)
def test_error_flag_is_conservative(content: str, expected: bool | None) -> None:
    assert tool_error_flag(content) is expected


def test_wrong_types_raise_chat_format_error() -> None:
    with pytest.raises(ChatFormatError) as error:
        convert_messages("not a list", "$")
    assert error.value.position == "$.messages"
    with pytest.raises(ChatFormatError) as error:
        convert_messages([{"role": "user", "content": "hi"}, ["nested"]], "$")
    assert error.value.position == "$.messages[1]"
    with pytest.raises(ChatFormatError):
        convert_messages([{"role": "assistant", "tool_calls": "oops"}], "$")


# --- Toolathlon ------------------------------------------------------------------------------

def test_toolathlon_fixture_turn_counts_and_outcomes(traces_dir: Path) -> None:
    reader = ToolathlonReader()
    for name, n_turns in TOOLATHLON_TURNS.items():
        items = list(reader.read(traces_dir / "mcp/toolathlon" / name))
        trajectories, quarantined = split_items(items)
        assert quarantined == []
        assert len(trajectories) == 1
        assert len(trajectories[0].turns) == n_turns, name
        assert trajectories[0].position == "$"
    failed_path = traces_dir / "mcp/toolathlon/deepseek-v3.2-exp_sales-accounting.json"
    failed = next(reader.read(failed_path))
    assert failed.outcome == "failure"
    assert failed.metadata["failure"].startswith("Evaluation start\nlocal check failed:")
    assert failed.metadata["final_response"].startswith("I understand you'd like me to add")


def test_toolathlon_apply_phd_email_contents(traces_dir: Path) -> None:
    path = traces_dir / "mcp/toolathlon/claude-4.5-sonnet_apply-phd-email.json"
    trajectory = next(ToolathlonReader().read(path))
    assert trajectory.outcome == "success"
    assert trajectory.task.startswith("Please check my inbox for an email from 'kaiming'")
    assert trajectory.system_prompt is None
    first, second = trajectory.turns[:2]  # two parallel calls in the first assistant message
    assert first.action == 'emails-search_emails({"query": "kaiming"})'
    assert first.tool_name == "emails-search_emails"
    # The MCP content envelope is taken off: the observation is the text block's text.
    lines = first.observation.splitlines()
    assert lines[0] == "Search query: kaiming"
    assert lines[6] == (
        "   Subject: Re: PhD Application - Application Materials Submission Guidelines")
    assert first.observation_format == "tool_result_text"
    assert first.is_error is False
    assert second.action == "memory-read_graph()"
    # The `zip` call failed with an error block; the retry's command was rejected.
    assert [i for i, t in enumerate(trajectory.turns) if t.is_error] == [16, 17]
    # A list of two text blocks (output, then the exit status) becomes their texts, in order.
    assert trajectory.turns[16].observation == (
        "/bin/sh: 1: zip: not found\n\n\nCommand completed with return code: 127")
    # Null annotations are dropped; the error flags of the failed calls' blocks are kept.
    extras = trajectory.metadata["tool_result_extras"]
    assert [e["turn_index"] for e in extras] == [16, 17]
    assert extras[0]["extras"] == [{"block": 0, "error": True}]


def test_toolathlon_cut_off_envelope_keeps_its_text_and_the_harness_note(traces_dir: Path
                                                                          ) -> None:
    realdev = traces_dir.parent / "realdev" / "mcp" / "toolathlon"
    path = realdev / "claude-4.5-sonnet_filter-low-selling-products.json"
    if not path.exists():
        pytest.skip(f"real dev trajectories not found at {realdev}")
    trajectory = next(ToolathlonReader().read(path))
    cut = [t for t in trajectory.turns if "is too long! Only the first" in t.observation]
    assert cut, "the file has results the harness cut at 100000 characters"
    for turn in cut:
        assert not turn.observation.startswith('{"type"')  # the envelope is gone
        assert '\\"' not in turn.observation[:2000]  # and so are its escapes
    assert cut[0].observation.startswith('[\n  {\n    "id": ')


def test_content_envelope_extras_go_to_metadata() -> None:
    blocks = [{"type": "text", "text": "chart below", "annotations": {"audience": ["user"]}},
              {"type": "image", "data": "aGk=", "mimeType": "image/png"}]
    unwrapped = unwrap_content(json.dumps(blocks))
    assert unwrapped.text == "chart below"
    assert unwrapped.extras == [{"block": 0, "annotations": {"audience": ["user"]}},
                                {"block": 1, "type": "image", "data": "aGk=",
                                 "mimeType": "image/png"}]
    assert unwrap_content('{"rows": 3}').text == '{"rows": 3}'  # not an envelope: unchanged
    assert unwrap_content('[]').text == "[]"


def test_toolathlon_plain_text_answer(traces_dir: Path) -> None:
    path = traces_dir / "mcp/toolathlon/claude-4.5-sonnet_sla-timeout-monitor.json"
    trajectory = next(ToolathlonReader().read(path))
    assert trajectory.turns[0].action == "snowflake-list_databases()"
    last = trajectory.turns[-1]
    assert last.action == "local-claim_done()"
    assert last.observation == "you have claimed the task is done!"
    assert (last.observation_format, last.is_error) == ("tool_result_text", None)


def test_toolathlon_sniff(traces_dir: Path) -> None:
    own = {traces_dir / "mcp/toolathlon" / name for name in TOOLATHLON_TURNS}
    _assert_sniffs_exactly(ToolathlonReader(), traces_dir, own)


def test_toolathlon_and_the_other_readers_tell_a_jsonl_stream_by_one_rule() -> None:
    """A second top-level object after a line break, whatever blanks surround the break, makes
    a JSONL stream for every single-document reader (Toolathlon had a looser rule of its own:
    a stream with a blank line between records passed the shared one as one document)."""
    record = json.dumps({"pass": True, "messages": [{"role": "user", "content": "hi"}]})
    for between in ("\n", "\r\n", "\n\n", " \n", "\n  ", "\t\r\n\n "):
        head = record + between + record + "\n"
        assert not is_single_json_object(head), repr(between)
        assert not ToolathlonReader().sniff(Path("runs.json"), head), repr(between)
    document = json.dumps({"pass": False, "messages": [
        {"role": "user", "content": "a\nb"}, {"role": "assistant", "content": "{}"}]}, indent=2)
    assert is_single_json_object(document)
    assert ToolathlonReader().sniff(Path("run.json"), document)


def test_toolathlon_malformed(tmp_path: Path) -> None:
    reader = ToolathlonReader()
    truncated = tmp_path / "truncated.json"
    truncated.write_text('{"pass": true, "messages": [{"role": "user", "content": "hi"}', "utf-8")
    with pytest.raises(FormatError) as error:
        list(reader.read(truncated))
    assert error.value.position.startswith("line 1 column")

    bad_pass = tmp_path / "bad_pass.json"
    bad_pass.write_text('{"pass": "yes", "messages": []}', "utf-8")
    assert list(reader.read(bad_pass)) == [
        Quarantine(str(bad_pass), "$.pass", "pass must be true or false")]

    bad_messages = tmp_path / "bad_messages.json"
    bad_messages.write_text('{"pass": false, "messages": {"role": "user"}}', "utf-8")
    (item,) = reader.read(bad_messages)
    assert isinstance(item, Quarantine) and item.position == "$.messages"

    orphan = tmp_path / "orphan.json"
    orphan.write_text(json.dumps({"pass": True, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [_call("c1", "fs-ls", "{}")]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "tool", "tool_call_id": "c9", "content": "stray"},
    ]}), "utf-8")
    trajectories, quarantined = split_items(list(reader.read(orphan)))
    assert len(trajectories[0].turns) == 1
    assert trajectories[0].metadata["n_quarantined_messages"] == 1
    assert [q.position for q in quarantined] == ["$.messages[3]"]


# --- MCP JSON-RPC transcripts ------------------------------------------------------------------

def test_jsonrpc_fixture(traces_dir: Path) -> None:
    path = traces_dir / "mcp/jsonrpc/stdio-transcript.txt"
    trajectories, quarantined = split_items(list(McpJsonRpcReader().read(path)))
    assert quarantined == []
    (trajectory,) = trajectories
    assert trajectory.position == "line 1"
    assert trajectory.task == ""
    assert [t.tool_name for t in trajectory.turns] == [
        "initialize", "tools/list", "scale_notes", "scale_notes"]
    assert [t.is_error for t in trajectory.turns] == [False, False, False, True]
    assert [t.action_kind for t in trajectory.turns] == ["other", "other", "tool_call", "tool_call"]
    assert {t.observation_format for t in trajectory.turns} == {"json_rpc"}
    assert trajectory.turns[0].action == (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        '"capabilities":{},"clientInfo":{"name":"by-hand","version":"1.0"}}}')
    assert trajectory.turns[2].action == (
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"scale_notes",'
        '"arguments":{"root":"F","mode":"major"}}}')
    assert "is not a note: use a letter A to G" in trajectory.turns[3].observation
    assert json.loads(trajectory.turns[3].observation)["result"]["isError"] is True
    assert trajectory.metadata["serverInfo"] == {"name": "LearnMcp", "version": "1.0.0.0"}
    assert trajectory.metadata["notifications"] == [
        {"line": 3, "direction": "client->server", "method": "notifications/initialized"}]
    assert trajectory.metadata["exit_code"] == 0


def test_jsonrpc_sniff(traces_dir: Path) -> None:
    _assert_sniffs_exactly(McpJsonRpcReader(), traces_dir,
                           {traces_dir / "mcp/jsonrpc/stdio-transcript.txt"})


def test_jsonrpc_malformed_lines_and_sessions(tmp_path: Path) -> None:
    lines = [
        b'--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
        b'<-- {"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"s"}}}',
        b'--> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"f"',  # truncated
        b'<-- {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}',
        b"--> \xff\xfe not utf-8",
        b"some stray log output",
        b'--> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"g"}}',
        b'<-- {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown tool"}}',
        b'<-- {"jsonrpc":"2.0","id":99,"result":{}}',
        b'--> {"jsonrpc":"2.0","id":4,"method":"tools/list"}',
        b'--> {"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}',
        b'<-- {"jsonrpc":"2.0","id":5,"result":{}}',
    ]
    path = tmp_path / "transcript.txt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    trajectories, quarantined = split_items(list(McpJsonRpcReader().read(path)))
    assert [t.position for t in trajectories] == ["line 1", "line 11"]
    first, second = trajectories
    assert [t.tool_name for t in first.turns] == ["initialize", "g"]
    assert first.turns[1].is_error is True
    assert first.metadata["notifications"][0]["direction"] == "server->client"
    assert [t.tool_name for t in second.turns] == ["initialize"]
    assert sorted(q.position for q in quarantined) == [
        "line 10", "line 3", "line 5 byte 4", "line 6", "line 9"]
    reasons = {q.position: q.reason for q in quarantined}
    assert reasons["line 10"] == "request 'tools/list' has no response"
    assert reasons["line 9"].startswith("response to no open request")
