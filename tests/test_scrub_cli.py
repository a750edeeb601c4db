"""`worldtrace scrub PATH|-`, run as a real process: scrubs a text or JSONL file as the pipeline
does, `--check` lists findings by kind and line (never the value) and exits 1 when there are
any, and a missing file or a broken JSONL line is a clear error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from planted_secrets import terminal_session

from quality.scrub import Placeholders, scrub_text

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTION_TRACE = "mcp/toolathlon/claude-4.5-sonnet_notion-movies.json"


def worldtrace(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "worldtrace", *args], cwd=REPO_ROOT,
                          input=stdin, capture_output=True, text=True, timeout=120)


def test_scrubs_a_text_file_exactly_as_the_pipeline_does(tmp_path: Path) -> None:
    text, planted = terminal_session()
    path = tmp_path / "session.txt"
    path.write_text(text)
    result = worldtrace("scrub", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout == scrub_text(text, Placeholders())[0]
    assert [value for _, value in planted if value in result.stdout] == []
    assert "finding(s) in" in result.stderr and "auth_header 4" in result.stderr


def test_check_lists_each_finding_by_kind_and_line_and_exits_1(tmp_path: Path) -> None:
    text, planted = terminal_session()
    path = tmp_path / "session.txt"
    path.write_text(text)
    result = worldtrace("scrub", "--check", str(path))
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    findings = [line.split(": ")[1].split(" -> ")[0] for line in lines[:-1]]
    assert findings == sorted(findings)  # grouped by kind
    assert len(findings) == 23 and len(set(findings)) == 17  # bearer twice, the IP 3 times
    text_lines = text.splitlines()
    for line in lines[:-1]:  # each names the line its value is on
        location, rest = line.split(": ", 1)
        number = int(location.rsplit(":", 1)[1])
        kind = rest.split(" -> ")[0]
        assert any(value.splitlines()[0] in text_lines[number - 1]
                   for planted_kind, value in planted if planted_kind == kind), line
    assert f"{path}:5: password_in_url -> <SECRET_" in result.stdout
    assert f"{path}:16: auth_header -> <SECRET_" in result.stdout
    assert lines[-1].startswith("23 finding(s) in")
    assert [value for _, value in planted if value in result.stdout] == []


def test_check_of_clean_text_exits_0() -> None:
    result = worldtrace("scrub", "--check", "-", stdin="ls -la /app\ntotal 12\n")
    assert result.returncode == 0 and result.stdout.startswith("0 finding(s) in <stdin>")


def test_jsonl_from_stdin_keeps_json_and_untouched_lines(tmp_path: Path) -> None:
    text, planted = terminal_session()
    records = [{"step": 1, "action": "env | sort", "observation": text},
               {"step": 2, "action": "ls", "observation": "README.md  src"},
               {"step": 3, "messages": [{"role": "tool", "content": text.splitlines()[4]}]}]
    lines = [json.dumps(record) for record in records]
    result = worldtrace("scrub", "-", stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[1] == lines[1]  # nothing to replace: the line as it was
    scrubbed = [json.loads(line) for line in out]
    assert [value for _, value in planted if value in result.stdout] == []
    assert scrubbed[0]["observation"] == scrub_text(text, Placeholders())[0]
    # one placeholder numbering for the file: line 3's password is line 1's
    assert scrubbed[2]["messages"][0]["content"] in scrubbed[0]["observation"]
    check = worldtrace("scrub", "--check", "--format", "jsonl", "-", stdin="\n".join(lines))
    assert check.returncode == 1
    assert {line.split(": ")[0].rsplit(":", 1)[1] for line in check.stdout.splitlines()[:-1]
            } == {"1", "3"}


def test_a_real_trace_with_a_bearer_token_is_flagged(traces_dir: Path) -> None:
    """A real Toolathlon trace (realdev2) sends a Notion integration token in an Authorization
    header: the check finds it; the pipeline's earlier rule did not."""
    path = traces_dir.parent / "realdev2" / NOTION_TRACE
    if not path.exists():
        pytest.skip(f"real dev corpus 2 not found at {path}")
    result = worldtrace("scrub", "--check", str(path))
    assert result.returncode == 1
    assert f"{path}:1: auth_header -> <SECRET_" in result.stdout


def test_missing_file_and_broken_jsonl_are_clear_errors(tmp_path: Path) -> None:
    missing = worldtrace("scrub", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.strip() == f"worldtrace: {tmp_path / 'nope.jsonl'}: no such file"
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"a": 1}\n{"a": \n')
    result = worldtrace("scrub", "--check", str(broken))
    assert result.returncode == 2
    assert f"{broken}: line 2 is not JSON" in result.stderr
