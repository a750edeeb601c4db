"""Prediction parsing as the official evaluation does it."""

from __future__ import annotations

from bench.parsing import format_prediction, parse_prediction, strip_thinking


def test_well_formed_block_with_thinking() -> None:
    text = ("<think>the ls lists two files; maybe <predicted_observation>x"
            "</predicted_observation> not</think>\n<predicted_observation>\n"
            "README.md\nsrc\n</predicted_observation>")
    parsed = parse_prediction(text)
    assert not parsed.malformed
    assert parsed.observation == "README.md\nsrc"
    assert parsed.n_blocks == 1


def test_last_block_wins_and_marker_is_dropped() -> None:
    text = ("<predicted_observation>draft</predicted_observation> wait, the file exists.\n"
            "<predicted_observation>\n**Environment Observation:**\nhello\n"
            "</predicted_observation>")
    parsed = parse_prediction(text)
    assert (parsed.observation, parsed.malformed, parsed.n_blocks) == ("hello", False, 2)


def test_missing_tags_are_malformed_with_fallback() -> None:
    parsed = parse_prediction("<think>hm</think>total 0\n")
    assert parsed.malformed and parsed.observation is None
    assert parsed.fallback == "total 0"
    assert parsed.judged_text == "total 0"
    unclosed = parse_prediction("<predicted_observation>\nstarted but cut")
    assert unclosed.malformed and unclosed.fallback == "started but cut"
    assert parse_prediction("").malformed


def test_thinking_variants() -> None:
    # A template that opens <think> in the prompt leaves only the closing tag.
    assert strip_thinking("reasoning here</think>answer") == "answer"
    # Cut off while thinking: nothing was predicted.
    assert strip_thinking("<think>still going") == ""
    parsed = parse_prediction("<think>a</think><think>b</think><predicted_observation>"
                              "ok</predicted_observation>")
    assert parsed.observation == "ok"
    cut = parse_prediction("<predicted_observation>x</predicted_observation><think>more")
    assert cut.observation == "x"


def test_format_round_trip_is_exact() -> None:
    for observation in ["", "a\nb", "\nleading newline", "trailing\n", "  spaced  "]:
        parsed = parse_prediction(format_prediction(observation, thinking="why"))
        assert parsed.observation == observation and not parsed.malformed
