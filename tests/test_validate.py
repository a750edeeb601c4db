"""worldtrace validate: a tiny model trained on regular terminal trajectories finds the planted
anomalies (observations swapped in from another kind of trajectory) in its top 5 % by NLL and
flags them; the contrast with the NLL out of context is computed as it says; and the command
line writes the table."""

from __future__ import annotations

import random

import pyarrow.parquet as pq
import pytest
import torch

from tests.tiny_lm import TINY, tiny_model_dir, torch_one_thread  # noqa: F401  (fixtures)
from tests.training_fixtures import make_tokenizer
from training.model_config import new_model
from training.render import Episode, Step, weighted_segments
from training.validate import ValidateConfig, ValidateStats, domain_table, validate

WORDS = ["alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "theta"]
# Text unlike every regular observation: capitals, digits and brackets never seen in training.
PLANTED = ['{"Error": 4096, "Trace": [17, 23, 99], "ID": "XK-88Q"}',
           "Traceback (most recent call last):\n  File \"/Q.py\", line 42\nZeroDivisionError"]


def regular_episode(k: int, rng: random.Random) -> Episode:
    steps = []
    for turn in range(6):
        word = rng.choice(WORDS)
        steps.append(Step(turn, f"echo {word}", f"{word}\n", "text", "informative", 1.0))
    return Episode(f"t{k:03d}", "terminal", "print some words", tuple(steps))


def planted(episode: Episode, turn: int, text: str) -> Episode:
    steps = list(episode.steps)
    steps[turn] = Step(turn, steps[turn].action, text, "text", "informative", 1.0)
    return Episode(episode.trajectory_id, episode.domain, episode.task, tuple(steps))


@pytest.fixture(scope="module")
def trained(tmp_path_factory, torch_one_thread):  # noqa: F811
    """A tiny model trained (plain torch, 150 steps) on 40 regular terminal trajectories."""
    rng = random.Random(0)
    episodes = [regular_episode(k, rng) for k in range(40)]
    tokenizer = make_tokenizer(tmp_path_factory.mktemp("tok"))
    model = new_model(TINY, tokenizer)
    ids = []
    for episode in episodes:
        text = "".join(p for p, _ in weighted_segments(episode, "You are a terminal.", tokenizer))
        ids += tokenizer(text, add_special_tokens=False)["input_ids"]
    data = torch.tensor(ids)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    torch.manual_seed(0)
    model.train()
    for _ in range(150):
        starts = torch.randint(0, len(data) - 129, (8,))
        batch = torch.stack([data[s:s + 128] for s in starts])
        model(input_ids=batch, labels=batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    return model, tokenizer, episodes


def test_planted_observations_are_the_most_surprising(trained):
    model, tokenizer, episodes = trained
    test = list(episodes)
    test[3] = planted(test[3], 2, PLANTED[0])
    test[17] = planted(test[17], 4, PLANTED[1])
    stats = ValidateStats()
    rows = validate(model, tokenizer, test, ValidateConfig(max_tokens=4096,
                                                           observation_tokens=None), stats)
    assert len(rows) == stats.turns == 240 and stats.windows == 40
    assert stats.tokens_alone == 0 and all(r["contrast"] is None for r in rows)
    top = {(r["trajectory_id"], r["turn_index"]) for r in rows[:len(rows) // 20]}  # top 5 %
    assert {("t003", 2), ("t017", 4)} <= top
    flagged = {(r["trajectory_id"], r["turn_index"]) for r in rows if r["outlier"]}
    assert {("t003", 2), ("t017", 4)} <= flagged
    assert len(flagged) <= 6
    [terminal] = domain_table(rows)
    assert terminal["turns"] == 240 and terminal["outliers"] == len(flagged)


def test_the_contrast_is_the_nll_the_context_does_not_explain(trained):
    """score="contrast": each observation is scored a second time out of context (system
    prompt, empty user message, observation), the contrast is the difference, and turns are
    ranked by its z per domain. Out of context, one text costs the same wherever it stands in
    a trajectory; in context it does not."""
    model, tokenizer, episodes = trained
    test = list(episodes[:10])
    test[3] = planted(test[3], 2, PLANTED[0])
    stats = ValidateStats()
    rows = validate(model, tokenizer, test, ValidateConfig(max_tokens=4096, score="contrast"),
                    stats)
    assert len(rows) == 60 and stats.tokens_alone > 0
    assert stats.tokens > stats.tokens_alone
    assert all(r["score"] == "contrast" for r in rows)
    for r in rows:
        assert r["contrast"] == pytest.approx(r["nll"] - r["nll_alone"])
    assert [r["contrast"] for r in rows] == sorted((r["contrast"] for r in rows), reverse=True)
    by_text: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        text = test[int(r["trajectory_id"][1:])].steps[r["turn_index"]].observation
        by_text.setdefault((r["trajectory_id"], text), []).append(r)
    repeated = [group for group in by_text.values() if len(group) > 1]
    assert repeated, "the fixture repeats words within a trajectory"
    for group in repeated:
        assert len({round(r["nll_alone"], 5) for r in group}) == 1
    assert any(len({round(r["nll"], 5) for r in group}) > 1 for group in repeated)


def test_observation_tokens_caps_what_is_scored(trained):
    """Only each observation's first N tokens are scored, out of context too."""
    model, tokenizer, episodes = trained
    long = Episode("long", "terminal", "print some words", tuple(
        Step(k, f"cat words{k}.txt", " ".join(WORDS * 8) + "\n", "text", "informative", 1.0)
        for k in range(3)))
    whole = validate(model, tokenizer, [long], ValidateConfig(max_tokens=4096,
                                                             observation_tokens=None))
    head = validate(model, tokenizer, [long], ValidateConfig(max_tokens=4096,
                                                            observation_tokens=5))
    default = validate(model, tokenizer, [long], ValidateConfig(max_tokens=4096))
    assert all(r["observation_tokens"] > 32 for r in whole)
    assert [r["observation_tokens"] for r in head] == [5, 5, 5]
    assert [r["observation_tokens"] for r in default] == [32, 32, 32]
    assert {r["nll"] for r in head} != {r["nll"] for r in whole}
    with pytest.raises(ValueError, match="observation_tokens"):
        ValidateConfig(observation_tokens=0)


def test_windows_score_every_turn_once(trained):
    """A window far smaller than a trajectory: every turn still scored exactly once."""
    model, tokenizer, episodes = trained
    stats = ValidateStats()
    rows = validate(model, tokenizer, episodes[:5], ValidateConfig(max_tokens=600), stats)
    keys = [(r["trajectory_id"], r["turn_index"]) for r in rows]
    assert len(keys) == len(set(keys)) == 30
    assert stats.windows > 5


def test_the_command_scores_real_trace_files(tiny_model_dir, traces_dir, tmp_path,  # noqa: F811
                                             capsys):
    from worldtrace.cli import main

    out = tmp_path / "scores.parquet"
    status = main(["validate", str(traces_dir / "terminal" / "harbor"), "--model",
                   str(tiny_model_dir), "--out", str(out), "--quiet", "--threads", "1",
                   "--score", "contrast", "--observation-tokens", "32"])
    assert status == 0
    table = pq.read_table(out).to_pylist()
    assert all(r["score"] == "contrast" and r["observation_tokens"] <= 32 for r in table)
    assert all(r["contrast"] == pytest.approx(r["nll"] - r["nll_alone"]) for r in table)
    printed = capsys.readouterr().out
    assert table and all(r["domain"] == "terminal" for r in table)
    assert f"{len(table)} scored" in printed and "| terminal |" in printed
    assert [r["z"] for r in table] == sorted((r["z"] for r in table), reverse=True)


def test_the_command_scores_the_head_unless_told_every_token(tiny_model_dir, traces_dir,  # noqa: F811
                                                             tmp_path):
    """The command's default scores each observation's first 32 tokens; 0 scores them all."""
    from worldtrace.cli import main

    tokens = {}
    for flag in ([], ["--observation-tokens", "0"]):
        out = tmp_path / f"scores{len(flag)}.parquet"
        assert main(["validate", str(traces_dir / "terminal" / "harbor"), "--model",
                     str(tiny_model_dir), "--out", str(out), "--quiet", "--threads", "1",
                     *flag]) == 0
        tokens[len(flag)] = [r["observation_tokens"] for r in pq.read_table(out).to_pylist()]
    assert tokens[0] and max(tokens[0]) == 32
    assert len(tokens[2]) == len(tokens[0]) and max(tokens[2]) > 32


def test_a_missing_path_is_a_clear_error(tiny_model_dir, tmp_path, capsys):  # noqa: F811
    from worldtrace.cli import main

    assert main(["validate", str(tmp_path / "nope"), "--model", str(tiny_model_dir)]) == 2
    assert "no such file or folder" in capsys.readouterr().err
