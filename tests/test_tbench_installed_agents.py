"""terminal-bench runs of installed agents (../shared/realdev2, ../shared/realdev): the agent's own
steps read from its console, or the run quarantined with the reason; never harness keystrokes."""

from __future__ import annotations

from pathlib import Path

from reader_checks import read_checked

from sources.readers import detect
from sources.readers.miniswe_console import console_messages, drop_log_records
from sources.readers.tbench import HARNESS_ONLY, TerminalBenchReader
from sources.readers.tbench_agents import HARNESS_KEYS

TBENCH = "terminal/tbench"
MINI = "20250825_swe-agent-mini_claude-4-sonnet__new-encrypt-command.1-of-1.2025-08-07__20-46-16"
OPENHANDS = "20250711_openhands_claude-4-sonnet__extract-safely.1-of-1.openhands-sonnet3"
ORCHESTRATOR = "20250902_orchestrator_claude-4-sonnet__crack-7z-hash.4-of-5"
LOG_LINE = ("07:00:04 - LiteLLM:ERROR: litellm_logging.py:4483 - Error creating standard logging "
            "object - Missing dependency No module named 'backoff'.")


def test_mini_swe_agent_steps_are_the_turns(realdev2_dir: Path) -> None:
    folder = realdev2_dir / TBENCH / MINI
    assert detect(folder).name == "tbench_run"
    (trajectory,), quarantined = read_checked(TerminalBenchReader(), folder)
    assert quarantined == []
    assert trajectory.task.startswith("Please help me encrypt all the files I have in the data/")
    assert trajectory.outcome == "success"
    assert trajectory.system_prompt.startswith("You are a helpful assistant that can interact")
    metadata = trajectory.metadata
    assert metadata["installed_agent"] == "mini-swe-agent"
    assert metadata["agent_steps_printed"] == 9 and metadata["console_width"] == 160
    assert metadata["agent_launch"].startswith("mini -m anthropic/claude-sonnet-4-20250514 -t ")
    actions = [turn.action for turn in trajectory.turns]
    assert actions[:4] == ["ls -la", "ls -la data/ && which rencrypt", "rencrypt --help",
                           "rencrypt --version || rencrypt -p help || man rencrypt"]
    assert actions[-1] == "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    assert actions[5].startswith('for file in data/*; do\n    if [ -f "$file" ]; then')
    assert [turn.exit_code for turn in trajectory.turns] == [0, 0, 2, 0, 0, 0, 0, 0, None]
    assert [turn.action_kind for turn in trajectory.turns] == ["shell"] * 8 + ["submit"]
    assert trajectory.turns[2].observation == (
        "<returncode>2</returncode>\n<output>\n"
        "usage: rencrypt [-o OUTPUT] [-p PROTOCOL] [-v] input_files [input_files ...]\n"
        "rencrypt: error: the following arguments are required: input_files\n</output>"
    )
    # The agent's own LiteLLM error records were printed before this answer: not the command's.
    assert trajectory.turns[7].observation.startswith("<returncode>0</returncode>\n<output>\n")
    assert trajectory.turns[7].observation.endswith("noitamrofni terces emos osla si siht</output>")
    assert trajectory.turns[8].observation == ""  # submitted: mini answers with the submission
    for turn in trajectory.turns:
        assert "LiteLLM" not in turn.observation and "Waiting for the LM" not in turn.observation
        assert not HARNESS_KEYS.match(turn.action)


def test_installed_agent_that_failed_to_start_is_quarantined(realdev2_dir: Path) -> None:
    trajectories, (quarantined,) = read_checked(TerminalBenchReader(),
                                                realdev2_dir / TBENCH / OPENHANDS)
    assert trajectories == []
    assert quarantined.reason == (
        "installed-agent run: the agent's console output has no step this reader can read "
        "(launch: \"openhands --task '# Extract Solution Safely\"; last line printed: "
        "'/usr/local/bin/openhands: line 2: /app/.venv/bin/python: No such file or directory')"
    )


def test_agent_outside_the_recording_is_quarantined(realdev2_dir: Path) -> None:
    trajectories, (quarantined,) = read_checked(TerminalBenchReader(),
                                                realdev2_dir / TBENCH / ORCHESTRATOR)
    assert trajectories == [] and quarantined.reason == HARNESS_ONLY


def test_no_tbench_run_is_stored_as_harness_turns(realdev2_dir: Path, realdev_dir: Path) -> None:
    """Every run of both corpora: agent turns only, or one quarantine saying why."""
    read, reasons = {}, []
    for corpus in (realdev2_dir, realdev_dir):
        for folder in sorted((corpus / TBENCH).iterdir()):
            trajectories, quarantined = read_checked(TerminalBenchReader(), folder)
            if trajectories:
                (trajectory,) = trajectories
                assert quarantined == [] and trajectory.metadata["installed_agent"]
                assert not any(HARNESS_KEYS.match(turn.action) for turn in trajectory.turns)
                read[f"{corpus.name}/{folder.name.split('__')[1]}"] = len(trajectory.turns)
            else:
                (item,) = quarantined
                reasons.append(item.reason if item.reason == HARNESS_ONLY
                               else item.reason.split(" (")[0])
    assert read == {
        "realdev2/new-encrypt-command.1-of-1.2025-08-07": 9,
        "realdev/fix-git.1-of-1.2025-08-14": 13,
        "realdev/nginx-request-logging.1-of-1.2025-08-13": 18,
        "realdev/pytorch-model-cli.1-of-1.2025-08-07": 21,
        "realdev/simple-web-scraper.1-of-1.2025-08-15": 9,
    }
    no_steps = "installed-agent run: the agent's console output has no step this reader can read"
    assert sorted(set(reasons)) == [no_steps, HARNESS_ONLY]
    assert (reasons.count(HARNESS_ONLY), reasons.count(no_steps)) == (9 + 19, 4 + 2)


def test_console_log_records_are_dropped_outside_command_output() -> None:
    traceback = ["Traceback (most recent call last):", '  File "x.py", line 1, in <module>',
                 "    import backoff", "ModuleNotFoundError: No module named 'backoff'", "",
                 "During handling of the above exception, another exception occurred:", "",
                 "Traceback (most recent call last):", '  File "y.py", line 2, in f',
                 "ImportError: Missing dependency"]
    answer = ["<returncode>0</returncode>", "<output>", LOG_LINE, "done", "</output>"]
    kept, dropped = drop_log_records([LOG_LINE, *traceback, *answer])
    assert (kept, dropped) == (answer, 1)  # the record inside <output> is the command's own
    log = console_messages("\n".join([
        "mini -m model -t 'task'", "System:", "be brief", "", "User:", "Please solve this issue: "
        "fix it\n\nYou can execute bash commands", "─" * 40, "mini-swe-agent (step 1, $0.00):",
        "THOUGHT: look", "", "```bash", "ls", "```", LOG_LINE, "", "User:", *answer, "─" * 40,
        "mini-swe-agent (step 2, $0.01):", "```bash", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
        "```", "", "User:", "", "Saved trajectory to '/root/last_mini_run.traj.json'",
        "root@abc:/app#", "exit",
    ]))
    assert [m["role"] for m in log.messages] == ["system", "user", "assistant", "user",
                                                 "assistant", "user"]
    assert (log.agent_name, log.steps, log.log_records_dropped) == ("mini-swe-agent", 2, 1)
    assert log.messages[3]["content"] == "\n".join(answer)
    assert log.messages[2]["content"] == "THOUGHT: look\n\n```bash\nls\n```"
    assert log.messages[5]["content"] == ""
