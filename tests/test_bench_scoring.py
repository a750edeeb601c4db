"""The score arithmetic: normalisation, failed samples, both overalls, the published rows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

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
from sources.schema import DOMAINS
from tests.released_code import released_eval


def test_normalisation_maps_one_to_zero_and_five_to_hundred() -> None:
    assert normalize(1) == 0.0
    assert normalize(5) == 100.0
    assert normalize(3) == 50.0
    scores = AxisScores(format=5, factuality=3, consistency=4, realism=2, quality=1)
    assert scores.mean == 3.0
    assert scores.score == 50.0
    assert sample_score(scores) == sample_score(scores.as_dict()) == 50.0


def test_a_missing_axis_is_left_out_of_the_mean() -> None:
    # The released judge parser gives a missing axis 0 and averages the others.
    scores = AxisScores(format=0, factuality=4, consistency=4, realism=2, quality=2)
    assert scores.mean == 3.0 and scores.score == 50.0


def test_axis_scores_reject_out_of_range() -> None:
    with pytest.raises(ValueError, match="factuality"):
        AxisScores(format=5, factuality=6, consistency=4, realism=2, quality=1)
    with pytest.raises(ValueError, match="quality"):
        AxisScores(format=5, factuality=1, consistency=4, realism=2, quality=True)
    with pytest.raises(ValueError, match="no axis"):
        AxisScores(format=0, factuality=0, consistency=0, realism=0, quality=0)


def test_failed_samples_leave_every_average_and_are_counted() -> None:
    scored = [("mcp", 100.0), ("mcp", 100.0), ("mcp", 100.0), ("mcp", None), ("search", 0.0),
              ("os", None)]
    overall = aggregate(scored)
    assert overall.domains == {"mcp": 100.0, "search": 0.0}
    assert overall.counts == {"mcp": 3, "search": 1}
    assert overall.failed == {"mcp": 1, "search": 0, "os": 1}
    assert overall.macro == 50.0
    assert overall.pooled == 75.0
    assert not overall.complete
    row = overall.row()
    assert row["MCP"] == 100.0 and row["OS"] is None
    assert row["overall_macro"] == 50.0 and row["overall_pooled"] == 75.0
    nothing = aggregate([("web", None)])
    assert nothing.macro is None and nothing.pooled is None and nothing.failed == {"web": 1}


def test_published_rows_give_their_overall_as_the_macro_mean() -> None:
    within = [name for name in PUBLISHED
              if abs(published_overall(name)[0] - published_overall(name)[1]) <= 0.005]
    assert len(PUBLISHED) == 14 and len(within) == 13
    assert set(PUBLISHED) - set(within) == {"Qwen-AgentWorld-397B-A17B"}
    recomputed, published = published_overall("Qwen-AgentWorld-397B-A17B")
    assert round(recomputed, 2) == 58.76 and published == 58.71  # a slip in the source


def test_published_rows_reproduced_through_aggregate() -> None:
    # Each published domain score fed as one sample: aggregate's macro is the recomputed one.
    for name, row in PUBLISHED.items():
        overall = aggregate(zip(DOMAINS, row[:7], strict=True))
        assert overall.complete
        assert overall.macro == pytest.approx(published_overall(name)[0], abs=1e-9)
    gpt = aggregate(zip(DOMAINS, PUBLISHED["GPT-5.4"][:7], strict=True))
    assert round(gpt.macro, 2) == 58.25
    assert len(AXES) == 5


# Per-sample totals (mean axis, 1..5) and failed samples of a small judged run.
TOTALS = {"mcp": [5.0, 3.0, None], "search": [1.0, 2.0, 2.0, 4.0], "os": [None, None],
          "terminal": [4.2, 3.4]}


def test_pooled_is_the_mean_over_valid_samples() -> None:
    overall = aggregate((d, None if t is None else normalize(t))
                        for d, totals in TOTALS.items() for t in totals)
    valid = [t for totals in TOTALS.values() for t in totals if t is not None]
    assert overall.pooled == pytest.approx(normalize(sum(valid) / len(valid)))
    assert overall.pooled == pytest.approx(51.875)  # (5+3+1+2+2+4+4.2+3.4) / 8 = 3.075
    assert overall.macro == pytest.approx((75.0 + 31.25 + 70.0) / 3)  # mcp, search, terminal
    assert overall.failed == {"mcp": 1, "search": 0, "terminal": 0, "os": 2}


def test_pooled_is_what_the_released_eval_prints(official_dir: Path) -> None:
    jobs = [{"task": domain, "failed": 1.0} if total is None else
            {"task": domain, "failed": 0.0, "total_score": total}
            for domain, totals in TOTALS.items() for total in totals]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        released_eval(official_dir).aggregate_scores(jobs)
    theirs = float(re.search(r"^Overall: ([\d.]+)$", printed.getvalue(), re.MULTILINE)[1])
    ours = aggregate((d, None if t is None else normalize(t))
                     for d, totals in TOTALS.items() for t in totals)
    assert round(ours.pooled, 2) == theirs == 51.88
    assert "Valid: 8, Failed: 3" in printed.getvalue()
    assert round(ours.macro, 2) == 58.75 != theirs  # the published table's rule differs
