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
