"""Terminal readers (ATIF, Harbor traces, terminal-bench run folders) on real and broken input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reader_checks import claimed_fixtures
from reader_checks import read_checked as read_all

from sources.readers.atif import AtifReader
from sources.readers.base import FormatError, Reader
from sources.readers.harbor_traces import HarborTracesReader, parse_terminus
from sources.readers.tbench import TerminalBenchReader, render_keys, render_output

ATIF = "terminal/atif/hello-world-invalid-json.trajectory.json"
HARBOR = "terminal/harbor/hello-world-invalid-json.traces.json"
TBENCH = "terminal/tbench/fix-permissions.1-of-1"
TASK = 'Create a file called hello.txt with "Hello, world!" as the content.'
PRINTF = "printf 'Hello, world!\\n' > hello.txt\n"

OWN_FIXTURES: dict[str, tuple[Reader, set[str]]] = {
    "atif": (AtifReader(), {ATIF}),
    "harbor": (HarborTracesReader(), {HARBOR}),
    "tbench": (TerminalBenchReader(), {TBENCH}),
}


# --- ATIF ------------------------------------------------------------------------------------


def test_atif_tool_calls_and_the_unparsed_step(traces_dir: Path) -> None:
    (trajectory,), quarantined = read_all(AtifReader(), traces_dir / ATIF)
    assert quarantined == []
    assert trajectory.task == TASK
    assert "no job control in this shell" in trajectory.metadata["initial_terminal_state"]
    # Step 2 printed commands inside invalid JSON: the harness ran nothing and said so.
    assert trajectory.metadata["steps_not_turns"] == [
        {"step_id": 2, "reason": "response could not be parsed; nothing ran"}
    ]
    assert len(trajectory.turns) == 3
    first = trajectory.turns[0]
    assert (first.action, first.action_kind, first.tool_name) == (PRINTF, "shell", "bash_command")
    assert first.observation_format == "terminal_screen"
    assert "root@CONTAINER_ID:/app# printf 'Hello, world!\\n' > hello.txt" in (
        first.observation.splitlines()
    )
    assert [t.action for t in trajectory.turns[1:]] == ["mark_task_complete({})"] * 2
    assert trajectory.turns[1].action_kind == "submit"
    assert "Are you sure you want to mark the task as complete?" in trajectory.turns[1].observation
    assert trajectory.outcome == "unknown"
    assert trajectory.metadata["agent"]["name"] == "terminus-2"
    assert trajectory.metadata["final_metrics"]["total_prompt_tokens"] == 2417


def _atif(steps: object) -> dict:
    return {
        "schema_version": "ATIF-v1.5",
        "session_id": "s",
        "agent": {"name": "a"},
        "steps": steps,
    }


def test_atif_matches_results_by_call_id(tmp_path: Path) -> None:
    calls = [
        {"tool_call_id": "a", "function_name": "read", "arguments": {"path": "x"}},
        {"tool_call_id": "b", "function_name": "read", "arguments": {"path": "y"}},
    ]
    results = [
        {"source_call_id": "b", "content": "Y"},
        {"source_call_id": "a", "content": "X"},
        {"source_call_id": "zzz", "content": "?"},
    ]
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            _atif(
                [
                    {"step_id": 1, "source": "user", "message": "read both"},
                    {
                        "step_id": 2,
                        "source": "agent",
                        "message": "",
                        "tool_calls": calls,
                        "observation": {"results": results},
                    },
                ]
            )
        )
    )
    (trajectory,), quarantined = read_all(AtifReader(), path)
    assert [(t.action, t.observation) for t in trajectory.turns] == [
        ('read({"path": "x"})', "X"),
        ('read({"path": "y"})', "Y"),
    ]
    assert trajectory.turns[0].observation_format == "tool_result_text"
    assert [q.position for q in quarantined] == ["$.steps[1].observation.results[2]"]


def test_atif_one_screen_for_several_keystroke_calls(tmp_path: Path) -> None:
    calls = [
        {
            "tool_call_id": f"c{i}",
            "function_name": "bash_command",
            "arguments": {"keystrokes": keys, "duration": 0.1},
        }
        for i, keys in enumerate(["cd /app\n", "ls\n"])
    ]
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            _atif(
                [
                    {"step_id": 1, "source": "user", "message": "look"},
                    {
                        "step_id": 2,
                        "source": "agent",
                        "message": "",
                        "tool_calls": calls,
                        "observation": {
                            "results": [{"content": "New Terminal Output:\n$ ls\nfile"}]
                        },
                    },
                ]
            )
        )
    )
    (trajectory,), _ = read_all(AtifReader(), path)
    (turn,) = trajectory.turns
    assert turn.action == "cd /app\nls\n"
    assert turn.observation.endswith("file")


def test_atif_malformed(tmp_path: Path, traces_dir: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_atif("steps as a string")))
    trajectories, quarantined = read_all(AtifReader(), path)
    assert trajectories == [] and [q.position for q in quarantined] == ["$.steps"]

    path.write_text(
        json.dumps(
            _atif(
                [
                    {"step_id": 1, "source": "user", "message": "x"},
                    {"step_id": 2, "source": "agent", "tool_calls": [7]},
                ]
            )
        )
    )
    _, quarantined = read_all(AtifReader(), path)
    assert [q.position for q in quarantined] == ["$.steps[1].tool_calls[0]"]

    raw = (traces_dir / ATIF).read_bytes()
    path.write_bytes(raw[:3000])
    with pytest.raises(FormatError, match="invalid JSON"):
        list(AtifReader().read(path))
    path.write_bytes(raw.replace(b"hello.txt", b"hello\xff.txt", 1))
    with pytest.raises(FormatError, match="invalid UTF-8"):
        list(AtifReader().read(path))


# --- Harbor traces ---------------------------------------------------------------------------


def test_harbor_rows_of_a_trial_merge(traces_dir: Path) -> None:
    (trajectory,), quarantined = read_all(HarborTracesReader(), traces_dir / HARBOR)
    assert quarantined == []
    # Four episode rows, each a prefix of the next: one trajectory, at the longest row.
    assert trajectory.position == "$[3]"
    assert trajectory.metadata["merged_prefix_rows"] == ["$[0]", "$[1]", "$[2]"]
    assert trajectory.metadata["episodes"] == [f"episode-{i}" for i in range(4)]
    assert trajectory.task == TASK
    assert trajectory.metadata["task_name"] == "hello-world"
    assert trajectory.metadata["format_errors"] == 1
    assert trajectory.metadata["calls_without_observation"] == ["mark_task_complete({})"]
    assert [t.action for t in trajectory.turns] == [PRINTF, "mark_task_complete({})"]
    assert trajectory.turns[0].observation.startswith(
        "New Terminal Output:\n\nroot@CONTAINER_ID:/app# printf 'Hello, world!\\n' > hello.txt\n"
    )
    assert trajectory.turns[1].action_kind == "submit"
    assert trajectory.outcome == "unknown"  # result is null in this export


def test_harbor_and_atif_agree_on_the_same_run(traces_dir: Path) -> None:
    (harbor,), _ = read_all(HarborTracesReader(), traces_dir / HARBOR)
    (atif,), _ = read_all(AtifReader(), traces_dir / ATIF)
    # Harbor stores no observation after the last reply, so it has one turn fewer.
    assert [t.action for t in harbor.turns] == [t.action for t in atif.turns[:2]]
    assert harbor.task == atif.task


def _row(trial: str, conversation: object, result: object = None) -> dict:
    return {
        "conversations": conversation,
        "agent": "terminus-2",
        "task": "t",
        "episode": "episode-0",
        "run_id": "r",
        "trial_name": trial,
        "result": result,
    }


def test_harbor_bad_row_outcomes_and_truncation(tmp_path: Path) -> None:
    prompt = {"role": "user", "content": "Task Description:\nSay hi\n\nCurrent terminal state:\n$"}
    reply = {
        "role": "assistant",
        "content": '{"analysis": "", "plan": "", "commands": [{"keystrokes": "echo hi\\n"}]}',
    }
    screen = {"role": "user", "content": "New Terminal Output:\n$ echo hi\nhi"}
    rows = [
        _row("a", [prompt, reply, screen], "1.0"),
        _row("b", "not a list"),
        _row("c", [prompt, reply, screen], "0.0"),
        _row("d", [prompt], "AgentTimeoutError"),
    ]
    path = tmp_path / "x.traces.json"
    path.write_text(json.dumps(rows))
    trajectories, quarantined = read_all(HarborTracesReader(), path)
    assert [q.position for q in quarantined] == ["$[1]"]
    assert [(t.position, t.outcome) for t in trajectories] == [
        ("$[0]", "success"),
        ("$[2]", "failure"),
        ("$[3]", "unknown"),
    ]
    assert trajectories[0].task == "Say hi"
    assert [(t.action, t.observation) for t in trajectories[0].turns] == [
        ("echo hi\n", "New Terminal Output:\n$ echo hi\nhi")
    ]

    raw = path.read_bytes()
    path.write_bytes(raw[: raw.index(b'"trial_name": "c"') + 5])
    stream = HarborTracesReader().read(path)
    items = [next(stream), next(stream)]
    with pytest.raises(FormatError, match="invalid JSON"):
        next(stream)
    assert [getattr(item, "position", None) for item in items] == ["$[1]", "$[0]"]
    assert items[1].metadata["file_breaks_after_this_row"] is True

    path.write_bytes(raw.replace(b"echo hi", b"echo \xff", 1))
    with pytest.raises(FormatError):
        list(HarborTracesReader().read(path))


def test_parse_terminus_formats() -> None:
    assert parse_terminus(
        '<think>{"commands": []}</think>{"commands": [], "task_complete": true}'
    ) == [("mark_task_complete", {})]
    xml = '<response><commands><keystrokes duration="1">ls\n</keystrokes></commands></response>'
    assert parse_terminus(xml) == [("bash_command", {"keystrokes": "ls\n"})]
    tool = (
        '<tool_call>\n{"name": "bash_command", "arguments": {"keystrokes": "pwd\\n"}}\n</tool_call>'
    )
    assert parse_terminus(tool) == [("bash_command", {"keystrokes": "pwd\n"})]
    assert parse_terminus("I will just think.") is None


# --- terminal-bench --------------------------------------------------------------------------


def test_tbench_installed_agent_that_never_ran_is_quarantined(traces_dir: Path) -> None:
    """The fixture run launched mini-swe-agent, which was not installed: its keystrokes are all
    the harness's (clear, setup, install, launch, C-d), so it is quarantined, not stored."""
    trajectories, (quarantined,) = read_all(TerminalBenchReader(), traces_dir / TBENCH)
    assert trajectories == []
    assert quarantined.position == "folder"
    assert quarantined.reason.startswith("installed-agent run: the agent's console output has no")
    assert "launch: 'mini -m anthropic/claude-sonnet-4-0 -t " in quarantined.reason
    assert quarantined.reason.endswith("last line printed: 'bash: mini: command not found')")


def _copy_run(
    source: Path, target: Path, results: dict | None = None, cast_lines: list[bytes] | None = None
) -> Path:
    (target / "sessions").mkdir(parents=True)
    original = json.loads((source / "results.json").read_text())
    (target / "results.json").write_text(json.dumps({**original, **(results or {})}))
    cast = (source / "sessions" / "agent.cast").read_bytes().splitlines(keepends=True)
    (target / "sessions" / "agent.cast").write_bytes(b"".join(cast_lines or cast))
    return target


def test_tbench_outcome_from_is_resolved(tmp_path: Path) -> None:
    for value, outcome in ((True, "success"), (False, "failure"), (None, "unknown")):
        run = _cast(tmp_path / str(value), TYPED_LS, {"instruction": "list", "is_resolved": value})
        (trajectory,), _ = read_all(TerminalBenchReader(), run)
        assert trajectory.outcome == outcome


def test_tbench_malformed_cast_lines(tmp_path: Path, traces_dir: Path) -> None:
    run = _cast(tmp_path / "run", TYPED_LS)
    cast = (run / "sessions" / "agent.cast").read_bytes().splitlines(keepends=True)
    broken = (
        cast[:4]
        + [b'[1.0, "o", "unterminated\n', b'[1.1, "o", "\xff\xfe"]\n', b'{"not": "an event"}\n']
        + cast[4:]
    )
    (run / "sessions" / "agent.cast").write_bytes(b"".join(broken))
    (trajectory,), quarantined = read_all(TerminalBenchReader(), run)
    assert [q.position.split(" column")[0].split(" byte")[0] for q in quarantined] == [
        "sessions/agent.cast line 5",
        "sessions/agent.cast line 6",
        "sessions/agent.cast line 7",
    ]
    assert [t.action for t in trajectory.turns] == ["ls\n"]  # the rest is still read

    bad_header = _copy_run(
        traces_dir / TBENCH, tmp_path / "header", cast_lines=[b'{"version": 1}\n'] + cast[1:]
    )
    with pytest.raises(FormatError, match="asciinema v2 header"):
        list(TerminalBenchReader().read(bad_header))

    bad_results = _copy_run(traces_dir / TBENCH, tmp_path / "results")
    (bad_results / "results.json").write_text('{"instruction": "x", ')
    with pytest.raises(FormatError, match="invalid JSON"):
        list(TerminalBenchReader().read(bad_results))

    no_task = _copy_run(traces_dir / TBENCH, tmp_path / "notask", {"instruction": 5})
    trajectories, quarantined = read_all(TerminalBenchReader(), no_task)
    assert trajectories == [] and "instruction" in quarantined[0].position


TYPED_LS = [
    [0.0, "o", "$ "],
    [0.1, "i", "clear\r"],
    [0.2, "o", "clear\r\n\x1b[H\x1b[J$ "],
    [0.3, "i", "ls\r"],
    [0.4, "o", "ls\r\nfile.txt\r\n$ "],
    [0.5, "i", "\x04"],
    [0.6, "o", "\r\nexit\r\n"],
]


def _cast(tmp_path: Path, events: list[list], results: dict | None = None) -> Path:
    run = tmp_path / "synthetic"
    (run / "sessions").mkdir(parents=True)
    results = results or {"instruction": "type", "is_resolved": True}
    (run / "results.json").write_text(json.dumps(results))
    lines = [json.dumps({"version": 2, "width": 80, "height": 24})]
    lines += [json.dumps(event) for event in events]
    (run / "sessions" / "agent.cast").write_text("\n".join(lines) + "\n")
    return run


def test_tbench_key_by_key_typing_is_one_action(tmp_path: Path) -> None:
    run = _cast(
        tmp_path,
        [
            [0.0, "o", "$ "],
            [0.1, "i", "l"],
            [0.2, "o", "l"],
            [0.3, "i", "s"],
            [0.4, "o", "s"],
            [0.5, "i", "\r"],
            [0.6, "o", "\r\nfile.txt\r\n$ "],
            [1.0, "i", "less file.txt\r"],
            [1.1, "o", "\x1b[?1049h\x1b[Hhello\r\n:"],
            [2.0, "i", "q"],
            [2.1, "o", "\x1b[?1049l\r$ "],
        ],
    )
    (trajectory,), _ = read_all(TerminalBenchReader(), run)
    assert [t.action for t in trajectory.turns] == ["ls\n", "less file.txt\n", "q"]
    assert trajectory.turns[0].observation == "ls\nfile.txt\n$"
    assert trajectory.outcome == "success"


def test_tbench_harness_framing_is_not_a_turn(tmp_path: Path) -> None:
    (trajectory,), _ = read_all(TerminalBenchReader(), _cast(tmp_path, TYPED_LS))
    assert [(t.action, t.observation) for t in trajectory.turns] == [("ls\n", "ls\nfile.txt\n$")]
    assert trajectory.metadata["harness_keystrokes_dropped"] == ["clear", "C-d"]
    only_harness = _cast(tmp_path / "only", [TYPED_LS[1], TYPED_LS[2], TYPED_LS[5]])
    trajectories, (quarantined,) = read_all(TerminalBenchReader(), only_harness)
    assert trajectories == [] and "only the terminal-bench harness's own keystrokes" in (
        quarantined.reason)


def test_screen_rendering() -> None:
    assert render_output("abc\rX") == "Xbc"
    assert render_output("\x1b[1;31mred\x1b[0m text") == "red text"
    assert render_output("\x1b]0;title\x07hi") == "hi"
    assert render_output("10%\r\x1b[Kdone\r\n") == "done"
    assert render_output("old\r\n\x1b[H\x1b[Jnew") == "new"
    assert render_output("ab\bc") == "ac"
    assert render_output("\x1b[?2004hroot# ") == "root#"
    assert render_keys("\x1b[200~ls -la\x1b[201~\r") == "ls -la\n"
    assert render_keys("\x03") == "C-c"
    assert render_keys("vim x\r\x1b:wq\r") == "vim x\nEscape :wq\n"


# --- sniffing --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(OWN_FIXTURES))
def test_sniff_claims_own_fixtures_only(key: str, traces_dir: Path) -> None:
    reader, own = OWN_FIXTURES[key]
    assert claimed_fixtures(reader, traces_dir) == own


def test_atif_reads_an_exit_code_from_step_extra(tmp_path: Path) -> None:
    document = {
        "schema_version": "ATIF-v1.2",
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "list files"},
            {
                "step_id": 2, "source": "agent", "message": "run ls",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "bash_command",
                                "arguments": {"keystrokes": "lss\n"}}],
                "observation": {"results": [{"source_call_id": "c1",
                                             "content": "bash: lss: command not found"}]},
                "extra": {"exit_code": 127},
            },
        ],
    }
    path = tmp_path / "t.trajectory.json"
    path.write_text(json.dumps(document))
    (trajectory,) = list(AtifReader().read(path))
    assert trajectory.turns[0].exit_code == 127
