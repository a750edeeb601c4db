"""worldtrace validate: a tiny model trained on regular terminal trajectories finds the planted
anomalies (observations swapped in from another kind of trajectory) in its top 5 %, flags
them, and the command line writes the table."""

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
    rows = validate(model, tokenizer, test, ValidateConfig(max_tokens=4096), stats)
    assert len(rows) == stats.turns == 240 and stats.windows == 40
    top = {(r["trajectory_id"], r["turn_index"]) for r in rows[:len(rows) // 20]}  # top 5 %
    assert {("t003", 2), ("t017", 4)} <= top
    flagged = {(r["trajectory_id"], r["turn_index"]) for r in rows if r["outlier"]}
    assert {("t003", 2), ("t017", 4)} <= flagged
    assert len(flagged) <= 6
    [terminal] = domain_table(rows)
    assert terminal["turns"] == 240 and terminal["outliers"] == len(flagged)


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
                   str(tiny_model_dir), "--out", str(out), "--quiet", "--threads", "1"])
    assert status == 0
    table = pq.read_table(out).to_pylist()
    printed = capsys.readouterr().out
    assert table and all(r["domain"] == "terminal" for r in table)
    assert f"{len(table)} scored" in printed and "| terminal |" in printed
    assert [r["z"] for r in table] == sorted((r["z"] for r in table), reverse=True)


def test_a_missing_path_is_a_clear_error(tiny_model_dir, tmp_path, capsys):  # noqa: F811
    from worldtrace.cli import main

    assert main(["validate", str(tmp_path / "nope"), "--model", str(tiny_model_dir)]) == 2
    assert "no such file or folder" in capsys.readouterr().err
