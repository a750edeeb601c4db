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


def test_a_domain_built_without_samples_replaces_its_earlier_file(tmp_path: Path) -> None:
    """A build that draws no sample of a domain it built (an empty bench pool, a count of 0)
    left that domain's earlier file, read back as this build's samples; it is removed, as a
    fresh build writes none."""
    write_official([_sample("mcp"), _sample("web")], tmp_path)
    assert write_official([_sample("web")], tmp_path, ["mcp", "web"]) == {"web": 1}
    assert sorted(path.name for path in tmp_path.iterdir()) == ["web_test.jsonl"]
    back, problems = read_official(tmp_path)
    assert problems == [] and back == [_sample("web")]


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


# Official-layout records as the released benchmark writes them, including the cases a
# re-rendering got wrong: a terminal first turn with a Current State section, a Historical
# Context section, a GUI Current State that is not the previous observation, a current_prompt
# that differs from prompt[turn_idx - 1], and turns after the predicted one.
M = "**Environment Observation:**\n"
OFFICIAL_RECORDS = [
    {"task": "terminal", "id": 17, "turn_idx": 2, "total_turns": 3,
     "system_str": "You are a Linux terminal.",
     "prompt": ["### Turn 1\n**Current State:**\n/home/user$ (empty dir)\n\n**Action:**\nls -a",
                "### Turn 2\n**Action:**\ntouch a && ls", "### Turn 3\n**Action:**\nrm a"],
     "response": [f"{M}.  ..", f"{M}a", f"{M}"],
     "current_prompt": "### Turn 2\n**Action:**\ntouch a && ls"},
    {"task": "agentworldbench/swe", "id": "swe-9", "turn_idx": 3, "total_turns": 3,
     "system_str": "You simulate a repository.",
     "prompt": ["### Turn 1\n**Historical Context:**\nEarlier: cloned the repo.\n\n"
                "**Action:**\ngit status", "### Turn 2\n**Action:**\ncat setup.py",
                "### Turn 3\n**Action:**\npytest -q"],
     "response": [f"{M}On branch main", f"{M}from setuptools import setup", f"{M}3 passed"],
     "current_prompt": "### Turn 3 (current)\n**Action:**\npytest -q"},
    {"task": "android", "id": 4, "turn_idx": 3, "total_turns": 5,
     "system_str": "You simulate an Android phone.",
     "prompt": ["### Turn 1\n**Task Instruction:**\nOpen Wi-Fi\n\n**Current State:**\n"
                "[0] Settings\n\n**Action:**\n{\"index\": 0}",
                "### Turn 2\n**Task Instruction:**\nOpen Wi-Fi\n\n**Current State:**\n"
                "[1] Network (a state the recorder saw, not the last observation)\n\n"
                "**Action:**\n{\"index\": 1}",
                "### Turn 3\n**Task Instruction:**\nOpen Wi-Fi\n\n**Current State:**\n"
                "[2] Wi-Fi off\n\n**Action:**\n{\"index\": 2}",
                "### Turn 4\n**Action:**\nwait"],
     "response": [f"{M}[1] Network\n[5] Display", f"{M}[2] Wi-Fi", f"{M}[2] Wi-Fi on",
                  f"{M}[2] Wi-Fi on"]},
    {"task": "mcp", "id": 0, "turn_idx": 1, "total_turns": 1, "system_str": "",
     "prompt": ["### Turn 1\n**Action:**\n{\"tool\": \"list\"}"],
     "response": [f"{M}[]"]},
]


def _released_construction(record: dict) -> list[dict[str, str]]:
    """The released eval.py `run_inference` construction, written out for each record."""
    k = record["turn_idx"] - 1
    messages = [{"role": "system", "content": record["system_str"]}] \
        if record["system_str"] else []
    for prompt, response in zip(record["prompt"][:k], record["response"][:k], strict=True):
        messages += [{"role": "user", "content": prompt},
                     {"role": "assistant", "content": response}]
    return [*messages, {"role": "user", "content": record["prompt"][k]}]


def test_messages_sent_are_the_records_strings(tmp_path: Path) -> None:
    with (tmp_path / "all_test.jsonl").open("w", encoding="utf-8") as handle:
        for record in OFFICIAL_RECORDS:
            handle.write(json.dumps(record) + "\n")
    samples, problems = read_official(tmp_path)
    assert problems == [] and len(samples) == len(OFFICIAL_RECORDS)
    for sample, record in zip(samples, OFFICIAL_RECORDS, strict=True):
        assert chat_messages(sample) == _released_construction(record), record["id"]
    terminal, swe, android, mcp = (chat_messages(s) for s in samples)
    assert "**Current State:**\n/home/user$" in terminal[1]["content"]
    assert "**Historical Context:**\nEarlier" in swe[1]["content"]
    assert swe[-1]["content"] == "### Turn 3\n**Action:**\npytest -q"  # prompt, not current_prompt
    assert "not the last observation" in android[3]["content"]
    assert mcp == [{"role": "user", "content": "### Turn 1\n**Action:**\n{\"tool\": \"list\"}"}]


def test_export_of_read_records_is_exact(tmp_path: Path) -> None:
    source, out = tmp_path / "in", tmp_path / "out"
    source.mkdir()
    lines = [json.dumps(record, ensure_ascii=False) for record in OFFICIAL_RECORDS]
    (source / "mixed_test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    samples, _ = read_official(source)
    write_official(samples, out)
    back = [json.loads(line) for path in sorted(out.glob("*_test.jsonl"))
            for line in path.read_text("utf-8").splitlines()]
    assert sorted(back, key=lambda r: str(r["id"])) == sorted(OFFICIAL_RECORDS,
                                                              key=lambda r: str(r["id"]))
    assert {type(r["id"]) for r in back} == {int, str}  # integer ids stay integers
    assert any(r["task"] == "agentworldbench/swe" for r in back)  # the prefix is kept
    assert len(next(r for r in back if r["id"] == 4)["prompt"]) == 4  # later turns kept


def test_a_record_without_the_prompt_it_sends_is_reported(tmp_path: Path) -> None:
    short = {**OFFICIAL_RECORDS[1], "prompt": OFFICIAL_RECORDS[1]["prompt"][:2]}
    (tmp_path / "swe_test.jsonl").write_text(json.dumps(short) + "\n", encoding="utf-8")
    samples, problems = read_official(tmp_path)
    assert samples == [] and "turn_idx 3 sends the one at position 3" in problems[0].reason
