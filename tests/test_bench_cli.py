"""`worldtrace bench` on files in the official layout: every domain scored, bad lines reported."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from bench.official import write_official
from bench.sample import BenchSample
from sources.schema import DOMAINS
from worldtrace.cli import main


def _samples() -> list[BenchSample]:
    samples = []
    for domain in DOMAINS:
        for k in range(3):
            history = [(f"ls dir{j}", f"file{j}.txt\nnotes{j}.md") for j in range(k + 1)]
            samples.append(BenchSample(
                domain=domain, id=f"{domain}-{k}", history=history, current_action=f"cat f{k}",
                reference=f"line one of f{k}\nline two", system_prompt="You simulate.",
                turn_idx=k + 2, total_turns=k + 4, trajectory_id=f"t{k}", source="unit"))
    return samples


def test_run_on_official_layout_scores_every_domain(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    bench_dir, out = tmp_path / "bench", tmp_path / "run"
    write_official(_samples(), bench_dir)
    with (bench_dir / "swe_test.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"task": "swe", "id": 9, "prompt": [\n')
    status = main(["bench", "run", "--bench-dir", str(bench_dir), "--predictor", "copy_last",
                   "--predictor", "empty", "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 0
    assert f"{bench_dir / 'swe_test.jsonl'}:4: invalid JSON" in captured.err
    assert "21 samples" in captured.err
    with (out / "leaderboard.csv").open(encoding="utf-8") as handle:
        rows = {row["predictor"]: row for row in csv.DictReader(handle)}
    for name in ("copy_last", "empty"):
        assert rows[name]["kind"] == "ours"
        for column in ("MCP", "Search", "Terminal", "SWE", "Android", "Web", "OS", "overall_macro",
                       "overall_pooled"):
            assert 0.0 <= float(rows[name][column]) <= 100.0
    assert rows["GPT-5.4"]["kind"] == "published"
    assert (out / "leaderboard.png").read_bytes()[:4] == b"\x89PNG"
    assert "| ours | copy_last |" in captured.out
    predictions = (out / "predictions.jsonl").read_text("utf-8").splitlines()
    assert len(predictions) == 42 and {"gen", "predictor", "prompt"} <= set(
        json.loads(predictions[0]))

    # The predictions file scores again on its own (as eval.py's would).
    assert main(["bench", "score", "--predictions", str(out / "predictions.jsonl")]) == 0
    assert "| ours | copy_last |" in capsys.readouterr().out


def test_user_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_official(_samples(), tmp_path)
    assert main(["bench", "run", "--bench-dir", str(tmp_path), "--predictor", "oracle",
                 "--out", str(tmp_path / "o")]) == 2
    assert "unknown predictor 'oracle'" in capsys.readouterr().err
    assert main(["bench", "run", "--bench-dir", str(tmp_path / "missing"), "--predictor",
                 "empty", "--out", str(tmp_path / "o")]) == 2
    assert "no *_test.jsonl files" in capsys.readouterr().err
    assert main(["bench", "run", "--bench-dir", str(tmp_path), "--predictor", "retrieval",
                 "--out", str(tmp_path / "o")]) == 2
    assert "retrieval needs the data directory" in capsys.readouterr().err


def test_predictions_record_what_was_sent_and_seen_and_empty_output_fails(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from bench.official import chat_messages
    from bench.result_cache import content_hash

    bench_dir, out = tmp_path / "bench", tmp_path / "run"
    samples = _samples()
    write_official(samples, bench_dir)
    assert main(["bench", "run", "--bench-dir", str(bench_dir), "--predictor", "copy_last",
                 "--out", str(out)]) == 0
    records = [json.loads(line) for line in
               (out / "predictions.jsonl").read_text("utf-8").splitlines()]
    by_id = {s.id: s for s in samples}
    for record in records:
        sample = by_id[record["id"]]
        assert record["messages_sha256"] == content_hash(chat_messages(sample))
        assert record["extracted_observation"] == sample.last_observation.strip()
        assert (record["failed"], record["failure_reason"], record["messages_fitted"]) == (
            False, "", False)
    # eval.py's own file with two empty generations: those samples fail and leave the averages.
    for record in records[:2]:
        record["gen"] = ""
    (tmp_path / "theirs.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    capsys.readouterr()
    assert main(["bench", "score", "--predictions", str(tmp_path / "theirs.jsonl"),
                 "--out", str(tmp_path / "scored")]) == 0
    with (tmp_path / "scored" / "leaderboard.csv").open(encoding="utf-8") as handle:
        row = next(csv.DictReader(handle))
    assert (row["samples"], row["failed"]) == ("21", "2")
    assert row["failed_by_domain"] == "android:2"
    assert row["overall_macro"] and row["overall_pooled"]
