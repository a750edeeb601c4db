"""A MiroFlow message history written as a bare list (../shared/realdev2/search/miroflow): OpenAI
`tool_calls` answered by `role: tool` messages, a `developer` system message."""

from __future__ import annotations

import json
from pathlib import Path

from reader_checks import read_checked

from sources.readers import detect
from sources.readers.miroflow import MiroFlowReader

BARE_LIST = "search/miroflow/debug_message_history_87ee9c6.json"


def test_bare_message_list_is_one_trajectory(realdev2_dir: Path) -> None:
    path = realdev2_dir / BARE_LIST
    assert detect(path).name == "miroflow"
    (trajectory,), quarantined = read_checked(MiroFlowReader(), path)
    assert quarantined == [] and trajectory.position == "$"
    assert trajectory.task.startswith("What is the NASDAQ index today?\n\nYour task is to")
    assert trajectory.system_prompt.startswith("In this environment you have access to a set")
    assert trajectory.metadata["layout"] == "message list"
    assert trajectory.metadata["final_response"].startswith("The most reliable and authoritative")
    search, scrape = trajectory.turns
    assert search.action == (
        'tool-searching-google_search({"q":"NASDAQ index today","num":5,"hl":"en","gl":"us"})')
    assert (search.action_kind, search.observation_format) == ("search", "search_results")
    assert json.loads(search.observation)["searchParameters"]["q"] == "NASDAQ index today"
    # the server's name holds "search" too: the tool named after it decides the kind
    assert scrape.tool_name == "tool-searching-scrape_website"
    assert (scrape.action_kind, scrape.observation_format) == ("open", "page_text")
    assert scrape.observation.startswith("Title: NASDAQ Composite (^IXIC) Charts, Data & News")


def test_bare_list_positions_and_broken_messages(realdev2_dir: Path, tmp_path: Path) -> None:
    messages = json.loads((realdev2_dir / BARE_LIST).read_text())
    del messages[3]  # the search's answer: the call is left open
    path = tmp_path / "history.json"
    path.write_text(json.dumps(messages))
    (trajectory,), (problem,) = read_checked(MiroFlowReader(), path)
    assert len(trajectory.turns) == 1 and trajectory.metadata["n_quarantined_messages"] == 1
    assert (problem.position, problem.reason) == (
        "$[2]", "call 'tool-searching-google_search' has no observation")
    text_calls = [{"role": "developer", "content": "Use <use_mcp_tool> blocks."},
                  {"role": "user", "content": "find x"},
                  {"role": "assistant", "content": "<use_mcp_tool>\n<server_name>tool-searching"
                   "</server_name>\n<tool_name>google_search</tool_name>\n<arguments>\n"
                   '{"q": "x"}\n</arguments>\n</use_mcp_tool>'},
                  {"role": "user", "content": '{"organic": []}'},
                  {"role": "robot", "content": "?"}]
    path.write_text(json.dumps(text_calls))
    assert detect(path).name == "miroflow"
    (trajectory,), (problem,) = read_checked(MiroFlowReader(), path)
    assert trajectory.system_prompt == "Use <use_mcp_tool> blocks."
    assert [(t.tool_name, t.observation) for t in trajectory.turns] == [
        ("google_search", '{"organic": []}')]
    assert (problem.position, problem.reason) == ("$[4]", "unknown role 'robot'")
