"""SWE readers (SWE-agent, OpenHands, mini-swe-agent) on the real fixtures and on broken input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reader_checks import claimed_fixtures
from reader_checks import read_checked as read_all

from sources.readers.base import FormatError, Reader, read_head
from sources.readers.miniswe import MiniSweReader
from sources.readers.openhands import OpenHandsReader
from sources.readers.sweagent import SweAgentReader
from sources.schema import Trajectory

SWEAGENT = "swe/sweagent/sweagent_6e44b9__sweagenttestrepo-1c2844.traj"
SWEAGENT_FC = "swe/sweagent/function_calling_simple.traj"
SWEAGENT_CTF = "swe/sweagent/ctf_misc_networking_1.traj"
OPENHANDS = "swe/openhands/basic.json"
MINISWE = "swe/miniswe/github_issue.traj.json"

OWN_FIXTURES: dict[str, tuple[Reader, set[str]]] = {
    "sweagent": (SweAgentReader(), {SWEAGENT, SWEAGENT_FC, SWEAGENT_CTF}),
    "openhands": (OpenHandsReader(), {OPENHANDS}),
    "miniswe": (MiniSweReader(), {MINISWE}),
}


def only(reader: Reader, path: Path) -> Trajectory:
    trajectories, quarantined = read_all(reader, path)
    assert quarantined == []
    assert len(trajectories) == 1  # read_all checked vocabularies and metadata
    return trajectories[0]


# --- SWE-agent -------------------------------------------------------------------------------


def test_sweagent_trajectory_steps(traces_dir: Path) -> None:
    trajectory = only(SweAgentReader(), traces_dir / SWEAGENT)
    assert trajectory.position == "$"
    assert len(trajectory.turns) == 5
    assert [t.action_kind for t in trajectory.turns] == [
        "shell",
        "shell",
        "edit",
        "shell",
        "submit",
    ]
    first = trajectory.turns[0]
    assert first.action == "find_file missing_colon.py"
    assert first.tool_name == "find_file"
    assert first.observation.startswith('Found 1 matches for "missing_colon.py"')
    assert trajectory.turns[3].action == "python3 /SWE-agent__test-repo/tests/missing_colon.py"
    assert trajectory.turns[3].observation == "8.2"
    assert "+def division(a: float, b: float) -> float:" in trajectory.turns[4].observation
    # The task is the issue text cut out of the instance template, not the template.
    assert trajectory.task.startswith("SyntaxError: invalid syntax\nI'm running `missing_colon.py`")
    assert "INSTRUCTIONS" not in trajectory.task and "ISSUE:" not in trajectory.task
    assert trajectory.system_prompt.startswith("SETTING: You are an autonomous programmer")
    assert trajectory.outcome == "unknown"  # exit_status "submitted" is not a success label
    assert trajectory.metadata["exit_status"] == "submitted"
    assert trajectory.metadata["model"] == "gpt-4o"
    assert trajectory.metadata["model_stats"]["api_calls"] == 5
    assert trajectory.metadata["submission"].startswith("\r\ndiff --git a/tests/missing_colon.py")


def test_sweagent_history_only_demonstration(traces_dir: Path) -> None:
    trajectory = only(SweAgentReader(), traces_dir / SWEAGENT_FC)
    assert [t.action for t in trajectory.turns] == [
        "find_file missing_colon.py",
        'open "tests/missing_colon.py"',
        (
            "edit 'def division(a: float, b: float) -> float' "
            "'def division(a: float, b: float) -> float:'"
        ),
        "python tests/missing_colon.py",
        "submit",
    ]
    assert trajectory.turns[3].observation.splitlines()[0] == "8.2"
    assert trajectory.turns[2].action_kind == "edit"
    assert trajectory.metadata["function_calling"] is True
    assert "exit_status" not in trajectory.metadata  # a demonstration has no info block


def test_sweagent_ctf(traces_dir: Path) -> None:
    trajectory = only(SweAgentReader(), traces_dir / SWEAGENT_CTF)
    assert len(trajectory.turns) == 4
    assert trajectory.turns[0].action == "tshark -n -r networking.pcap -q -z io,phs \n"
    assert "flag{d316759c281bf925d600be698a4973d5}" in trajectory.turns[2].observation.splitlines()
    last = trajectory.turns[3]
    assert last.action == "submit 'flag{d316759c281bf925d600be698a4973d5}'\n"
    assert (last.action_kind, last.observation) == ("submit", "")
    assert 'problem named "Networking 1"' in trajectory.task
    assert trajectory.task.endswith("Files included in the challenge: ['networking.pcap']")
    assert trajectory.system_prompt.startswith("SETTING: You are a skilled cybersecurity")
    assert trajectory.metadata["submission"] == "flag{d316759c281bf925d600be698a4973d5}"


def test_sweagent_wrong_types_are_quarantined(tmp_path: Path, traces_dir: Path) -> None:
    document = json.loads((traces_dir / SWEAGENT).read_text())
    reader = SweAgentReader()

    bad = tmp_path / "string.traj"
    bad.write_text(json.dumps({**document, "trajectory": "not a list"}))
    trajectories, quarantined = read_all(reader, bad)
    assert trajectories == []
    assert [(q.position, q.source_path) for q in quarantined] == [("$.trajectory", str(bad))]
    assert "trajectory must be list" in quarantined[0].reason

    steps = [dict(step) for step in document["trajectory"]]
    steps[1]["action"] = 42
    bad.write_text(json.dumps({**document, "trajectory": steps}))
    _, quarantined = read_all(reader, bad)
    assert [q.position for q in quarantined] == ["$.trajectory[1].action"]


def test_sweagent_unparseable_files_raise(tmp_path: Path, traces_dir: Path) -> None:
    raw = (traces_dir / SWEAGENT).read_bytes()
    truncated = tmp_path / "truncated.traj"
    truncated.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(FormatError) as error:
        list(SweAgentReader().read(truncated))
    assert error.value.position.startswith("line ")

    broken = tmp_path / "utf8.traj"
    broken.write_bytes(raw[:100] + b"\xff\xfe" + raw[100:])
    with pytest.raises(FormatError, match="invalid UTF-8") as error:
        list(SweAgentReader().read(broken))
    assert error.value.position == "byte 100"

    listing = tmp_path / "list.traj"
    listing.write_text("[1, 2]")
    with pytest.raises(FormatError, match="expected a JSON object"):
        list(SweAgentReader().read(listing))


# --- OpenHands -------------------------------------------------------------------------------


def test_openhands_pairs_by_cause(traces_dir: Path) -> None:
    trajectory = only(OpenHandsReader(), traces_dir / OPENHANDS)
    assert trajectory.task == (
        "Please create a simple 2048 game. No need to run it. "
        "Please finish the interaction after your finish coding."
    )
    assert len(trajectory.turns) == 1
    turn = trajectory.turns[0]
    assert turn.action.startswith(
        'str_replace_editor({"command": "create", "path": "/workspace/game_2048.py", '
        '"file_text": "import random\\nimport keyboard\\n'
    )
    assert (turn.action_kind, turn.tool_name, turn.is_error) == (
        "edit",
        "str_replace_editor",
        False,
    )
    assert turn.observation.startswith("--- /workspace/game_2048.py\n+++ /workspace/game_2048.py")
    assert "+class Game2048:" in turn.observation.splitlines()
    # The finish action has no environment response: counted and kept in metadata, not a turn.
    assert trajectory.metadata["skipped_events"] == {"non_environment_action:finish": 1}
    assert trajectory.metadata["final_message"].startswith("I've created a simple implementation")
    assert trajectory.metadata["models"] == ["claude-3-5-sonnet-20241022"]
    assert trajectory.outcome == "unknown"


def _events(*extra: dict) -> list[dict]:
    return [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "list files"}},
        {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls -a", "thought": "x"}},
        {
            "id": 2,
            "source": "agent",
            "observation": "run",
            "cause": 1,
            "content": ".\n..",
            "extras": {"metadata": {"exit_code": 0}},
        },
        *extra,
    ]


def test_openhands_run_and_orphan_observation(tmp_path: Path) -> None:
    path = tmp_path / "events.json"
    orphan = {"id": 4, "source": "agent", "observation": "run", "cause": 99, "content": "?"}
    state = {
        "id": 5,
        "source": "environment",
        "observation": "agent_state_changed",
        "content": "",
        "extras": {"agent_state": "finished"},
    }
    path.write_text(json.dumps(_events("not an event", orphan, state)))
    trajectories, quarantined = read_all(OpenHandsReader(), path)
    assert [q.position for q in quarantined] == ["$[3]", "$[4]"]
    assert "cause 99, matching no action" in quarantined[1].reason
    (trajectory,) = trajectories
    (turn,) = trajectory.turns
    assert (turn.action, turn.observation, turn.exit_code) == ("ls -a", ".\n..", 0)
    assert (turn.action_kind, turn.observation_format) == ("shell", "stdout")
    assert trajectory.metadata["skipped_events"] == {
        "observation_without_cause:agent_state_changed": 1
    }


def test_openhands_truncated_and_invalid_utf8(tmp_path: Path, traces_dir: Path) -> None:
    raw = (traces_dir / OPENHANDS).read_bytes()
    truncated = tmp_path / "truncated.json"
    truncated.write_bytes(raw[: len(raw) - 200])
    with pytest.raises(FormatError, match="invalid JSON") as error:
        list(OpenHandsReader().read(truncated))
    assert error.value.position.startswith("$[")

    broken = tmp_path / "utf8.json"
    broken.write_bytes(json.dumps(_events()).encode().replace(b"ls -a", b"ls \xff"))
    with pytest.raises(FormatError):
        list(OpenHandsReader().read(broken))


# --- mini-swe-agent --------------------------------------------------------------------------


def test_miniswe_bare_message_list(traces_dir: Path) -> None:
    trajectory = only(MiniSweReader(), traces_dir / MINISWE)
    assert len(trajectory.turns) == 10
    first = trajectory.turns[0]
    assert first.action == (
        "cat /Users/fuchur/Documents/24/git_sync/swe-agent-test-repo/tests/./missing_colon.py"
    )
    assert (first.exit_code, first.tool_name, first.action_kind) == (1, "cat", "shell")
    assert first.observation.startswith("<returncode>1</returncode>\n<output>\ncat: ")
    assert "No such file or directory" in first.observation
    assert trajectory.turns[6].action == "python3 tests/missing_colon.py"
    assert "8.2" in trajectory.turns[6].observation.splitlines()
    assert trajectory.turns[6].exit_code == 0
    last = trajectory.turns[-1]
    assert last.action.startswith("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    assert (last.action_kind, last.exit_code) == ("submit", None)
    assert last.observation.startswith("diff --git a/tests/missing_colon.py")
    assert trajectory.task.startswith("GitHub Issue: SyntaxError: invalid syntax\n")
    assert "Recommended Workflow" not in trajectory.task
    assert trajectory.system_prompt.startswith("You are a helpful assistant")
    assert trajectory.outcome == "unknown"


def test_miniswe_wrapper_and_format_errors(tmp_path: Path, traces_dir: Path) -> None:
    messages = json.loads((traces_dir / MINISWE).read_text())
    # An answer with two bash blocks is not executed; mini-swe-agent replies with a complaint.
    two_blocks = {"role": "assistant", "content": "```bash\nls\n```\n```bash\npwd\n```"}
    complaint = {"role": "user", "content": "Please always provide EXACTLY ONE action."}
    messages = messages[:2] + [two_blocks, complaint] + messages[2:]
    path = tmp_path / "run.traj.json"
    path.write_text(
        json.dumps(
            {
                "info": {
                    "exit_status": "Submitted",
                    "submission": "diff",
                    "mini_version": "1.1.0",
                    "config": {"model": {"model_name": "claude-sonnet-4"}},
                },
                "messages": messages,
                "trajectory_format": "mini-swe-agent-1.1",
            }
        )
    )
    reader = MiniSweReader()
    assert reader.sniff(path, read_head(path))
    trajectory = only(reader, path)
    assert len(trajectory.turns) == 10
    assert trajectory.turns[0].action.startswith("cat /Users/fuchur/")
    assert trajectory.metadata["format_errors"] == 1
    assert trajectory.metadata["exit_status"] == "Submitted"
    assert trajectory.metadata["model"] == "claude-sonnet-4"


def test_miniswe_tool_call_messages(tmp_path: Path) -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": "ls"})},
    }
    path = tmp_path / "toolcall.traj.json"
    path.write_text(
        json.dumps(
            {
                "trajectory_format": "mini-swe-agent-1.1",
                "info": {},
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "do it"},
                    {"role": "assistant", "content": "", "tool_calls": [call]},
                    {
                        "role": "tool",
                        "tool_call_id": "c1",
                        "content": "a.txt",
                        "extra": {"returncode": 0},
                    },
                ],
            }
        )
    )
    trajectory = only(MiniSweReader(), path)
    assert [(t.action, t.observation, t.exit_code) for t in trajectory.turns] == [
        ("ls", "a.txt", 0)
    ]
    assert trajectory.task == "do it"


def test_miniswe_malformed(tmp_path: Path, traces_dir: Path) -> None:
    path = tmp_path / "bad.traj.json"
    path.write_text(json.dumps({"info": {}, "messages": "oops"}))
    trajectories, quarantined = read_all(MiniSweReader(), path)
    assert trajectories == [] and [q.position for q in quarantined] == ["$.messages"]

    messages = json.loads((traces_dir / MINISWE).read_text())
    messages[3] = ["not", "a", "message"]
    path.write_text(json.dumps(messages))
    _, quarantined = read_all(MiniSweReader(), path)
    assert [q.position for q in quarantined] == ["$[3]"]

    raw = (traces_dir / MINISWE).read_bytes()
    path.write_bytes(raw[:-50])
    with pytest.raises(FormatError, match="invalid JSON"):
        list(MiniSweReader().read(path))
    path.write_bytes(b"\xc3\x28" + raw)
    with pytest.raises(FormatError, match="invalid UTF-8"):
        list(MiniSweReader().read(path))


# --- sniffing --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(OWN_FIXTURES))
def test_sniff_claims_own_fixtures_only(key: str, traces_dir: Path) -> None:
    reader, own = OWN_FIXTURES[key]
    assert claimed_fixtures(reader, traces_dir) == own


def test_sniff_rejects_jsonl_of_steps(tmp_path: Path) -> None:
    line = json.dumps({"trajectory": [{"action": "ls", "observation": "a"}], "history": []})
    path = tmp_path / "steps.jsonl"
    path.write_text(line + "\n" + line + "\n")
    assert not SweAgentReader().sniff(path, read_head(path))
    path.write_text(line)
    assert SweAgentReader().sniff(path, read_head(path))
