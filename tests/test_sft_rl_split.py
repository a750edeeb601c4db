"""sft_split, rl_split, rl_split_all_turns: one turn per trajectory, the token cap, the chat
layout, exports that datasets and TRL read, determinism, a teacher over real HTTP."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyarrow.parquet as pq
import pytest
from datasets import load_from_disk
from split_data import curated_data
from trl.data_utils import is_conversational

from training.render import read_episodes
from training.rl_split import RlConfig, build_rl_split
from training.sft_split import SftSplitConfig, build_sft_split
from training.teacher import OpenAITeacher
from training.tokenizer import TokenizerConfig, load_tokenizer, train_tokenizer

DOMAINS = ["terminal", "mcp"]
TARGET = re.compile(r"^<think>(.+)</think><predicted_observation>(.*)</predicted_observation>$",
                    re.S)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    data = curated_data(tmp_path_factory.mktemp("sftrl"), DOMAINS, per_domain=10)
    train_tokenizer(data, data / "tokenizer", DOMAINS, TokenizerConfig(vocab_size=1024))
    return data


@pytest.fixture(scope="module")
def tok(data):
    return load_tokenizer(data / "tokenizer")


def rows(data, table, domain):
    return pq.read_table(data / table / f"domain={domain}" / "part-0.parquet").to_pylist()


def episodes(data, domain):
    return {e.trajectory_id: e for e in read_episodes(data, domain)}


def test_rl_split_has_one_judgeable_turn_per_trajectory_under_the_cap(data, tok):
    stats = build_rl_split(data, tok, DOMAINS, RlConfig(max_prompt_tokens=400))
    for domain in DOMAINS:
        eps, samples = episodes(data, domain), rows(data, "rl_split", domain)
        with_targets = {t for t, e in eps.items() if any(s.judgeable for s in e.steps)}
        assert [s["trajectory_id"] for s in samples] == sorted(with_targets)  # one each
        for sample in samples:
            episode = eps[sample["trajectory_id"]]
            step = next(s for s in episode.steps if s.turn_index == sample["turn_index"])
            assert step.judgeable and sample["reference_observation"] == step.observation
            prompt = sample["prompt"]
            assert prompt[0]["role"] == "system" and episode.task.strip() in prompt[0]["content"]
            position = episode.steps.index(step)
            assert prompt[-1] == {"role": "user", "content": episode.rendered[position][0]}
            assert prompt[-1]["content"].endswith(f"**Action:**\n{step.action}")
            # the history is the turns right before the target, the oldest ones dropped
            kept = (len(prompt) - 2) // 2
            history = episode.rendered[position - kept:position]
            assert [m["content"] for m in prompt[1:-1]] == [x for pair in history for x in pair]
            assert all(m["content"].startswith("**Environment Observation:**\n")
                       for m in prompt[2:-1:2])
            ids = tok.apply_chat_template(prompt, add_generation_prompt=True)["input_ids"]
            assert sample["prompt_tokens"] == len(ids) <= 400
            assert json.loads(sample["verifier"])["domain"] == domain
    assert sum(stats.dropped_turns.values()) > 0  # the cap did cut histories


def test_rl_split_all_turns_has_every_judgeable_turn(data, tok):
    build_rl_split(data, tok, DOMAINS, RlConfig(all_turns=True))
    for domain in DOMAINS:
        eps = episodes(data, domain)
        expected = sorted((t, s.turn_index) for t, e in eps.items() for s in e.steps
                          if s.judgeable)
        got = [(r["trajectory_id"], r["turn_index"]) for r in rows(data, "rl_split_all_turns",
                                                                   domain)]
        assert got == expected


def test_sft_split_messages_and_targets(data, tok):
    stats = build_sft_split(data, tok, DOMAINS, SftSplitConfig(max_prompt_tokens=600,
                                                          max_target_observation_tokens=None,
                                                          rationale="full"))
    variants = set()
    for domain in DOMAINS:
        eps = episodes(data, domain)
        for sample in rows(data, "sft_split", domain):
            messages = sample["messages"]
            roles = [m["role"] for m in messages]
            assert roles[0] == "system" and roles[-2:] == ["user", "assistant"]
            assert roles[1:-2] == ["user", "assistant"] * ((len(roles) - 3) // 2)
            step = next(s for s in eps[sample["trajectory_id"]].steps
                        if s.turn_index == sample["turn_index"])
            match = TARGET.match(messages[-1]["content"])
            assert match and match.group(2) == step.observation and step.judgeable
            assert sample["reasoning_source"] == "deterministic"
            variants.add(sample["prompt_variant"])
    assert len(variants) >= 5 and sum(stats.samples.values()) > 20
    assert sum(stats.targets_cut.values()) == 0


def test_sft_targets_cut_to_observation_head_at_a_line_end(data, tok):
    stats = build_sft_split(data, tok, DOMAINS, SftSplitConfig(max_target_observation_tokens=16))
    cut = 0
    for domain in DOMAINS:
        eps = episodes(data, domain)
        for sample in rows(data, "sft_split", domain):
            step = next(s for s in eps[sample["trajectory_id"]].steps
                        if s.turn_index == sample["turn_index"])
            reasoning, head = TARGET.match(sample["messages"][-1]["content"]).groups()
            assert step.observation.startswith(head) and head.strip()
            assert len(tok(head, add_special_tokens=False)["input_ids"]) <= 16
            if head != step.observation:
                cut += 1
                rest = step.observation[len(head):]
                first_line = step.observation.split("\n", 1)[0]
                # cut at a line end, unless the first line alone is over the budget
                assert rest.startswith("\n") or len(head) <= len(first_line)
            assert len(tok(reasoning, add_special_tokens=False)["input_ids"]) < 40
    assert cut == sum(stats.targets_cut.values()) > 0


def test_rl_split_as_sft_samples_keep_sft_split_budgets(data, tok):
    from training.prompts import prompt_tokens
    from training.sft import read_rl_split_as_sft

    build_rl_split(data, tok, DOMAINS, RlConfig(all_turns=True))
    paths = sorted((data / "rl_split_all_turns").glob("domain=*/part-0.parquet"))
    budget = SftSplitConfig(max_prompt_tokens=300, max_target_observation_tokens=12)
    samples = read_rl_split_as_sft(paths, tok, budget)
    references = {r["reference_observation"] for p in paths for r in pq.read_table(p).to_pylist()}
    assert len(samples) > 20
    for row in samples:
        *prompt, target = row["messages"]
        assert prompt_tokens(prompt, tok) <= 300 and prompt[-1]["role"] == "user"
        head = target["content"].removeprefix("<predicted_observation>").removesuffix(
            "</predicted_observation>")
        assert len(tok(head, add_special_tokens=False)["input_ids"]) <= 12
        assert any(reference.startswith(head) for reference in references)


def test_validation_holds_out_whole_trajectories(data, tok):
    config = SftSplitConfig(validation_share=0.5)
    stats = build_sft_split(data, tok, DOMAINS, config)
    sides: dict[str, set[str]] = {}
    for domain in DOMAINS:
        samples = rows(data, "sft_split", domain)
        for sample in samples:
            sides.setdefault(sample["trajectory_id"], set()).add(sample["split"])
        assert stats.validation[domain] == sum(s["split"] == "validation" for s in samples)
    assert {r["domain"]: r["validation_samples"] for r in stats.table()} == {
        d: stats.validation[d] for d in DOMAINS}
    assert all(len(split) == 1 for split in sides.values())  # never on both sides
    assert all(split == {config.split_of(t)} for t, split in sides.items())
    held_out = sum(split == {"validation"} for split in sides.values()) / len(sides)
    assert len(sides) >= 10 and 0.25 <= held_out <= 0.75, (held_out, len(sides))
    # the default share on many ids, and the share in the config string (it keys metadata)
    share = sum(SftSplitConfig().split_of(f"t{i}") == "validation" for i in range(20000)) / 20000
    assert abs(share - 0.1) < 0.01 and "_val0.5_" in str(config)
    build_sft_split(data, tok, DOMAINS, SftSplitConfig(validation_share=0.0))
    assert load_from_disk(str(data / "sft_split" / "hf"))["validation"].num_rows == 0
    with pytest.raises(ValueError, match="validation_share"):
        SftSplitConfig(validation_share=1.0)


def test_exports_load_with_datasets_and_read_as_conversational(data, tok):
    build_sft_split(data, tok, DOMAINS, SftSplitConfig(validation_share=0.3))
    assert "validation_samples" not in build_rl_split(data, tok, DOMAINS).table()[0]
    sft = load_from_disk(str(data / "sft_split" / "hf"))
    rl = load_from_disk(str(data / "rl_split" / "hf"))
    parquet = [r for d in DOMAINS for r in rows(data, "sft_split", d)]
    assert set(sft) == {"train", "validation"} and set(rl) == {"train"}
    for name in ("train", "validation"):
        wanted = [r for r in parquet if r["split"] == name]
        assert sft[name].num_rows == len(wanted) > 0
        assert sft[name]["trajectory_id"] == [r["trajectory_id"] for r in wanted]
        assert "split" not in sft[name].column_names  # the DatasetDict key says it
        assert is_conversational(sft[name][0])
    assert not set(sft["train"]["trajectory_id"]) & set(sft["validation"]["trajectory_id"])
    assert is_conversational(rl["train"][0])
    assert set(rl["train"].column_names) == {"prompt", "reference_observation", "domain",
                                             "trajectory_id", "turn_index", "verifier",
                                             "prompt_tokens"}


def test_splits_are_byte_identical_when_rebuilt(data, tok):
    for build, table in ((lambda: build_sft_split(data, tok, DOMAINS), "sft_split"),
                         (lambda: build_rl_split(data, tok, DOMAINS), "rl_split")):
        build()
        first = (data / table / "domain=mcp" / "part-0.parquet").read_bytes()
        build()
        assert (data / table / "domain=mcp" / "part-0.parquet").read_bytes() == first


class FakeTeacher(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint: three candidates per query, one malformed, one that
    reasons and predicts (the real observation where it `knows` the action, a wrong one
    otherwise), one that reasons in a word and predicts nothing."""

    knows: dict[str, str] = {}  # action -> real observation (set by the test)

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        action = body["messages"][-1]["content"].rsplit("\n\nAction:\n", 1)[1]
        predicted = self.knows.get(action, "All good, nothing happened.")
        good = (f"<think>The agent sends {action[:80]}; given the state shown before, the "
                "environment applies it and answers in its usual format.</think>"
                f"<predicted_observation>{predicted}</predicted_observation>")
        choices = ["no tags at all", good,
                   "<think>ok</think><predicted_observation></predicted_observation>"]
        payload = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": i, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": c}}
                               for i, c in enumerate(choices[: body.get("n", 1)])]}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_teacher(data):
    """The fake endpoint's URL; it knows the observation of every non-error turn."""
    FakeTeacher.knows = {s.action[-2000:]: s.observation for d in DOMAINS
                         for e in episodes(data, d).values() for s in e.steps
                         if s.category != "error"}
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeTeacher)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()


def _sft_with(data, tok, teacher):
    stats = build_sft_split(data, tok, DOMAINS, SftSplitConfig(max_trajectories_per_domain=5),
                            teacher)
    kept = [r for d in DOMAINS for r in rows(data, "sft_split", d)]
    assert teacher.stats.candidates == 3 * teacher.stats.queries
    assert teacher.stats.malformed == teacher.stats.queries
    assert teacher.stats.kept == len(kept)
    assert sum(n for (_, r), n in stats.skipped.items() if r == "teacher_dropped") == (
        teacher.stats.queries - teacher.stats.kept)
    for sample in kept:
        assert sample["reasoning_source"] == "teacher:fake-teacher"
    return kept


def test_teacher_keeps_rubric_judged_best_candidates_and_drops_weak_queries(data, tok,
                                                                            fake_teacher):
    """By default the bench's rubric judges each candidate's prediction against the real
    observation: a query is kept with the reasoning that led to the real observation, and
    dropped when every prediction is wrong."""
    teacher = OpenAITeacher(fake_teacher, "fake-teacher")
    kept = _sft_with(data, tok, teacher)
    assert 0 < teacher.stats.kept < teacher.stats.queries
    assert min(teacher.stats.scores) >= teacher.min_score
    steps = {(e.trajectory_id, s.turn_index): s for d in DOMAINS
             for e in episodes(data, d).values() for s in e.steps}
    for sample in kept:
        reasoning = TARGET.match(sample["messages"][-1]["content"]).group(1)
        assert reasoning.startswith("The agent sends ")
        step = steps[sample["trajectory_id"], sample["turn_index"]]
        assert step.action[-2000:] in FakeTeacher.knows


def test_teacher_takes_any_judge_callable(data, tok, fake_teacher):
    def judge(candidate, query):  # a judge that rejects every error turn
        return 0.0 if query.step.category == "error" else 1.0

    teacher = OpenAITeacher(fake_teacher, "fake-teacher", judge=judge)
    _sft_with(data, tok, teacher)
    assert 0 < teacher.stats.kept < teacher.stats.queries
    assert teacher.stats.scores == [1.0] * teacher.stats.kept
