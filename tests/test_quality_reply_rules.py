"""Policy v2 and v3 tool-independent evidence on hand-built turns: acknowledgements that restate the
call (echo) or nothing (boilerplate), refusal phrasing (error), a blank browser tab (empty), a
screen again with only its clock changed (unchanged)."""

from __future__ import annotations

import re

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from quality_rows import trajectory, write_partition

from quality.batch_actions import batch_actions, call_arguments
from quality.features import compute_turn_features
from quality.labels import label_turns
from quality.mirrored_fields import mirrored_columns, mirrored_fields, write_call
from quality.reply_features import action_values, masked_texts
from quality.short_replies import _IDENTIFIER, _IDENTIFIER_HOLDING, _NUMBERISH, _WORD

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


def test_mirrored_fields_are_the_keys_sent_back_with_their_values():
    create = 'lms-create_course({"account_id": 1, "name": "Poetry-7", "course_code": "PO-7"})'
    reply = '{"id": 17, "name": "Poetry-7", "accountId": 1, "course_code": "PO-7", "x": null}'
    assert mirrored_fields(create, reply) == (3, 3)  # account_id matches accountId
    # a read sends a key that comes back under another name: nothing mirrored
    assert mirrored_fields('shop-get({"productId": 27})', '{"id": 27, "name": "Bag"}') == (1, 0)
    assert mirrored_fields("ls -la", '{"a": 1}') == (0, 0)  # not a JSON call
    assert mirrored_fields(create, "Course created") == (0, 0)  # not a JSON reply
    # the one object a reply wraps in a list
    assert mirrored_fields('chat-create({"subject": "Hi"})', '[{"id": 6, "subject": "Hi"}]') == (
        1, 1)


def test_write_calls_are_named_by_their_verb():
    assert write_call("sheets-create_spreadsheet") and write_call("createIssue")
    assert write_call("mail-send_email") and write_call("woo_products_update")
    assert not write_call("sheets-get_sheet_data") and not write_call("search_places")
    assert not write_call(None) and not write_call("")


def test_v3_rules_on_hand_built_turns(tmp_path):
    started = '{{"status": "converting", "message": "Paper downloaded, conversion started", ' \
              '"started_at": "2025-10-17T23:0{}:50.470744"}}'
    enroll = 'lms-enroll({{"course_id": 29, "user_id": {0}, "role": "Teacher"}})'
    enrolled = ('{{"id": {1}, "user_id": {0}, "course_id": 29, "role": "Teacher", '
                '"created_at": "2025-10-17T23:00:4{1}Z", "state": "active"}}')
    listing = "\n".join(f"{name}.csv" for name in (
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"))
    steps = [
        ("term-run({\"command\": \"ls /w\"})", listing, TOOL),
        ("term-run({\"command\": \"ls /w | head -3\"})", "\n".join(listing.split()[:3]), TOOL),
        ("mail-send({\"to\": \"ana@x.com\", \"body\": \"Hi\"})",
         "Email sent successfully to ana@x.com", TOOL),
        ("mail-send({\"to\": \"bob@x.com\", \"body\": \"Hi\"})",
         "Email sent successfully to bob@x.com", TOOL),
        ("mail-send({\"to\": \"bob@x.com\", \"body\": \"Hi again\"})",
         "Email sent successfully to bob@x.com", TOOL),
        ("papers-download({\"paper_id\": \"2503.05631\"})", started.format(1), TOOL),
        ("papers-download({\"paper_id\": \"2502.12147\"})", started.format(2), TOOL),
        (enroll.format(68), enrolled.format(68, 7), TOOL),
        (enroll.format(70), enrolled.format(70, 8), TOOL),
        ("sheets-create_spreadsheet({\"title\": \"Q3 Costs\"})",
         '{"spreadsheetId": "1gco6DHmLQ", "title": "Q3 Costs", "sheets": ["Sheet1"]}',
         {**TOOL, "tool_name": "sheets-create_spreadsheet"}),
        ("sheets-get_info({\"title\": \"Q3 Costs\"})",
         '{"title": "Q3 Costs", "rows": 120, "owner": "ana", "modified": "yesterday"}',
         {**TOOL, "tool_name": "sheets-get_info"}),
    ]
    turns, _ = write_partition(tmp_path, "mcp", {"t.json": trajectory("task", steps)})
    compute_turn_features(turns, tmp_path / "f.parquet")
    label_turns(tmp_path / "f.parquet", tmp_path / "l.parquet")
    categories = pq.read_table(tmp_path / "l.parquet")["category"].to_pylist()
    assert categories == [
        "informative",  # a listing
        "informative",  # the head of that listing: a new view, not the previous state again
        "echo", "echo",  # the acknowledgement names the recipient sent, another each time
        "unchanged",  # the same acknowledgement as the previous turn
        "boilerplate",  # a fixed status with nothing of the call in it
        "unchanged",  # the same status again, only its timestamp new
        "echo", "echo",  # the created enrollment returns the fields sent
        "echo",  # a created spreadsheet returns the one field sent (a writing call)
        "informative",  # a read call that happens to return its one field
    ]


def test_a_terminal_showing_only_the_typed_command_is_echo(tmp_path):
    screen = "New Terminal Output:\n\nroot@CONTAINER_ID:/app# {}\n\n"
    steps = [("mkdir test_dir\n", screen.format("mkdir test_dir"),
              {"action_kind": "shell", "observation_format": "terminal_screen"}),
             ("ls\n", screen.format("ls") + "test_dir\nnotes.txt\nroot@CONTAINER_ID:/app#\n",
              {"action_kind": "shell", "observation_format": "terminal_screen"})]
    turns, _ = write_partition(tmp_path, "terminal", {"t.cast": trajectory("task", steps)})
    compute_turn_features(turns, tmp_path / "f.parquet")
    label_turns(tmp_path / "f.parquet", tmp_path / "l.parquet")
    assert pq.read_table(tmp_path / "l.parquet")["category"].to_pylist() == [
        "echo", "informative"]


def test_an_output_that_ends_reporting_success_is_not_an_error(tmp_path):
    log = "\n".join(f"Setting up package-{n} ..." for n in range(40))
    screen = {"action_kind": "shell", "observation_format": "terminal_screen"}
    steps = [
        ("./install.sh && echo INSTALL_SUCCESS\n",
         log + "\nbash: uv: command not found\nINSTALL_SUCCESS\nroot@4c2a9f1e8b3d:/app#\n", screen),
        ("./install.sh\n", log + "\nbash: uv: command not found\nroot@4c2a9f1e8b3d:/app#\n",
         screen),
        ("make\n", log + "\nerror: build completed with 2 errors\n", screen),
    ]
    turns, _ = write_partition(tmp_path, "terminal", {"t.cast": trajectory("task", steps)})
    compute_turn_features(turns, tmp_path / "f.parquet")
    label_turns(tmp_path / "f.parquet", tmp_path / "l.parquet")
    assert pq.read_table(tmp_path / "l.parquet")["category"].to_pylist() == [
        "informative",  # recovered: the last line says it succeeded
        "error", "error"]  # ends in the error; "completed" on an error line is no success


def test_repeat_texts_collapse_whitespace_as_a_plain_whitespace_run_regex_does() -> None:
    # masked_texts leaves lone spaces alone (a faster pattern): every other run of Unicode
    # whitespace, and each lone non-space one, must still become one space, as r"\s+" makes it
    texts = ["a b", "a  b", " lead", "trail ", "a\tb", "x\r\ny", "\x85a", "a\u00a0b", "\u3000",
             "a \u2028 b", "a\u200bb", "a \x1c b", "", "   ", "line 1\n\n  line 2\t\t end",
             None]  # (none holds a timestamp or an id: masking leaves them as they are)
    flat = masked_texts(texts)[0].to_pylist()
    reference = pl.Series(texts, dtype=pl.String).fill_null("").str.replace_all(
        r"\s+", " ").str.strip_chars().to_list()
    assert flat == reference
    assert flat[1] == "a b" and flat[5] == "x y" and flat[11] == "a \x1c b"  # \x1c: no space


def test_reply_patterns_match_as_written() -> None:
    # reply_row's patterns are rewritten for speed (a class in front, parts that cannot match
    # left out): the same matches as the forms they stand for, on tricky texts
    numberish = re.compile(r"\d{4}-\d\d-\d\d([T ][\d:.]+Z?)?|\d+([:.,]\d+)*")
    texts = ["2024-01-05T10:00:01Z ok", "v1.2.3, 4:05 and 1,000", "٣٤٥ é12: x²", "12345-67-89",
             "a/b/c d@e.fg h_i-j k9 /w/a.md x@y", "path/ to/ file", "", "no ids here",
             "ab@cd.ef.gh/ij", "__init__.py a.b-c_d", "2024-01-05 10:00 2024-1-5"]
    for text in texts:
        assert [m.span() for m in _NUMBERISH.finditer(text)] == [
            m.span() for m in numberish.finditer(text)]
        assert _WORD.findall(text) == re.findall(r"[A-Za-z]{2,}", text)
        assert _IDENTIFIER_HOLDING["@" in text, "/" in text].findall(text) == (
            _IDENTIFIER.findall(text))
    # a reply opening with whitespace is still read as JSON (first-character test)
    assert mirrored_fields('chat-create({"subject": "Hi"})', ' \n{"subject": "Hi"}') == (1, 1)


def test_mirrored_columns_match_mirrored_fields_row_by_row() -> None:
    """The columns' fast path (each distinct action's pairs once, non-JSON replies and
    actions without a JSON object skipped) gives what the plain per-row definition gives."""
    create = 'lms-create_course({"account_id": 1, "name": "Poetry-7", "course_code": "PO-7"})'
    actions = [create, create, "ls -la", create, 'shop-get({"productId": 27})', None, create,
               'shop-get({"productId": 27})', '{"name": "x"}', "f([1, 2])"]
    observations = ['{"id": 17, "name": "Poetry-7", "accountId": 1}',
                    ' \n[{"name": "Poetry-7"}]', '{"a": 1}', "Course created", '{"id": 27}',
                    '{"a": 1}', None, '{"productId": 27}', '{"name": "x"}', "[1, 2]"]
    tools = ["lms-create_course"] * len(actions)
    plain = [mirrored_fields(a or "", o or "") for a, o in zip(actions, observations, strict=True)]
    for column in (actions, pa.chunked_array([actions[:4], actions[4:]], pa.string())):
        columns = mirrored_columns(batch_actions(column), observations, tools)
        assert list(zip(columns["fields_sent"].to_pylist(),
                        columns["fields_mirrored"].to_pylist(), strict=True)) == plain
        assert columns["write_call"].to_pylist() == [True] * len(actions)
    assert plain[:2] == [(3, 2), (3, 1)] and plain[7] == (1, 1)


def test_action_values_with_parsed_arguments_are_the_plain_ones() -> None:
    """Passing the action's call_arguments (None for a command) gives what parsing it gives."""
    actions = ['fs-write_file({"path": "/w/a.md", "content": "x"})', "cat notes/today.txt",
               '{"name": "report.md"}', "f(not json)", "", "[1, 2, \"abc.txt\"]"]
    for action in actions:
        assert action_values(action, call_arguments(action)) == action_values(action), action
