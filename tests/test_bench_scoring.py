"""The official score arithmetic: normalisation, domain means, macro vs micro, published rows."""

from __future__ import annotations

import pytest

from bench.scoring import (
    AXES,
    PUBLISHED,
    AxisScores,
    aggregate,
    normalize,
    published_overall,
    sample_score,
)


def test_normalisation_maps_one_to_zero_and_five_to_hundred() -> None:
    assert normalize(1) == 0.0
    assert normalize(5) == 100.0
    assert normalize(3) == 50.0
    scores = AxisScores(format=5, factuality=3, consistency=4, realism=2, quality=1)
    assert scores.mean == 3.0
    assert scores.score == 50.0
    assert sample_score(scores) == sample_score(scores.as_dict()) == 50.0


def test_axis_scores_reject_out_of_range() -> None:
    with pytest.raises(ValueError, match="factuality"):
        AxisScores(format=5, factuality=0, consistency=4, realism=2, quality=1)
    with pytest.raises(ValueError, match="quality"):
        AxisScores(format=5, factuality=1, consistency=4, realism=2, quality=True)


def test_macro_and_micro_differ_by_domain_weighting() -> None:
    scored = [("mcp", 100.0), ("mcp", 100.0), ("mcp", 100.0), ("search", 0.0)]
    overall = aggregate(scored)
    assert overall.domains == {"mcp": 100.0, "search": 0.0}
    assert overall.counts == {"mcp": 3, "search": 1}
    assert overall.macro == 50.0
    assert overall.micro == 75.0
    assert not overall.complete
    row = overall.row()
    assert row["MCP"] == 100.0 and row["OS"] is None and row["Overall"] == 50.0


@pytest.mark.parametrize("name", ["GPT-5.4", "Qwen-AgentWorld-35B-A3B", "Qwen3.5-35B-A3B"])
def test_published_overall_is_the_macro_mean(name: str) -> None:
    recomputed, published = published_overall(name)
    assert recomputed == pytest.approx(published, abs=0.01)


def test_published_397b_row_is_a_known_source_rounding() -> None:
    recomputed, published = published_overall("Qwen-AgentWorld-397B-A17B")
    assert round(recomputed, 2) == 58.76 and published == 58.71


def test_published_rows_reproduced_through_aggregate() -> None:
    # Feed each published domain score as one sample: aggregate must give the same macro.
    domains = ("mcp", "search", "terminal", "swe", "android", "web", "os")
    for name, row in PUBLISHED.items():
        overall = aggregate(zip(domains, row[:7], strict=True))
        assert overall.complete
        assert overall.macro == pytest.approx(published_overall(name)[0], abs=1e-9)
    assert len(AXES) == 5
