"""Tests of the search readers: MiroFlow task results / logs and Search-R1 rollouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reader_checks import claimed_fixtures, split_items

from sources.readers.base import FormatError, Reader, read_head
from sources.readers.chat_jsonl import ChatJsonlReader
from sources.readers.miroflow import MiroFlowReader
from sources.readers.search_r1 import SearchR1Reader

MIROFLOW = "search/miroflow/task_result.json"

SEARCH_R1_PROMPT = (
    "Answer the given question. You must conduct reasoning inside <think> and </think> first "
    "every time you get new information. After reasoning, if you find you lack some knowledge, "
    "you can call a search engine by <search> query </search> and it will return the top "
    "searched results between <information> and </information>. You can search as many times "
    "as your want. If you find no further external knowledge needed, you can directly provide "
    "the answer inside <answer> and </answer>, without detailed illustrations. For example, "
    "<answer> Beijing </answer>. Question: {question}\n"
)
REBA_INFO_1 = (
    'Doc 1(Title: "Does He Love You") "Does He Love You" is a song written by Sandy Knox and '
    "Billy Stritch, and recorded as a duet by American country music artists Reba McEntire and "
    'Linda Davis.\nDoc 2(Title: "Linda Davis") Linda Kaye Davis (born November 26, 1962) is an '
    "American country music singer."
)
REBA_INFO_2 = (
    'Doc 1(Title: "Linda Davis") In 1993 she won a Grammy Award for Best Country Vocal '
    "Collaboration with Reba McEntire for \"Does He Love You\"."
)
REBA_RESPONSE = (
    "<think> I need to find who sings \"Does He Love Me\" with Reba. </think>\n"
    "<search> does he love me reba duet </search>\n\n"
    f"<information>{REBA_INFO_1}</information>\n\n"
    "<think> The duet partner seems to be Linda Davis. Let me confirm. </think>\n"
    "<search> Linda Davis Reba McEntire Does He Love You Grammy </search>\n\n"
    f"<information>{REBA_INFO_2}</information>\n\n"
    "<think> Confirmed. </think>\n<answer> Linda Davis </answer>"
)


def _assert_sniffs_exactly(reader: Reader, traces_dir: Path, own: set[Path]) -> None:
    assert claimed_fixtures(reader, traces_dir) == {
        path.relative_to(traces_dir).as_posix() for path in own
    }


def _block(server: str, tool: str, arguments: dict) -> str:
    return (f"<use_mcp_tool>\n<server_name>{server}</server_name>\n<tool_name>{tool}</tool_name>\n"
            f"<arguments>\n{json.dumps(arguments)}\n</arguments>\n</use_mcp_tool>")


# --- MiroFlow --------------------------------------------------------------------------------

def test_miroflow_fixture(traces_dir: Path) -> None:
    trajectories, quarantined = split_items(list(MiroFlowReader().read(traces_dir / MIROFLOW)))
    assert quarantined == []
    (trajectory,) = trajectories
    assert trajectory.position == "$"
    assert trajectory.outcome == "unknown"  # the task result carries no judge verdict
    assert trajectory.task.startswith("Is Spain oa country of Europe?\n\nYour task is to")
    assert trajectory.system_prompt.startswith("In this environment you have access to a set")
    assert [t.tool_name for t in trajectory.turns] == [
        "google_search", "scrape_website", "scrape_website", "scrape_website", "google_search",
        "scrape_website", "wiki_get_page_content", "scrape_website"]
    assert [t.observation_format for t in trajectory.turns] == [
        "search_results", "page_text", "page_text", "page_text", "search_results", "page_text",
        "page_text", "page_text"]
    assert [t.action_kind for t in trajectory.turns][:2] == ["search", "open"]
    assert trajectory.turns[0].action == (
        "<use_mcp_tool>\n<server_name>tool-searching</server_name>\n"
        "<tool_name>google_search</tool_name>\n<arguments>\n{\n"
        '  "q": "Is Spain in Europe? Spain country in southwestern Europe Britannica CIA World '
        'Factbook UN geoscheme",\n  "gl": "us",\n  "hl": "en",\n  "num": 10\n}\n'
        "</arguments>\n</use_mcp_tool>")
    assert '      "title": "Spain | History, Map, Flag, Population, Currency, Climate ...",' in (
        trajectory.turns[0].observation.splitlines())
    assert "URL Source: https://www.britannica.com/place/Spain" in (
        trajectory.turns[1].observation.splitlines())
    assert trajectory.turns[6].observation.startswith("Network Error: Failed to connect")
    assert trajectory.metadata["final_boxed_answer"] == "Yes"
    assert trajectory.metadata["summary"].startswith("Final report: Is Spain a country of Europe?")
    assert trajectory.metadata["final_response"].startswith("Comprehensive evidence-gathering")
    assert trajectory.metadata["truncated_observation_turns"] == [1, 2, 5, 7]


def test_miroflow_sniff(traces_dir: Path) -> None:
    _assert_sniffs_exactly(MiroFlowReader(), traces_dir, {traces_dir / MIROFLOW})


def test_miroflow_task_log_with_sub_agent(tmp_path: Path) -> None:
    log = {
        "task_id": "q17", "judge_result": "CORRECT", "final_boxed_answer": "1889",
        "step_logs": [{"step_name": "x", "message": "y"}],
        "main_agent_message_history": {"system_prompt": "Main agent prompt.", "message_history": [
            {"role": "user", "content": [{"type": "text", "text": "When was the tower built?"}]},
            {"role": "assistant", "content": "Delegating.\n" + _block(
                "agent-browsing", "search_and_browse", {"subtask": "Find the build year"})},
            {"role": "user", "content": [{"type": "text", "text": "It was completed in 1889."}]},
            {"role": "assistant", "content": "\\boxed{1889}"},
        ]},
        "sub_agent_message_history_sessions": {"agent-browsing_1": {
            "system_prompt": "Browsing agent prompt.", "message_history": [
                {"role": "user", "content": "Find the build year"},
                {"role": "assistant", "content": _block("tool-searching", "google_search",
                                                        {"q": "Eiffel tower built"})},
                {"role": "user", "content": "Tool call to google_search on tool-searching "
                                            "failed. Error: quota"},
                {"role": "assistant", "content": "Completed in 1889."},
            ]}},
    }
    path = tmp_path / "task_q17.json"
    path.write_text(json.dumps(log), "utf-8")
    assert MiroFlowReader().sniff(path, read_head(path))
    trajectories, quarantined = split_items(list(MiroFlowReader().read(path)))
    assert quarantined == []
    main, sub = trajectories
    assert main.position == "$.main_agent_message_history"
    assert (main.outcome, main.task, main.system_prompt) == (
        "success", "When was the tower built?", "Main agent prompt.")
    assert main.metadata["sub_agent_sessions"] == ["agent-browsing_1"]
    assert "step_logs" not in main.metadata
    assert (main.turns[0].tool_name, main.turns[0].observation_format) == (
        "search_and_browse", "text")
    assert sub.position == "$.sub_agent_message_history_sessions.agent-browsing_1"
    assert (sub.task, sub.outcome, sub.metadata["agent"]) == ("Find the build year", "unknown",
                                                             "sub")
    assert (sub.turns[0].is_error, sub.turns[0].observation_format) == (True, "text")


def test_miroflow_malformed(tmp_path: Path) -> None:
    reader = MiroFlowReader()
    truncated = tmp_path / "truncated.json"
    truncated.write_text('{"message_history": [{"role": "user", "content": "q"}', "utf-8")
    with pytest.raises(FormatError):
        list(reader.read(truncated))

    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"message_history": "not a list"}', "utf-8")
    assert [q.position for q in reader.read(wrong)] == ["$.message_history"]

    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"message_history": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "<use_mcp_tool><server_name>s</server_name>"},
        {"role": "user", "content": "Error: malformed call"},
        {"role": "assistant", "content": _block("tool-searching", "google_search", {"q": "a"})},
        {"role": "user", "content": '{"organic": []}'},
        {"role": "assistant", "content": _block("tool-searching", "google_search", {"q": "b"})},
    ]}), "utf-8")
    trajectories, quarantined = split_items(list(reader.read(broken)))
    assert len(trajectories[0].turns) == 1
    assert trajectories[0].turns[0].observation_format == "search_results"
    assert [q.position for q in quarantined] == ["$.message_history[1]", "$.message_history[5]"]


# --- Search-R1 -------------------------------------------------------------------------------

def _write_search_r1_sample(tmp_path: Path) -> Path:
    question = "who sings does he love me with reba?"
    records = [
        {"id": "nq_3412", "question": question,
         "prompt": SEARCH_R1_PROMPT.format(question=question), "response": REBA_RESPONSE,
         "golden_answers": ["Linda Davis"], "reward": 1.0},
        {"data_source": "hotpotqa", "messages": [
            {"role": "user", "content": SEARCH_R1_PROMPT.format(
                question="Were Scott Derrickson and Ed Wood of the same nationality?")},
            {"role": "assistant", "content": "<think> Check both. </think>\n"
                                             "<search> Scott Derrickson nationality </search>"},
            {"role": "user", "content": "\n\n<information>Doc 1(Title: \"Scott Derrickson\") "
                                        "Scott Derrickson is an American director.</information>"
                                        "\n\n"},
            {"role": "assistant", "content": "<search> Ed Wood nationality </search>"},
            {"role": "tool", "content": "Doc 1(Title: \"Ed Wood\") Edward Davis Wood Jr. was an "
                                        "American filmmaker."},
            {"role": "assistant", "content": "Both are American, so yes."},
            {"role": "user", "content": "\nMy previous action is invalid. If I want to search, I "
                                        "should put the query between <search> and </search>. If "
                                        "I want to give the final answer, I should put the answer "
                                        "between <answer> and </answer>. Let me try again.\n"},
            {"role": "assistant", "content": "<answer> yes </answer>"},
        ], "reward": 0},
    ]
    path = tmp_path / "search_r1_rollouts.jsonl"
    lines = [json.dumps(record).encode() for record in records]
    lines.insert(1, b'{"question": "truncated", "response": "<search> a </sea')
    lines.insert(2, b'{"question": "bad bytes \xff\xfe", "response": ""}')
    lines.append(json.dumps({"question": "q", "response": ["not", "a", "string"]}).encode())
    lines.append(json.dumps({"question": "cut off", "response": (
        "<search> first </search><information>one</information><search> second </search>"
        "<information>orphan?</information><information>extra</information>"
        "<search> never answered </search>")}).encode())
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_search_r1_sample(tmp_path: Path) -> None:
    path = _write_search_r1_sample(tmp_path)
    trajectories, quarantined = split_items(list(SearchR1Reader().read(path)))
    assert [t.position for t in trajectories] == ["line 1", "line 4", "line 6"]
    reba, hotpot, cut = trajectories
    assert reba.task == "who sings does he love me with reba?"
    assert reba.system_prompt.startswith("Answer the given question. You must conduct reasoning")
    assert reba.outcome == "success"
    assert [t.action for t in reba.turns] == [
        "does he love me reba duet", "Linda Davis Reba McEntire Does He Love You Grammy"]
    assert reba.turns[0].observation == REBA_INFO_1
    assert 'Doc 2(Title: "Linda Davis") Linda Kaye Davis (born November 26, 1962) is an ' \
           "American country music singer." in reba.turns[0].observation.splitlines()
    assert {(t.action_kind, t.observation_format, t.tool_name) for t in reba.turns} == {
        ("search", "search_results", "search")}
    assert reba.metadata["answer"] == "Linda Davis"
    assert reba.metadata["golden_answers"] == ["Linda Davis"]

    assert hotpot.task == "Were Scott Derrickson and Ed Wood of the same nationality?"
    assert hotpot.outcome == "failure"
    assert [t.action for t in hotpot.turns] == ["Scott Derrickson nationality",
                                               "Ed Wood nationality"]
    assert hotpot.turns[1].observation.startswith('Doc 1(Title: "Ed Wood")')
    assert hotpot.metadata["answer"] == "yes"
    assert hotpot.metadata["n_invalid_action_notes"] == 1
    # the note's quoted tags are not calls
    assert "calls_without_observation" not in hotpot.metadata

    assert [t.action for t in cut.turns] == ["first", "second"]
    assert cut.metadata["calls_without_observation"] == ["never answered"]
    assert cut.outcome == "unknown"
    positions = [q.position for q in quarantined]
    assert positions[:3] == ["line 2 column 56", "line 3 byte 24", "line 5 $.response"]
    assert positions[3] == "line 6 tag 5 <information>"


def test_search_r1_template_example_is_not_a_call(tmp_path: Path) -> None:
    # Some dumps keep prompt + generation in one string; the template's own tags are skipped.
    question = "capital of China?"  # answered with the template's own example answer
    path = tmp_path / "full.jsonl"
    path.write_text(json.dumps({"response": SEARCH_R1_PROMPT.format(question=question)
                                + "<search> capital of China </search><information>Doc 1 "
                                  "Beijing</information><answer> Beijing </answer>"}) + "\n",
                    "utf-8")
    (trajectory,) = SearchR1Reader().read(path)
    assert [t.action for t in trajectory.turns] == ["capital of China"]
    assert trajectory.metadata["answer"] == "Beijing"


def test_search_r1_sniff(traces_dir: Path, tmp_path: Path) -> None:
    reader = SearchR1Reader()
    _assert_sniffs_exactly(reader, traces_dir, set())
    sample = _write_search_r1_sample(tmp_path)
    assert reader.sniff(sample, read_head(sample))
    # The generic chat reader leaves Search-R1 chats alone.
    assert not ChatJsonlReader().sniff(sample, read_head(sample))
