"""The official JSONL layout: export, import, round trip, malformed records reported."""

from __future__ import annotations

import json
from pathlib import Path

from bench.official import chat_messages, read_official, to_record, write_official
from bench.sample import BenchSample
from sources.schema import DOMAINS


def _sample(domain: str, turn_idx: int = 3) -> BenchSample:
    history = [(f"action {k} of {domain}", f"observation {k}\n  indented line\n") for k in
               range(1, turn_idx)]
    gui = domain in ("android", "web", "os")
    return BenchSample(
        domain=domain, id=f"{domain}-1", history=history, current_action='click [12]\nsecond',
        reference="**bold** result\n[0] Button 'OK'", system_prompt=f"You simulate {domain}.",
        turn_idx=turn_idx, total_turns=turn_idx + 2, trajectory_id=f"t-{domain}",
        source=f"{domain}-unit", task="Open the settings." if gui else "",
        initial_state="[0] TextView 'Home'" if gui else "", category="informative")


def test_record_layout() -> None:
    record = to_record(_sample("android"))
    assert record["task"] == "android" and record["turn_idx"] == 3
    assert len(record["prompt"]) == len(record["response"]) == 3
    assert record["current_prompt"] == record["prompt"][-1]
    assert record["prompt"][0].startswith("### Turn 1\n**Task Instruction:**\nOpen the settings.")
    assert "**Current State:**\n[0] TextView 'Home'\n\n**Action:**\naction 1" in record["prompt"][0]
    # Turn 2's current state is turn 1's observation.
    assert "**Current State:**\nobservation 1\n  indented line\n\n\n**Action:**" in (
        record["prompt"][1])
    assert record["response"][-1] == (
        "**Environment Observation:**\n**bold** result\n[0] Button 'OK'")
    text = to_record(_sample("terminal"))["prompt"][0]
    assert text == "### Turn 1\n**Action:**\naction 1 of terminal"


def test_chat_messages_follow_the_official_order() -> None:
    sample = _sample("mcp")
    messages = chat_messages(sample)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant",
                                             "user"]
    record = to_record(sample)
    assert [m["content"] for m in messages[1::2]] == record["prompt"]
    assert [m["content"] for m in messages[2::2]] == record["response"][:-1]


def test_round_trip_every_domain(tmp_path: Path) -> None:
    samples = [_sample(domain, turn_idx) for domain in DOMAINS for turn_idx in (1, 4)]
    samples = [BenchSample(**{**s.__dict__, "id": f"{s.id}-{s.turn_idx}"}) for s in samples]
    assert write_official(samples, tmp_path) == {d: 2 for d in DOMAINS}
    back, problems = read_official(tmp_path)
    assert problems == []
    assert sorted(back, key=lambda s: s.id) == sorted(samples, key=lambda s: s.id)


def test_round_trip_of_built_samples(bench_corpus: Path, tmp_path: Path) -> None:
    from bench_corpus import pools

    from bench.build import BuildConfig, build_domain

    samples = []
    for domain in DOMAINS:
        built, _ = build_domain(bench_corpus, domain, BuildConfig(counts={domain: 6}),
                                trajectory_ids=pools(bench_corpus, domain)[0])
        samples += built
    write_official(samples, tmp_path)
    back, problems = read_official(tmp_path)
    assert problems == []
    assert sorted(back, key=lambda s: s.id) == sorted(samples, key=lambda s: s.id)


def test_malformed_records_are_reported_with_file_and_line(tmp_path: Path) -> None:
    write_official([_sample(domain) for domain in DOMAINS], tmp_path)
    path = tmp_path / "web_test.jsonl"
    good = path.read_text("utf-8")
    bad_turn = json.dumps({**json.loads(good), "turn_idx": 9})
    path.write_text(good + '{"task": "web", "id": 3, "prompt": ["### Tu\n' + bad_turn + "\n",
                    "utf-8")
    samples, problems = read_official(tmp_path)
    assert len(samples) == 7
    assert [(Path(p.path).name, p.line) for p in problems] == [("web_test.jsonl", 2),
                                                               ("web_test.jsonl", 3)]
    assert "invalid JSON" in problems[0].reason
    assert "turn_idx 9" in problems[1].reason
    assert str(problems[0]).startswith(f"{path}:2:")
