"""`simulate-mcp --replay --llm-judge URL`: every replayed call also judged by the bench's LLM
judge on a real endpoint on 127.0.0.1 (its own column, its fidelity beside the rubric's), a
judge that cannot grade a call leaving that call's row with its reason, and a judge URL where
nothing answers refused before any work."""

from __future__ import annotations

import csv
import json
import re
import socket
from pathlib import Path

import pytest

from bench.scoring import AxisScores
from bench.serve.run import ServeConfig, model_app, serve_in_background
from bench.simulate.simulation import ANCHOR, MODEL
from sources.factory.collect_mcp import collect_one
from tests.scripted_endpoint import scripted_endpoint
from tests.tiny_lm import tiny_model_dir, torch_one_thread  # noqa: F401  (fixtures)
from worldtrace.cli import main

pytestmark = pytest.mark.usefixtures("torch_one_thread")
NEW_TOKENS = 16
AXES = ("format", "factuality", "consistency", "realism", "quality")
SAME, DIFFERENT = dict.fromkeys(AXES, 5), {"format": 3, "factuality": 2, "consistency": 2,
                                           "realism": 3, "quality": 1}
_SECTION = r"<{0}>\n(.*?)\n</{0}>"


def judge_reply(number: int, body: dict) -> str:
    """A verdict read off what the judge was shown: all 5s when the simulated observation is
    the real one, lower scores otherwise (a tiny model cannot write a verdict on demand)."""
    shown = body["messages"][-1]["content"]
    simulated, real = (re.search(_SECTION.format(tag), shown, re.DOTALL).group(1)
                       for tag in ("simulated_observation", "real_observation"))
    scores = SAME if simulated == real else DIFFERENT
    return f"Compared.\n<final_evaluation>{json.dumps({'scores': scores})}</final_evaluation>"


def read(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture()
def recorded(tmp_path: Path) -> Path:
    """One real session with the trace factory's SQLite shop server."""
    collect_one(1, 0, tmp_path / "recorded", tmp_path / "work")
    return tmp_path / "recorded"


def replay(model: Path, sessions: Path, out: Path, calls: int, *judge: str) -> int:
    return main(["simulate-mcp", "--model", str(model), "--replay", str(sessions),
                 "--out", str(out), "--calls", str(calls), "--max-new-tokens", str(NEW_TOKENS),
                 *judge])


def test_the_llm_judge_scores_every_replayed_call_beside_the_rubric(
        tiny_model_dir, recorded, tmp_path, capsys):  # noqa: F811
    app, asked = scripted_endpoint(judge_reply)
    out = tmp_path / "replay"
    with serve_in_background(app) as url:
        assert replay(tiny_model_dir, recorded, out, 2, "--llm-judge", url) == 0
        judged = len(asked)
        assert replay(tiny_model_dir, recorded, out, 2, "--llm-judge", url) == 0
    assert 1 <= judged <= 4 and len(asked) == judged  # a rerun asks the judge nothing again
    rows = read(out / "replay_steps.csv")
    name = "llm_judge:scripted [worldtrace prompts: not the official judge]"
    assert len(rows) == 4 and {r["llm_judge"] for r in rows} == {name}
    same, different = AxisScores(**SAME).score, AxisScores(**DIFFERENT).score
    for row in rows:
        assert row["llm_failure_reason"] == ""
        # The anchored reads are the real answer: the judge said so; the model's never were.
        expected = same if row["answered_by"] == ANCHOR else different
        assert float(row["llm_score"]) == pytest.approx(expected, abs=1e-4), row
    assert {r["answered_by"] for r in rows} == {ANCHOR, MODEL}
    assert any(float(r["score"]) != float(r["llm_score"]) for r in rows)  # two judges
    table = {(r["mode"], r["depth"]): r for r in read(out / "fidelity.csv")}
    for mode in ("free", "anchored"):
        overall = table[(mode, "")]
        assert overall["llm_judge"] == name and overall["llm_calls"] == "2"
        assert overall["llm_failed"] == "0"
        mine = [float(r["llm_score"]) for r in rows if r["mode"] == mode]
        assert float(overall["llm_score"]) == pytest.approx(sum(mine) / 2, abs=0.01)
        assert float(overall["llm_score_low"]) <= float(overall["llm_score"]) \
            <= float(overall["llm_score_high"])
    assert table[("anchored", "")]["llm_anchored_minus_free"] != ""
    printed = capsys.readouterr()
    assert f"llm_score: {name}" in printed.out and "| llm_score |" in printed.out
    assert f"{name} graded 4 of 4 calls" in printed.err


def test_without_a_judge_the_llm_columns_are_empty(tiny_model_dir, recorded, tmp_path,  # noqa: F811
                                                   capsys):
    out = tmp_path / "replay"
    assert replay(tiny_model_dir, recorded, out, 1) == 0
    rows = read(out / "replay_steps.csv")
    assert rows and all(r["llm_judge"] == r["llm_score"] == "" for r in rows)
    assert all(r["llm_calls"] == r["llm_score"] == "" for r in read(out / "fidelity.csv"))
    assert "llm_" not in capsys.readouterr().out


def test_a_judge_that_cannot_grade_leaves_each_call_with_its_reason(
        tiny_model_dir, recorded, tmp_path, capsys):  # noqa: F811
    """A real `worldtrace serve` over the tiny model as the judge: it writes no verdict, so
    every call keeps its row and rubric score, with no LLM score and the judge's reason."""
    out = tmp_path / "replay"
    with model_app(ServeConfig(tiny_model_dir, dtype="float32")) as judge_model, \
            serve_in_background(judge_model) as url:
        assert replay(tiny_model_dir, recorded, out, 1, "--llm-judge", url,
                      "--judge-max-tokens", "8", "--judge-attempts", "1") == 0
    rows = read(out / "replay_steps.csv")
    assert len(rows) == 2 and all(r["score"] and r["llm_score"] == "" for r in rows)
    for row in rows:
        assert row["llm_failure_reason"].startswith("Judge scoring failed: ")
        assert "no valid evaluation in 1 attempts" in row["llm_failure_reason"]
    table = read(out / "fidelity.csv")
    assert {(r["llm_calls"], r["llm_failed"]) for r in table} == {("0", "1")}
    error = capsys.readouterr().err
    assert error.count("llm judge could not grade ") == 2 and "graded 0 of 2 calls" in error


def test_a_judge_url_where_nothing_answers_is_refused_before_any_work(
        tiny_model_dir, recorded, tmp_path, capsys):  # noqa: F811
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    out = tmp_path / "replay"
    assert replay(tiny_model_dir, recorded, out, 1, "--llm-judge", url) == 2
    error = capsys.readouterr().err
    assert f"--llm-judge {url}: no judge answers there" in error
    assert "Connection" in error and not (out / "replay_steps.csv").exists()


def test_a_judge_is_for_replay_only(tiny_model_dir, tmp_path, capsys):  # noqa: F811
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": [{"name": "ping", "inputSchema": {}}]}))
    assert main(["simulate-mcp", "--model", str(tiny_model_dir), "--tools", str(tools),
                 "--llm-judge", "http://127.0.0.1:1/v1"]) == 2
    assert "--llm-judge judges a --replay" in capsys.readouterr().err
