"""Harbor traces of OpenHands without function calling (../shared/realdev2/terminal/atif): calls
written as `<function=...>` text yield turns."""

from __future__ import annotations

from pathlib import Path

from reader_checks import read_checked

from sources.readers import detect
from sources.readers.harbor_traces import HarborTracesReader, parse_terminus

TRACES = "terminal/atif/openhands__hello-world-no_function_calling.traces.json"


def test_function_text_calls_are_turns(realdev2_dir: Path) -> None:
    path = realdev2_dir / TRACES
    assert detect(path).name == "harbor_traces"
    (trajectory,), quarantined = read_checked(HarborTracesReader(), path)
    assert quarantined == [] and trajectory.position == "$[1]"
    (turn,) = trajectory.turns
    assert (turn.action, turn.action_kind, turn.tool_name) == (
        "cat > /app/hello.txt << 'EOF'\nHello, world!\nEOF", "shell", "execute_bash")
    assert turn.observation == ("\n[The command completed with exit code 0.]\n"
                                "[Current working directory: /app]\n"
                                "[Command finished with exit code 0]")
    # OpenHands' system prompt is the rows' first user message; the task message follows it
    assert trajectory.system_prompt.startswith("You are OpenHands agent, a helpful AI assistant")
    assert trajectory.task.startswith("Here's a running example of how to perform a task")
    assert trajectory.task.rstrip().endswith("PLEASE EMIT ONE AND ONLY ONE FUNCTION CALL PER "
                                             "MESSAGE.")
    # the closing <function=finish> has no observation after it
    assert trajectory.metadata["calls_without_observation"] == [
        'finish({"message": "Task complete. Created /app/hello.txt with \'Hello, world!\'"})']
    assert "unparsed_responses" not in trajectory.metadata


def test_parse_terminus_reads_function_text() -> None:
    reply = ("I will list.\n<function=execute_bash>\n<parameter=command>ls -la</parameter>\n"
             "<parameter=security_risk>LOW</parameter>\n</function>")
    assert parse_terminus(reply) == [("execute_bash", {"command": "ls -la",
                                                       "security_risk": "LOW"})]
    assert parse_terminus("<function=finish>\n<parameter=message>done</parameter>\n</function>") \
        == [("finish", {"message": "done"})]


def test_openhands_rows_with_function_calling_take_the_task_message(realdev_dir: Path) -> None:
    path = realdev_dir / "terminal/atif/openhands__hello-world.traces.json"
    (trajectory,), _ = read_checked(HarborTracesReader(), path)
    assert trajectory.task == (
        'Create a file called hello.txt with "Hello, world!" as the content.\n')
    assert trajectory.system_prompt.startswith("You are OpenHands agent")
    assert [t.tool_name for t in trajectory.turns] == ["str_replace_editor"]
