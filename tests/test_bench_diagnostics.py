"""`worldtrace bench run --llm-judge URL --rollout K`: a real served model as a predictor, a
real judge endpoint on 127.0.0.1, the rubric beside it, free-running decay."""

from __future__ import annotations

import csv
import json
import re
import socket

import httpx
import pytest

from bench.official import write_official
from bench.sample import BenchSample
from bench.serve.run import ServeConfig, model_app, serve_in_background
from tests.scripted_endpoint import scripted_endpoint
from tests.tiny_lm import tiny_model_dir, torch_one_thread  # noqa: F401  (fixtures)
from worldtrace.cli import main

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TURNS = [("ls", "a.txt\nb.txt"), ("cat a.txt", "alpha"), ("cat b.txt", "beta"),
         ("wc -l a.txt", "1 a.txt"), ("rm a.txt", ""), ("ls", "b.txt")]
_SIMULATED = re.compile(r"<simulated_observation>\n(.*?)\n</simulated_observation>", re.DOTALL)


def sample(turn_idx: int, trajectory: str = "t1") -> BenchSample:
    return BenchSample(domain="terminal", id=f"{trajectory}-{turn_idx}",
                       history=TURNS[:turn_idx - 1], current_action=TURNS[turn_idx - 1][0],
                       reference=TURNS[turn_idx - 1][1], system_prompt="You simulate a shell.",
                       turn_idx=turn_idx, total_turns=len(TURNS), trajectory_id=trajectory,
                       source="test")


def judge_reply(number: int, body: dict) -> str:
    """Scores that vary with the prediction (so rank agreement is defined)."""
    simulated = _SIMULATED.search(body["messages"][-1]["content"]).group(1)
    value = 1 + len(simulated) % 5
    scores = dict.fromkeys(["format", "factuality", "consistency", "realism", "quality"], value)
    return f"ok\n<final_evaluation>{json.dumps({'scores': scores})}</final_evaluation>"


def served_requests(base_url: str) -> int:
    worker = httpx.get(base_url.removesuffix("/v1") + "/health").json()["worker"]
    return worker["requests"] + worker["streams"]


def read(path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_bench_run_with_llm_judge_and_rollout(tmp_path, tiny_model_dir, capsys):  # noqa: F811
    bench_dir, out = tmp_path / "bench", tmp_path / "run"
    write_official([sample(2), sample(3), sample(4), sample(6)], bench_dir)
    judge_app, asked = scripted_endpoint(judge_reply)
    with model_app(ServeConfig(tiny_model_dir, dtype="float32")) as model, \
            serve_in_background(model) as model_url, serve_in_background(judge_app) as judge_url:
        command = ["bench", "run", "--bench-dir", str(bench_dir), "--out", str(out),
                   "--predictor", "copy_last", "--predictor", f"openai_compatible:{model_url}",
                   "--max-new-tokens", "8", "--llm-judge", judge_url, "--rollout", "3"]
        assert main(command) == 0
        answered, judged = served_requests(model_url), len(asked)
        first_scores = (out / "llm_scores.csv").read_text(encoding="utf-8")
        assert main(command) == 0  # a rerun resumes: the model and the judge asked nothing
        assert served_requests(model_url) == answered and len(asked) == judged
        assert (out / "llm_scores.csv").read_text(encoding="utf-8") == first_scores
    llm = read(out / "llm_scores.csv")
    assert len(llm) == 2 * 4 and {row["judge"] for row in llm} == {
        "llm_judge:scripted [worldtrace prompts: not the official judge]"}
    assert 1 <= len(asked) <= 8  # equal (sample, prediction) pairs are judged once
    agreement = read(out / "agreement.csv")
    assert {(row["predictor"], row["domain"]) for row in agreement} == {
        ("copy_last", "terminal"), ("copy_last", "all"),
        ("openai_compatible:tiny_lm", "terminal"), ("openai_compatible:tiny_lm", "all")}
    rollout = read(out / "rollout.csv")
    copy_last = [row for row in rollout if row["predictor"] == "copy_last"
                 and row["domain"] == "terminal"]
    # Chains start at turns 2, 3, 4 and 6; turn 6 ends the trajectory, turn 4 has two more.
    assert [(row["depth"], row["chains"]) for row in copy_last] == [("1", "4"), ("2", "3"),
                                                                     ("3", "3")]
    assert float(copy_last[0]["gap"]) == 0.0
    printed = capsys.readouterr().out
    assert "free_running" in printed and "spearman" in printed


def test_a_served_model_that_judges_nothing_leaves_the_run_whole(tmp_path, tiny_model_dir,  # noqa: F811
                                                                 capsys):
    """A real `worldtrace serve` as the judge: a tiny model writes no <final_evaluation>, so
    every sample is asked again up to --judge-attempts, then listed as unjudged with the
    reason; the rubric scores, the leaderboard and the run stand; there is no agreement."""
    bench_dir, out = tmp_path / "bench", tmp_path / "run"
    write_official([sample(2), sample(3), sample(5)], bench_dir)
    with model_app(ServeConfig(tiny_model_dir, dtype="float32")) as judge_model, \
            serve_in_background(judge_model) as judge_url:
        assert main(["bench", "run", "--bench-dir", str(bench_dir), "--out", str(out),
                     "--predictor", "copy_last", "--llm-judge", judge_url,
                     "--judge-max-tokens", "8", "--judge-attempts", "2"]) == 0
        assert served_requests(judge_url) == 3 * 2
    assert len(read(out / "scores.csv")) == 3
    unjudged = read(out / "llm_unjudged.csv")
    assert sorted(row["id"] for row in unjudged) == ["t1-2", "t1-3", "t1-5"]
    assert {(row["predictor"], row["judge"]) for row in unjudged} == {
        ("copy_last", "llm_judge:tiny_lm [worldtrace prompts: not the official judge]")}
    assert all("no valid evaluation in 2 attempts (last: no <final_evaluation>" in row["reason"]
               for row in unjudged)
    # As in the released evaluation, a judge that never answers readably fails the sample: it
    # is listed, counted and out of every average.
    llm = read(out / "llm_scores.csv")
    assert [row["failed"] for row in llm] == ["True"] * 3 and {row["score"] for row in llm} == {""}
    assert all(row["failure_reason"].startswith("Judge scoring failed") for row in llm)
    assert not (out / "agreement.csv").exists()
    printed = capsys.readouterr()
    assert ("llm_judge:tiny_lm [worldtrace prompts: not the official judge] graded 0 of 3 "
            "predictions (3 never answered readably, 6 unreadable answers)") in printed.err
    assert "copy_last" in printed.out  # the rubric leaderboard still printed


def test_a_judge_url_where_nothing_answers_stops_the_run_before_any_prediction(tmp_path,
                                                                               capsys):
    bench_dir, out = tmp_path / "bench", tmp_path / "run"
    write_official([sample(2)], bench_dir)
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    assert main(["bench", "run", "--bench-dir", str(bench_dir), "--out", str(out),
                 "--predictor", "copy_last", "--llm-judge", url]) == 2
    assert f"worldtrace: --llm-judge {url}: no judge answers there (" in capsys.readouterr().err
    assert not (out / "predictions.jsonl").exists()
