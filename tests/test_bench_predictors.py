"""Predictor specs and the no-model baselines."""

from __future__ import annotations

import pytest

from bench.parsing import parse_prediction
from bench.predictors.base import Predictor, build_predictor, split_spec
from bench.sample import BenchSample


def _sample(domain: str = "terminal", history: tuple = (("ls", "a.txt"),)) -> BenchSample:
    return BenchSample(domain=domain, id="s1", history=history, current_action="cat a.txt",
                       reference="hello", system_prompt="sys", turn_idx=len(history) + 1,
                       total_turns=5, trajectory_id="t1", source="unit",
                       initial_state="[0] Button 'OK'" if domain == "android" else "")


def test_split_spec_keeps_url_colons() -> None:
    assert split_spec("copy_last") == ("copy_last", None)
    assert split_spec("openai_compatible:http://127.0.0.1:8000/v1") == (
        "openai_compatible", "http://127.0.0.1:8000/v1")


def test_unknown_predictor_lists_known_names() -> None:
    with pytest.raises(ValueError, match="copy_last"):
        build_predictor("oracle")


def test_baselines() -> None:
    copy_last, empty = build_predictor("copy_last"), build_predictor("empty")
    assert isinstance(copy_last, Predictor) and copy_last.name == "copy_last"
    first_gui = _sample("android", history=())
    outputs = copy_last.predict([_sample(), first_gui])
    assert [parse_prediction(o).observation for o in outputs] == ["a.txt", "[0] Button 'OK'"]
    assert [parse_prediction(o).observation for o in empty.predict([_sample()])] == [""]


def test_sample_invariants() -> None:
    with pytest.raises(ValueError, match="turn_idx"):
        BenchSample(domain="mcp", id="x", history=[("a", "b")], current_action="c",
                    reference="d", system_prompt="", turn_idx=1, total_turns=2,
                    trajectory_id="t", source="s")
    with pytest.raises(ValueError, match="domain"):
        _sample("desktop")
    # Lists (from JSON) and tuples give equal samples.
    assert _sample(history=[["ls", "a.txt"]]) == _sample()


def test_retrieval_answers_with_the_nearest_training_turn() -> None:
    from bench.predictors.retrieval import RetrievalPredictor

    train = {"terminal": [
        ("cat notes.txt", "a.txt", "buy milk\ncall Dana"),
        ("ls -la /var/log", "", "total 4\nsyslog"),
        ("python -m pytest -q tests/", "", "3 passed in 0.1s"),
    ]}
    predictor = RetrievalPredictor.from_turns(train)
    samples = [
        BenchSample(domain="terminal", id="q1", history=[("ls", "a.txt")],
                    current_action="cat notes.txt", reference="?", system_prompt="",
                    turn_idx=2, total_turns=2, trajectory_id="b1", source="unit"),
        BenchSample(domain="terminal", id="q2", history=[],
                    current_action="python -m pytest -q tests/", reference="?",
                    system_prompt="", turn_idx=1, total_turns=1, trajectory_id="b2",
                    source="unit"),
    ]
    outputs = predictor.predict(samples)
    assert [parse_prediction(o).observation for o in outputs] == [
        "buy milk\ncall Dana", "3 passed in 0.1s"]
    assert predictor.last_similarity[0] > 0.5
    with pytest.raises(ValueError, match="android"):
        predictor.predict([_sample("android", history=())])
