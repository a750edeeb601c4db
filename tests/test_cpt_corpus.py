"""Tokenizer and cpt_corpus: round trips, special tokens, chat template, token weights that
change exactly at turn boundaries, low-weight turns kept in the text, determinism; training
prompts laid out exactly as the bench sends them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest
from split_data import curated_data

from bench.build import BuildConfig, build_domain
from bench.official import chat_messages
from bench.predictors.messages import drop_oldest_turns, history_pairs
from training.cpt_corpus import CptCorpusConfig, build_cpt_corpus, episode_tokens, pack
from training.render import messages, read_episodes, weighted_segments
from training.reward import history_and_action
from training.sft_split import SftSplitConfig, build_sft_split
from training.tables import SFT_SPLIT
from training.tokenizer import SPECIAL_TOKENS, TokenizerConfig, load_tokenizer, train_tokenizer

DOMAINS = ["terminal", "web"]
SMALL = TokenizerConfig(vocab_size=1024)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    data = curated_data(tmp_path_factory.mktemp("cpt"), DOMAINS, per_domain=10)
    train_tokenizer(data, data / "tokenizer", DOMAINS, SMALL)
    return data


@pytest.fixture(scope="module")
def tok(data):
    return load_tokenizer(data / "tokenizer")


def test_tokenizer_round_trips_and_has_the_special_tokens(tok):
    for text in ("ls -la /tmp\n\ttotal 0", "héllo wörld 😀 {\"a\": [1, 2]}", "\x00\x1b[0m"):
        assert tok.decode(tok(text)["input_ids"]) == text
    for token in SPECIAL_TOKENS:
        ids = tok(token, add_special_tokens=False)["input_ids"]
        assert len(ids) == 1 and tok.convert_ids_to_tokens(ids) == [token]
    assert tok.pad_token == "<pad>" and tok.eos_token == "<eos>" and len(tok) == 1024


def test_chat_template_writes_the_render_layout(data, tok):
    episode = next(read_episodes(data, "terminal"))
    _, system = episode.system()
    chat = tok.apply_chat_template(messages(system, episode, 0, None), tokenize=False)
    pieces = "".join(text for text, _ in weighted_segments(episode, system, tok))
    assert pieces == chat + "<eos>"


def test_weights_change_exactly_at_turn_boundaries(data, tok):
    checked = 0
    for episode in read_episodes(data, "web"):
        _, system = episode.system()
        pieces = weighted_segments(episode, system, tok)
        ids, weights = episode_tokens(tok, episode, CptCorpusConfig())
        # decode token by token, walking the pieces: every token lies inside one piece
        k, used = 0, 0
        for token_id, weight in zip(ids, weights, strict=True):
            text = tok.decode([token_id])
            while used == len(pieces[k][0]):
                k, used = k + 1, 0
            assert pieces[k][0][used:used + len(text)] == text or "\ufffd" in text
            assert weight == np.float32(pieces[k][1])
            used += len(text)
            checked += 1
        assert k == len(pieces) - 1
    assert checked > 1000


def test_low_weight_turns_stay_in_the_text(data, tok):
    for episode in read_episodes(data, "terminal"):
        low = [s for s in episode.steps if s.loss_weight < 1.0 and s.observation.strip()]
        if low:
            ids, weights = episode_tokens(tok, episode, CptCorpusConfig())
            assert low[0].observation in tok.decode(ids)
            assert set(np.unique(weights)) >= {np.float32(low[0].loss_weight), 1.0}
            return
    pytest.fail("no low-weight turn in the generated terminal data")


def test_packing_keeps_every_token_in_order():
    episodes = [("a", [1, 2, 3, 4, 5], np.ones(5, np.float32)),
                ("b", [6, 7], np.zeros(2, np.float32)),
                ("c", [8, 9, 10, 11], np.full(4, 0.5, np.float32))]
    rows = list(pack(iter(episodes), 4))
    assert [r[0] for r in rows] == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11]]
    assert [r[2] for r in rows] == [["a"], ["a", "b", "c"], ["c"]]
    assert rows[1][1] == [1.0, 0.0, 0.0, 0.5]


def test_corpus_is_deterministic_and_follows_the_contract(data, tok, tmp_path):
    config = CptCorpusConfig(seq_len=128, max_tokens_per_domain=20_000)
    stats = build_cpt_corpus(data, tok, DOMAINS, config)
    path = data / "cpt_corpus" / "domain=web" / "part-0.parquet"
    first = path.read_bytes()
    build_cpt_corpus(data, tok, DOMAINS, config)
    assert path.read_bytes() == first
    table = pq.read_table(path)
    assert str(table.schema.field("input_ids").type) == "list<element: int32>"
    assert str(table.schema.field("loss_weights").type) == "list<element: float>"
    rows = table.to_pylist()
    assert all(len(r["input_ids"]) == len(r["loss_weights"]) == 128 for r in rows[:-1])
    assert sum(len(r["input_ids"]) for r in rows) == stats.tokens["web"] >= 20_000
    train = {r["trajectory_id"] for r in pq.read_table(
        data / "trajectory_split" / "domain=web" / "part-0.parquet").to_pylist()
        if r["pool"] == "train"}
    assert {t for r in rows for t in r["trajectory_ids"]} <= train


def test_tokenizer_training_is_deterministic(data, tmp_path):
    train_tokenizer(data, tmp_path / "again", DOMAINS, SMALL)
    assert ((tmp_path / "again" / "tokenizer.json").read_bytes()
            == (data / "tokenizer" / "tokenizer.json").read_bytes())


def test_sft_prompts_are_the_bench_rendering_of_the_same_turn(data, tok):
    """An SFT prompt is the bench's chat_messages for the same turn (its system prompt aside),
    with the oldest turns dropped to fit: train-time and bench-time prompts look the same."""
    build_sft_split(data, tok, DOMAINS, SftSplitConfig(max_prompt_tokens=1500))
    gui_prompts = 0
    for domain in DOMAINS:
        train_ids = [e.trajectory_id for e in read_episodes(data, domain)]
        bench, _ = build_domain(data, domain, BuildConfig(counts={domain: 100_000}), train_ids)
        by_turn = {(s.trajectory_id, s.turn_idx - 1): s for s in bench}
        rows = pq.read_table(SFT_SPLIT.path(data, domain)).to_pylist()
        assert rows
        for row in rows:
            prompt = row["messages"][:-1]
            sample = by_turn[row["trajectory_id"], row["turn_index"]]
            expected = chat_messages(replace(sample, system_prompt=prompt[0]["content"]))
            assert prompt == drop_oldest_turns(expected,
                                               history_pairs(expected) - history_pairs(prompt))
            # the RL reward reads the raw turns back, as the bench's judges see them
            kept = history_pairs(prompt)
            assert history_and_action(prompt) == (
                list(sample.history[len(sample.history) - kept:]), sample.current_action)
            gui_prompts += "**Current State:**" in prompt[-1]["content"]
    assert gui_prompts > 0  # the web prompts carry the task and the screen, as the bench's do
