"""The official judge (issue 16): `--judge-prompts ../shared/official-agentworld/prompts`
makes the LLM judge ask with the released prompts over the record's own strings, at
temperature 0.6, and read its answer as the released judge parser does; tested against a real
local OpenAI-compatible server (tests/scripted_endpoint.py) and the released code itself."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from bench.judges.official_prompts import (
    OfficialPromptsError,
    load_official_prompts,
    official_judge_messages,
    read_verdict,
)
from bench.official import read_official
from bench.parsing import parse_prediction
from bench.serve.run import serve_in_background
from tests.released_code import released_eval, released_module
from tests.scripted_endpoint import scripted_endpoint
from tests.test_bench_official import OFFICIAL_RECORDS
from worldtrace.cli import main

# (answer, scores as the released parser reads them, or None: unreadable)
ANSWERS = [
    ('{"scores": {"format": "4/5", "factuality": 3, "consistency": 5, "realism": 4, '
     '"quality": 2}}', {"format": 4, "factuality": 3, "consistency": 5, "realism": 4,
                        "quality": 2}),
    ("Reasoning first.\n<final_evaluation>\n```json\n{\"strengths\": [\"x\"], \"weaknesses\": "
     "[], \"scores\": {\"format\": 5, \"factuality\": 4.6, \"consistency\": 4, \"realism\": "
     "\"5\", \"quality\": 3}}\n```\n</final_evaluation>",
     {"format": 5, "factuality": 5, "consistency": 4, "realism": 5, "quality": 3}),
    ("<think>draft {\"scores\": {\"format\": 1}}</think><FINAL_EVALUATION>{'scores': "
     "{format: 2, factuality: 9, consistency: 0, realism: 3, quality: 3,},}",
     {"format": 2, "factuality": 5, "consistency": 0, "realism": 3, "quality": 3}),
    ('{"scores": {"format": 4, "quality": "good"}}',
     {"format": 4, "factuality": 0, "consistency": 0, "realism": 0, "quality": 0}),
    ('{"notes": "fine"} and then {"scores": {"format": 3, "factuality": 3, "consistency": 3, '
     '"realism": 3, "quality": 3}} trailing', dict.fromkeys(
         ("format", "factuality", "consistency", "realism", "quality"), 3)),
    ("I think it is fine.", None),
    ('{"verdict": "good"}', None),
    ("", None),
]


@pytest.mark.parametrize(("answer", "scores"), ANSWERS)
def test_verdicts_are_read_forgivingly(answer: str, scores: dict | None) -> None:
    verdict = read_verdict(answer)
    assert (verdict and verdict["scores"]) == scores


def test_verdicts_agree_with_the_released_parser(official_dir: Path) -> None:
    released = released_module(official_dir, "lwm_eval_utils.judge_parser")
    for answer, scores in ANSWERS:
        theirs = released.parse_judge_output(answer, "final_evaluation")
        assert theirs["success"] == (scores is not None), answer
        if scores is not None:
            assert theirs["scores"] == scores, answer


def test_prompts_load_from_a_checkout_and_match_the_released_messages(
        official_dir: Path, tmp_path: Path) -> None:
    prompts = load_official_prompts(official_dir / "prompts")
    for domain in ("mcp", "search", "terminal", "swe", "android", "web", "os"):
        assert prompts.system[domain] == (
            official_dir / "prompts" / domain / "judge_system_prompt.txt").read_text("utf-8")
    utils = released_module(official_dir, "lwm_eval_utils")
    released_prompts = {d: (official_dir / "prompts" / d / "judge_system_prompt.txt"
                            ).read_text("utf-8") for d in prompts.system}
    eval_py = released_eval(official_dir)
    assert utils.JUDGE_USER_PROMPT == prompts.user_template
    generation = "<think>hm</think><predicted_observation>\n**Environment Observation:**\n" \
                 "a\n</predicted_observation>"
    for record in OFFICIAL_RECORDS:
        domain = record["task"].split("/")[-1]
        ours = official_judge_messages(record, domain, parse_prediction(generation).observation,
                                       prompts)
        extracted = utils.parse_model_output(generation, "predicted_observation")
        theirs = eval_py.build_judge_messages(record, extracted, released_prompts)
        assert ours == theirs, record["id"]
    with pytest.raises(OfficialPromptsError, match="judge_system_prompt.txt"):
        load_official_prompts(tmp_path)
    only_prompts = tmp_path / "copy" / "prompts"
    shutil.copytree(official_dir / "prompts", only_prompts)
    with pytest.raises(OfficialPromptsError, match="task_configs.py"):
        load_official_prompts(only_prompts)


FORGIVING = ('Format is right, the listing is close.\n{"strengths": ["layout"], "weaknesses": '
             '[], "scores": {"format": "4/5", "factuality": "3/5", "consistency": 4, '
             '"realism": 5, "quality": 3}}')


def _bench(tmp_path: Path) -> Path:
    bench_dir = tmp_path / "bench"
    bench_dir.mkdir()
    with (bench_dir / "mixed_test.jsonl").open("w", encoding="utf-8") as handle:
        for record in OFFICIAL_RECORDS[:2]:
            handle.write(json.dumps(record) + "\n")
    return bench_dir


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_official_judge_against_a_local_server(official_dir: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    bench_dir, out = _bench(tmp_path), tmp_path / "run"
    app, received = scripted_endpoint(lambda n, body: "no scores yet" if n == 1 else FORGIVING)
    with serve_in_background(app) as url:
        assert main(["bench", "run", "--bench-dir", str(bench_dir), "--predictor", "copy_last",
                     "--out", str(out), "--llm-judge", url, "--concurrency", "1",
                     "--judge-prompts", str(official_dir / "prompts")]) == 0
    samples, _ = read_official(bench_dir)
    terminal_prompt = (official_dir / "prompts" / "terminal" / "judge_system_prompt.txt"
                       ).read_text("utf-8")
    first = received[0]
    assert first["messages"][0]["content"] == terminal_prompt  # the official text arrived
    user = first["messages"][1]["content"]
    assert user.startswith("# Context (Historical Interactions):\n\n### Turn 1\n"
                           "**Current State:**\n/home/user$")
    assert "# Current Turn:\n\n### Turn 2\n**Action:**\ntouch a && ls" in user
    assert "**Ground Truth (Real Output):**\n```\na\n```" in user
    assert (first["temperature"], first["max_tokens"]) == (0.6, 32768)
    assert received[1]["messages"] == first["messages"]  # asked again, the same question
    assert len(received) == 1 + len(samples)
    llm = _rows(out / "llm_scores.csv")
    assert [(r["format"], r["factuality"], r["consistency"]) for r in llm] == [("4", "3", "4")] * 2
    assert all(r["judge"] == "llm_judge:scripted [official judge prompts]" for r in llm)
    assert float(llm[0]["score"]) == pytest.approx((3.8 - 1) / 4 * 100)
    assert "official judge prompts" in capsys.readouterr().out


def test_without_the_official_prompts_the_judge_says_so(tmp_path: Path) -> None:
    bench_dir, out = _bench(tmp_path), tmp_path / "run"
    good = ("<final_evaluation>" + json.dumps({"scores": dict.fromkeys(
        ("format", "factuality", "consistency", "realism", "quality"), 4)})
            + "</final_evaluation>")
    app, received = scripted_endpoint(lambda n, body: good)
    with serve_in_background(app) as url:
        assert main(["bench", "run", "--bench-dir", str(bench_dir), "--predictor", "copy_last",
                     "--out", str(out), "--llm-judge", url]) == 0
    assert {r["judge"] for r in _rows(out / "llm_scores.csv")} == {
        "llm_judge:scripted [worldtrace prompts: not the official judge]"}
    assert received[0]["temperature"] == 0.0


def test_a_bad_prompts_folder_is_a_one_line_error(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    bench_dir = _bench(tmp_path)
    assert main(["bench", "run", "--bench-dir", str(bench_dir), "--predictor", "copy_last",
                 "--out", str(tmp_path / "o"), "--llm-judge", "http://127.0.0.1:9/v1",
                 "--judge-prompts", str(tmp_path / "nowhere")]) == 2
    assert "judge_system_prompt.txt" in capsys.readouterr().err
    assert main(["bench", "run", "--bench-dir", str(bench_dir), "--predictor", "copy_last",
                 "--out", str(tmp_path / "o"), "--judge-prompts", str(tmp_path)]) == 2
    assert "--judge-prompts needs --llm-judge" in capsys.readouterr().err
